import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../api/client.ts';
import type { CatAnswer, VersionRecord } from '../api/types.ts';
import { MarkdownPreview } from '../editor/MarkdownPreview.tsx';
import { ActorBadge } from '../history/ActorBadge.tsx';

type VersionWithContent = VersionRecord & { content?: unknown; content_text?: string; content_base64?: string; size: number };

/** A file as it was at one version, read-only, with who made that version and a way back to the current one. */
export function VersionView({ projectId, node, version, onCurrent }: { projectId: string; node: CatAnswer; version: number; onCurrent: () => void }) {
  const [v, setV] = useState<VersionWithContent | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setV(null);
    setError(null);
    api<VersionWithContent>('GET', `/content/${projectId}/versions${query({ path: node.path, version })}`).then(setV, (err: Error) => setError(err.message));
  }, [projectId, node.path, version]);

  if (error) return <p role="alert" class="error">{error}</p>;
  if (!v) return <p aria-busy="true">Loading version {version}…</p>;
  return (
    <section class="version-view" aria-label={`Version ${version}`}>
      <p role="status" class="version-banner">
        Version {v.version} of {node.version}, by <ActorBadge actor_type={v.actor_type} author={v.author} authored_by={v.authored_by} /> on{' '}
        <time dateTime={v.created_at}>{new Date(v.created_at).toLocaleString()}</time>
        {v.message ? `: ${v.message}` : ''}.{' '}
        <button type="button" class="link" onClick={onCurrent}>Show the current version</button>
      </p>
      {node.type === 'markdown' ? (
        <MarkdownPreview source={v.content_text ?? String(v.content ?? '')} />
      ) : node.type === 'json' ? (
        <pre tabIndex={0} aria-label="JSON at this version">{JSON.stringify(v.content, null, 2)}</pre>
      ) : (
        <FileAtVersion base64={v.content_base64 ?? ''} size={v.size} />
      )}
    </section>
  );
}

function FileAtVersion({ base64, size }: { base64: string; size: number }) {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  if (bytes.subarray(0, 8000).includes(0)) return <p>Binary file, {size} bytes.</p>;
  return <pre tabIndex={0} aria-label="Text at this version">{new TextDecoder().decode(bytes)}</pre>;
}
