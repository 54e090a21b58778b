import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, query } from '../api/client.ts';
import { ActorBadge } from './ActorBadge.tsx';
import { ConfirmButton } from './ConfirmButton.tsx';
import type { ProjectCommit, ProjectCommitPage } from './projectTypes.ts';

const PAGE = 30;
/** Changed paths listed per commit; a commit of thousands says how many more it changed. */
const PATHS_SHOWN = 12;

/**
 * The project's history (GET /content/{id}/versions without a path): every commit, newest first,
 * with who made it, its message, its time and the paths it changed; the whole project rolled
 * back to one of them after a confirmation (POST /content/{id}/rollback with target_version).
 */
export function ProjectHistoryPanel({ projectId, revision }: { projectId: string; revision: number }) {
  const [commits, setCommits] = useState<ProjectCommit[] | null>(null);
  const [current, setCurrent] = useState(0);
  const [nextBefore, setNextBefore] = useState<number | null>(null);
  const [message, setMessage] = useState<{ text: string; failed: boolean } | null>(null);

  const load = async (before?: number) => {
    try {
      const page = await api<ProjectCommitPage>('GET', `/content/${projectId}/versions${query({ limit: PAGE, before })}`);
      setCommits((had) => (before && had ? [...had, ...page.commits] : page.commits));
      setCurrent(page.current_version);
      setNextBefore(page.next_before);
    } catch (err) {
      setMessage({ text: (err as Error).message, failed: true });
    }
  };
  useEffect(() => void load(), [projectId, revision]);

  const rollback = async (target: number) => {
    try {
      const r = await api<{ changed: boolean; project_version: number | null }>('POST', `/content/${projectId}/rollback`, { target_version: target });
      setMessage({
        text: r.changed ? `Project rolled back to version ${target}: now version ${r.project_version}.` : `The project already is as it was at version ${target}.`,
        failed: false,
      });
      await load();
    } catch (err) {
      setMessage({ text: `Not rolled back: ${err instanceof ApiError ? err.message : String(err)}`, failed: true });
    }
  };

  return (
    <section class="project-history" aria-label="Project history">
      <h2>Project history</h2>
      {message && (
        <p role={message.failed ? 'alert' : 'status'} class={message.failed ? 'error' : 'ok'}>
          {message.text}
        </p>
      )}
      {commits === null ? (
        <p aria-busy="true">Loading…</p>
      ) : commits.length === 0 ? (
        <p class="muted">No changes yet.</p>
      ) : (
        <ol class="versions commits">
          {commits.map((c) => (
            <li key={c.version}>
              <strong>v{c.version}</strong> <ActorBadge actor_type={c.actor_type} author={c.author} authored_by={c.authored_by} /> <span>{c.message ?? ''}</span>{' '}
              <time dateTime={c.created_at}>{new Date(c.created_at).toLocaleString()}</time>
              {c.version !== current && (
                <ConfirmButton
                  label={`Roll back the project to version ${c.version}`}
                  text="Roll back the project"
                  question={`Return every file of the project to its state at version ${c.version}? This adds a new version; no history is lost.`}
                  confirm="Confirm project rollback"
                  onConfirm={() => rollback(c.version)}
                />
              )}
              <ChangedPaths commit={c} />
            </li>
          ))}
        </ol>
      )}
      {nextBefore !== null && (
        <button type="button" onClick={() => void load(nextBefore)}>
          Load older changes
        </button>
      )}
    </section>
  );
}

function ChangedPaths({ commit }: { commit: ProjectCommit }) {
  const { changes } = commit;
  if (changes.length === 0) return null;
  return (
    <ul class="paths" aria-label={`Paths changed in version ${commit.version}`}>
      {changes.slice(0, PATHS_SHOWN).map((ch, i) => (
        <li key={i}>
          <span class="muted">{ch.action}</span>{' '}
          {ch.old_path && ch.old_path !== ch.path ? `${ch.old_path} → ${ch.path}` : ch.path}
        </li>
      ))}
      {changes.length > PATHS_SHOWN && <li class="muted">and {changes.length - PATHS_SHOWN} more</li>}
    </ul>
  );
}
