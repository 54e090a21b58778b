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
  /** The two versions the address compares; null: none. */
  diff: [number, number] | null;
  /** Compare two versions: the address follows, then `diff`. */
  onDiff: (diff: [number, number]) => void;
  /** Show the node as it was at a version (its own address). */
  onView?: (version: number) => void;
  onRolledBack: () => void;
}

/** The versions of one node (who, what, when), a diff between any two, and rollback with confirmation. */
export function HistoryPanel({ projectId, path, version, diff: wanted, onDiff, onView, onRolledBack }: Props) {
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
        if (wanted) return;
        setTo(r.versions[0]?.version ?? 0);
        setFrom(r.versions[1]?.version ?? r.versions[0]?.version ?? 0);
      })
      .catch((err: Error) => setMessage(err.message));
  }, [projectId, path, version]);

  // The comparison the address names (a submit, a link, back/forward).
  useEffect(() => {
    if (!wanted) {
      setDiff(null);
      return;
    }
    const [v1, v2] = wanted;
    setFrom(v1);
    setTo(v2);
    api<NodeDiff>('GET', `/content/${projectId}/diff${query({ path, v1, v2 })}`).then(
      (d) => setDiff({ diff: d, v1, v2 }),
      (err: Error) => setMessage(err.message),
    );
  }, [projectId, path, wanted?.[0], wanted?.[1]]);

  const showDiff = (e: Event) => {
    e.preventDefault();
    onDiff([from, to]);
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
              {onView && v.version !== versions[0]!.version && (
                <button type="button" class="link" onClick={() => onView(v.version)} aria-label={`View version ${v.version}`}>
                  View
                </button>
              )}
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
