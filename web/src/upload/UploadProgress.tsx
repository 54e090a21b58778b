import { useEffect, useReducer } from 'preact/hooks';
import { formatSize } from '../tree/formatSize.ts';
import type { UploadList } from './uploadList.ts';

/** A progress bar per file being uploaded, and what became of each (done, or the error). */
export function UploadProgress({ uploads }: { uploads: UploadList }) {
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  useEffect(() => uploads.subscribe(() => rerender(undefined)), [uploads]);
  if (uploads.items.length === 0) return null;
  const finished = uploads.items.some((u) => u.state !== 'uploading');
  return (
    <section class="uploads" aria-label="Uploads">
      <ul>
        {uploads.items.map((u) => {
          const target = u.folder ? `${u.folder}/${u.name}` : u.name;
          return (
            <li key={u.key}>
              <span class="name">{target}</span>
              <progress max={u.total || 1} value={u.state === 'done' ? u.total || 1 : u.loaded} aria-label={`Upload of ${target}`} />
              {u.state === 'uploading' && <span class="muted">{formatSize(u.loaded)} of {formatSize(u.total)}</span>}
              {u.state === 'done' && <span class="ok">Uploaded</span>}
              {u.state === 'failed' && <span role="alert" class="error">Failed: {u.error}</span>}
            </li>
          );
        })}
      </ul>
      {finished && <button type="button" class="link" onClick={() => uploads.clearFinished()}>Clear finished uploads</button>}
    </section>
  );
}
