import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, query } from '../api/client.ts';
import type { NodeDiff, VersionRecord } from '../api/types.ts';
import { actorOf } from './actor.ts';
import { ActorBadge } from './ActorBadge.tsx';
import { DiffView } from './DiffView.tsx';

interface Props {
  projectId: string;
  path: string;
  /** The node's current version: the list reloads when it changes (a save, a live change). */
  version: number;
  onRolledBack: () => void;
}

/** The versions of one node (who, what, when), a diff between any two, and rollback with confirmation. */
export function HistoryPanel({ projectId, path, version, onRolledBack }: Props) {
  const [versions, setVersions] = useState<VersionRecord[] | null>(null);
  const [from, setFrom] = useState(0);
  const [to, setTo] = useState(0);
  const [diff, setDiff] = useState<{ diff: NodeDiff; v1: number; v2: number } | null>(null);
  const [confirming, setConfirming] = useState<number | null>(null);
  const [message, setMessage] = useState<string | null>(null);

  useEffect(() => {
    api<{ versions: VersionRecord[] }>('GET', `/content/${projectId}/versions${query({ path, limit: 200 })}`)
      .then((r) => {
        setVersions(r.versions);
        setTo(r.versions[0]?.version ?? 0);
        setFrom(r.versions[1]?.version ?? r.versions[0]?.version ?? 0);
      })
      .catch((err: Error) => setMessage(err.message));
  }, [projectId, path, version]);

  const showDiff = async (e: Event) => {
    e.preventDefault();
    try {
      setDiff({ diff: await api<NodeDiff>('GET', `/content/${projectId}/diff${query({ path, v1: from, v2: to })}`), v1: from, v2: to });
    } catch (err) {
      setMessage((err as Error).message);
    }
  };

  const rollback = async (target: number) => {
    try {
      const r = await api<{ version: number; changed: boolean }>('POST', `/content/${projectId}/rollback`, { path, version: target });
      setMessage(r.changed ? `Rolled back to version ${target}: now version ${r.version}.` : `Version ${target} is already the current content.`);
      setConfirming(null);
      onRolledBack();
    } catch (err) {
      setMessage(err instanceof ApiError ? err.message : String(err));
    }
  };

  if (!versions) return <p aria-busy="true">{message ?? 'Loading history…'}</p>;
  return (
    <section class="history" aria-label="History">
      {message && <p role="status">{message}</p>}
      <ol class="versions">
        {versions.map((v) => {
          const actor = actorOf(v);
          return (
            <li key={v.version} class={`actor-${actor.kind}`}>
              <strong>v{v.version}</strong>{' '}
              <ActorBadge actor_type={v.actor_type} author={v.author} authored_by={v.authored_by} />{' '}
              <span class="muted">{v.operation}</span> <span>{v.message ?? ''}</span>{' '}
              <time dateTime={v.created_at}>{new Date(v.created_at).toLocaleString()}</time>
              {v.version !== versions[0]!.version &&
                (confirming === v.version ? (
                  <span class="confirm" role="group" aria-label={`Confirm rollback to version ${v.version}`}>
                    {' '}Roll back {path} to version {v.version}?{' '}
                    <button type="button" class="danger" onClick={() => void rollback(v.version)}>Confirm rollback</button>{' '}
                    <button type="button" onClick={() => setConfirming(null)}>Cancel</button>
                  </span>
                ) : (
                  <button type="button" class="link" onClick={() => setConfirming(v.version)} aria-label={`Roll back to version ${v.version}`}>
                    Roll back
                  </button>
                ))}
            </li>
          );
        })}
      </ol>
      {versions.length > 1 && (
        <form class="inline" onSubmit={showDiff} aria-label="Compare versions">
          <label>
            From version
            <select value={from} onChange={(e) => setFrom(Number(e.currentTarget.value))}>
              {versions.map((v) => <option key={v.version} value={v.version}>v{v.version}</option>)}
            </select>
          </label>
          <label>
            To version
            <select value={to} onChange={(e) => setTo(Number(e.currentTarget.value))}>
              {versions.map((v) => <option key={v.version} value={v.version}>v{v.version}</option>)}
            </select>
          </label>
          <button type="submit">Show diff</button>
        </form>
      )}
      {diff && <DiffView {...diff} />}
    </section>
  );
}
