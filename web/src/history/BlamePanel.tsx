import { useEffect, useState } from 'preact/hooks';
import { api, query } from '../api/client.ts';
import type { BlameAnswer, NodeDiff } from '../api/types.ts';
import { actorOf } from './actor.ts';
import { ActorBadge } from './ActorBadge.tsx';
import { DiffView } from './DiffView.tsx';

interface Props {
  projectId: string;
  path: string;
  /** The node's current version: the blame reloads when it changes. */
  version: number;
}

type Commit = BlameAnswer['commits'][number];

/** The blamed version's text as lines: the version's own content, as the store keeps it. */
function linesOf(v: { content?: unknown; content_text?: string; content_base64?: string }, type: string): string[] {
  let text: string;
  if (type === 'json') text = JSON.stringify(v.content, null, 2) + '\n';
  else if (v.content_text !== undefined) text = v.content_text;
  else text = new TextDecoder().decode(Uint8Array.from(atob(v.content_base64 ?? ''), (c) => c.charCodeAt(0)));
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Who wrote each line: a gutter beside the text naming, for each run of lines, the version that
 * last changed it and who made it (agents marked apart from people); a version opens its diff.
 */
export function BlamePanel({ projectId, path, version }: Props) {
  const [blame, setBlame] = useState<BlameAnswer | null>(null);
  const [lines, setLines] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [diff, setDiff] = useState<{ diff: NodeDiff; v1: number; v2: number } | null>(null);

  useEffect(() => {
    setBlame(null);
    setDiff(null);
    Promise.all([
      api<BlameAnswer>('GET', `/content/${projectId}/blame${query({ path })}`),
      api<{ content?: unknown; content_text?: string; content_base64?: string }>('GET', `/content/${projectId}/versions${query({ path, version })}`),
    ])
      .then(([b, v]) => {
        setLines(linesOf(v, b.type));
        setBlame(b);
      })
      .catch((err: Error) => setError(err.message));
  }, [projectId, path, version]);

  const openDiff = async (v: number) => {
    try {
      setDiff({ diff: await api<NodeDiff>('GET', `/content/${projectId}/diff${query({ path, v1: Math.max(0, v - 1), v2: v })}`), v1: v - 1, v2: v });
    } catch (err) {
      setError((err as Error).message);
    }
  };

  if (error) return <p role="alert" class="error">{error}</p>;
  if (!blame) return <p aria-busy="true">Loading blame…</p>;
  const commits = new Map(blame.commits.map((c) => [c.commit_id, c]));
  const aligned = lines.length === blame.line_count;
  return (
    <section class="blame" aria-label="Blame">
      {blame.line_count === 0 && <p>The file is empty.</p>}
      {aligned ? (
        <table class="blame-lines">
          <tbody>
            {blame.ranges.map((r) => {
              const c = commits.get(r.commit_id)!;
              const kind = actorOf({ actor_type: c.actor_type ?? '', author: c.author }).kind;
              return lines.slice(r.start_line - 1, r.end_line).map((text, i) => (
                <tr key={r.start_line + i} class={`actor-${kind}${i === 0 ? ' run-start' : ''}`} data-line={r.start_line + i}>
                  <td class="gutter">{i === 0 && <Gutter commit={c} onOpen={openDiff} />}</td>
                  <td class="line-no">{r.start_line + i}</td>
                  <td class="line-text">
                    <code>{text || ' '}</code>
                  </td>
                </tr>
              ));
            })}
          </tbody>
        </table>
      ) : (
        <KeyTable blame={blame} commits={commits} onOpen={openDiff} />
      )}
      {diff && <DiffView {...diff} />}
    </section>
  );
}

function Gutter({ commit, onOpen }: { commit: Commit; onOpen: (v: number) => void }) {
  const label = `${commit.version !== null ? `v${commit.version}` : `project v${commit.project_version ?? '?'}`}`;
  return (
    <span title={`${commit.message}\n${new Date(commit.created_at).toLocaleString()}`}>
      {commit.version !== null ? (
        <button type="button" class="link" onClick={() => onOpen(commit.version!)} aria-label={`Show the changes of version ${commit.version}`}>
          {label}
        </button>
      ) : (
        label
      )}{' '}
      <ActorBadge actor_type={commit.actor_type ?? ''} author={commit.author} />{' '}
      <time dateTime={commit.created_at}>{new Date(commit.created_at).toLocaleDateString()}</time>
    </span>
  );
}

/** JSON whose text is not the store's layout: each key path with its version instead of lines. */
function KeyTable({ blame, commits, onOpen }: { blame: BlameAnswer; commits: Map<string, Commit>; onOpen: (v: number) => void }) {
  if (!blame.keys) return <p>Blame is not available for this content.</p>;
  return (
    <table class="blame-keys">
      <thead>
        <tr>
          <th>Key</th>
          <th>Last changed</th>
        </tr>
      </thead>
      <tbody>
        {blame.keys.map((k) => (
          <tr key={k.pointer}>
            <td>
              <code>{k.pointer || '(document)'}</code>
            </td>
            <td>
              <Gutter commit={commits.get(k.commit_id)!} onOpen={onOpen} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
