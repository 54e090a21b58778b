import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, query } from '../api/client.ts';
import { ActorBadge } from './ActorBadge.tsx';
import { ConfirmButton } from './ConfirmButton.tsx';
import type { Snapshot, SnapshotPage } from './projectTypes.ts';

const PAGE = 50;

interface Props {
  folderId: string;
  path: string;
  /** The folder's version or a change beneath it: the list reloads. */
  revision: number;
  onRolledBack: () => void;
}

/**
 * A folder's snapshots (GET /nodes/{id}/snapshots): each commit that changed something beneath
 * it, newest first; the folder rolled back to one (POST /nodes/{id}/rollback-snapshot/{snapshot})
 * after a confirmation, as one new commit. Snapshots are the commits themselves: there is
 * nothing to create by hand.
 */
export function SnapshotsPanel({ folderId, path, revision, onRolledBack }: Props) {
  const [snapshots, setSnapshots] = useState<Snapshot[] | null>(null);
  const [total, setTotal] = useState(0);
  const [message, setMessage] = useState<{ text: string; failed: boolean } | null>(null);

  const load = async (before?: number) => {
    try {
      const page = await api<SnapshotPage>('GET', `/nodes/${folderId}/snapshots${query({ limit: PAGE, before })}`);
      setSnapshots((had) => (before && had ? [...had, ...page.snapshots] : page.snapshots));
      setTotal(page.total);
    } catch (err) {
      setMessage({ text: (err as Error).message, failed: true });
    }
  };
  useEffect(() => void load(), [folderId, revision]);

  const rollback = async (s: Snapshot) => {
    try {
      const r = await api<{ changed: boolean; project_version: number | null }>('POST', `/nodes/${folderId}/rollback-snapshot/${s.snapshot_id}`);
      setMessage({
        text: r.changed ? `${label(path)} rolled back to the snapshot of version ${s.project_version}: now project version ${r.project_version}.` : `${label(path)} already is as it was then.`,
        failed: false,
      });
      onRolledBack();
      await load();
    } catch (err) {
      setMessage({ text: `Not rolled back: ${err instanceof ApiError ? err.message : String(err)}`, failed: true });
    }
  };

  if (!snapshots) return <p aria-busy="true">{message?.text ?? 'Loading snapshots…'}</p>;
  const last = snapshots[snapshots.length - 1];
  return (
    <section class="snapshots" aria-label="Snapshots">
      <p class="muted">Each change beneath {label(path)} is a snapshot of the folder; rolling back restores it as it was then, as one new version.</p>
      {message && (
        <p role={message.failed ? 'alert' : 'status'} class={message.failed ? 'error' : 'ok'}>
          {message.text}
        </p>
      )}
      {snapshots.length === 0 ? (
        <p class="muted">No snapshots yet: nothing beneath this folder has changed.</p>
      ) : (
        <ol class="versions">
          {snapshots.map((s, i) => (
            <li key={s.snapshot_id}>
              <strong>v{s.project_version}</strong> <ActorBadge actor_type={s.actor_type} author={s.author} /> <span>{s.message}</span>{' '}
              <time dateTime={s.created_at}>{new Date(s.created_at).toLocaleString()}</time>{' '}
              <span class="muted">
                {s.files_count} files, {s.changed_count} changed
              </span>
              {i > 0 && (
                <ConfirmButton
                  label={`Roll back ${label(path)} to the snapshot of version ${s.project_version}`}
                  text="Roll back"
                  question={`Return everything in ${label(path)} to its state at version ${s.project_version}?`}
                  confirm="Confirm snapshot rollback"
                  onConfirm={() => rollback(s)}
                />
              )}
            </li>
          ))}
        </ol>
      )}
      {last && snapshots.length < total && (
        <button type="button" onClick={() => void load(last.project_version)}>
          Load older snapshots
        </button>
      )}
    </section>
  );
}

const label = (path: string) => (path ? `/${path}` : 'the project');
