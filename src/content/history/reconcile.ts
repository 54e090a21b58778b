import { CommitApplier } from '../commitApplier.ts';
import type { CommitData } from '../git/commitObject.ts';
import { GitFailed, GitMissing } from '../git/gitCli.ts';
import { Notes } from '../git/notes.ts';
import type { ExpectedPush } from '../pushExpectations.ts';
import { formatNote, parseMessage, parseNote, type ParsedMessage, type ParsedNote } from '../trailers.ts';
import type { Actor, ReconcileOptions, ReconcileReport, ReindexReport } from '../types.ts';
import { applyPlan } from './applyPlan.ts';
import { GitHistory } from './gitHistory.ts';
import type { History, ReconcileDeps } from './historyReader.ts';
import { IsoHistory } from './isoHistory.ts';
import { compare, snapshot } from './reindexReport.ts';

export type { ReconcileDeps } from './historyReader.ts';

/*
 * Reconciling the index with pushed history: the commits on main beyond the last indexed one
 * (pushed by git clients) are indexed from their trailers, their notes, or a plan of their
 * tree diff (see README, "Indexing pushed history").
 */

/** Commits applied per SQLite transaction while replaying. */
const GROUP = 500;
/** Commits read from git per round (one rev-list for the chain, then per round one cat-file and one diff-tree). */
const CHUNK = 2000;

/**
 * Indexes the commits on `main` after the last indexed one. Follows first parents back from the
 * tip; if the last indexed commit is not among them (history rewritten) the project is rebuilt.
 * Commits of a push registered with `pushes` are indexed with that push's actor, time and author
 * and the push is recorded in the audit log; other commits without trailers take `options`.
 * Must run under the project's write lock.
 */
export async function reconcile(deps: ReconcileDeps, options: ReconcileOptions = {}): Promise<ReconcileReport> {
  return withHistory(options.followed ? { ...deps, gitBinary: null } : deps, async (history) => {
    const { index, repo, projectId } = deps;
    const tip = repo.readMain();
    const st = index.indexState(projectId);
    const last = st?.headCommit ?? null;
    if (tip === last) return { projectId, indexedCommits: 0, rebuilt: false, head: tip };
    const { ids, reached } = await history.chain(tip, last);
    if (!reached) {
      deps.logger?.warn({ projectId, last, tip }, 'main no longer contains the last indexed commit: rebuilding the index');
      deps.db.transaction(() => {
      deps.fence?.();
      index.clearProject(projectId);
    }).immediate();
      const full = await history.chain(tip, null);
      await replay(deps, history, full.ids, 0, options);
      return { projectId, indexedCommits: full.ids.length, rebuilt: true, head: tip };
    }
    await replay(deps, history, ids, st?.projectVersion ?? 0, options);
    return { projectId, indexedCommits: ids.length, rebuilt: false, head: tip };
  });
}

/** Rebuilds a project's index from git alone and reports how it differs from the one before. */
export async function rebuildIndex(deps: ReconcileDeps, options: ReconcileOptions = {}): Promise<ReindexReport> {
  const { index, repo, projectId } = deps;
  const before = snapshot(index, projectId);
  const commits = await withHistory(deps, async (history) => {
    deps.db.transaction(() => {
      deps.fence?.();
      index.clearProject(projectId);
    }).immediate();
    const { ids } = await history.chain(repo.readMain(), null);
    await replay(deps, history, ids, 0, options);
    return ids.length;
  });
  const after = snapshot(index, projectId);
  return { projectId, commits, nodes: after.nodes.size, versions: after.versionCount, ...compare(before, after) };
}

/**
 * Runs `work` reading history with the system git, or with isomorphic-git when there is no git
 * (or it failed: `work` then runs again from the index state it left, which is consistent).
 */
async function withHistory<T>(deps: ReconcileDeps, work: (h: History) => Promise<T>): Promise<T> {
  if (deps.gitBinary) {
    try {
      return await work(new GitHistory(deps, deps.gitBinary));
    } catch (e) {
      if (e instanceof GitMissing) deps.onGitMissing?.();
      else if (e instanceof GitFailed) deps.logger?.warn({ err: e, projectId: deps.projectId }, 'reading history with git failed: using isomorphic-git');
      else throw e;
    }
  }
  return work(new IsoHistory(deps));
}

async function replay(deps: ReconcileDeps, history: History, ids: string[], startPv: number, options: ReconcileOptions): Promise<void> {
  const { db, index, projectId } = deps;
  let pv = startPv;
  const sinceRepack = index.indexState(projectId)?.commitsSinceRepack ?? 0;
  const pushes = pushSegments(deps, ids);
  const notes = new Notes(deps.repo);
  let lastTree: string | null = null;
  for (let start = 0; start < ids.length; start += CHUNK) {
    const commits = await history.commits(ids.slice(start, start + CHUNK));
    const parsed = commits.map((c) => parseMessage(c.commit.message));
    // Commits without trailers: indexed as their note says (exact rebuild), else planned from
    // their diff and then noted, in git before the index commits.
    const untrailered = commits.filter((_, k) => !parsed[k]).map((c) => c.id);
    const draft = await notes.prepare(untrailered);
    const noted = new Map<string, ParsedNote>();
    for (const id of untrailered) {
      const oid = draft.lookup(id);
      const note = oid ? parseNote((await deps.repo.readBlob(oid)).toString('utf8')) : null;
      if (note) noted.set(id, note);
    }
    const plans = await history.plans(commits.filter((c, k) => !parsed[k] && !noted.has(c.id)), (p) => index.rowAt(projectId, p, false)?.type);
    for (let g = 0; g < commits.length; g += GROUP) {
      const group = commits.slice(g, g + GROUP);
      // Folder ids by path, valid while commits change no folders (reset by applyPlan otherwise).
      const folderIds = new Map<string, string | null>();
      db.transaction(() => {
        deps.fence?.();
        group.forEach((c, k) => {
          const p: ParsedMessage | null = parsed[g + k]!;
          const note = noted.get(c.id);
          const push = pushes[start + g + k];
          const message = c.commit.message.trim();
          if (p || note) {
            const meta = p ? { actor: p.actor, message: p.message, time: isoTime(c.commit.time) } : { actor: note!.actor, message, time: note!.time };
            const applier = new CommitApplier(index, { projectId, projectVersion: ++pv, ...meta });
            folderIds.clear();
            for (const change of (p ?? note!).changes) applier.apply(change);
            applier.finalize(c.id);
            // A rebuild keeps the push rows it finds (they are not node rows): add only missing ones.
            if (note?.push && !index.pushRecorded(projectId, note.push.after)) {
              index.insertAudit(projectId, '', '', 'push', note.actor, { ref: 'refs/heads/main', ...note.push }, note.time);
            }
            if (push && push.after === c.id) deps.pushes?.forget(projectId, push.after);
            return;
          }
          const who = attribution(c.commit, push, options);
          const applier = new CommitApplier(index, { projectId, projectVersion: ++pv, message, ...who });
          applyPlan(index, projectId, applier, plans.get(c.id)!, folderIds);
          applier.finalize(c.id);
          const pushRecord = push && push.after === c.id ? { before: push.before, after: push.after, commits: push.commits } : null;
          if (pushRecord) {
            index.insertAudit(projectId, '', '', 'push', push!.actor, { ref: 'refs/heads/main', ...pushRecord }, push!.receivedAt);
            // Consumed with its versions and audit row, all or nothing (the row survives a crash).
            deps.pushes?.forget(projectId, pushRecord.after);
          }
          draft.add(c.id, formatNote({ actor: who.actor, time: who.time, push: pushRecord, changes: applier.changes() }));
        });
        index.setIndexState(projectId, { headCommit: group[group.length - 1]!.id, projectVersion: pv, commitsSinceRepack: sinceRepack + pv - startPv });
        // The notes reach git before the index commits: a crash in between re-indexes from them.
        draft.commit();
      }).immediate();
    }
    lastTree = commits[commits.length - 1]!.commit.tree;
  }
  if (lastTree) await history.refreshFolderHashes(lastTree);
}

/** For each commit of the chain, the registered push that brought it (if any). */
function pushSegments(deps: ReconcileDeps, ids: string[]): (ExpectedPush | undefined)[] {
  const out: (ExpectedPush | undefined)[] = new Array(ids.length);
  const pending = deps.pushes?.pending(deps.projectId) ?? [];
  if (pending.length === 0) return out;
  const pos = new Map(ids.map((id, i) => [id, i] as const));
  for (const p of pending) {
    const end = pos.get(p.after);
    if (end === undefined) continue;
    const b = p.before ? pos.get(p.before) : undefined;
    for (let i = b === undefined ? 0 : b + 1; i <= end; i++) out[i] ??= p;
  }
  return out;
}

/**
 * Actor and time of a commit without trailers. The actor is whoever pushed it; the author the
 * commit claims is kept beside it (`commitAuthor`) when asked and when it names someone else.
 */
function attribution(c: CommitData, push: ExpectedPush | undefined, o: ReconcileOptions): { actor: Actor; time: string } {
  const commitAuthor = c.authorEmail || c.authorName;
  const base = push?.actor ?? o.actor;
  const keep = push ? push.keepCommitAuthor : o.keepCommitAuthor === true;
  const claimed = keep && commitAuthor && commitAuthor !== base?.author ? { commitAuthor } : {};
  const actor: Actor = base ? { type: base.type, id: base.id, author: base.author, ...claimed } : { type: 'user', id: commitAuthor, author: commitAuthor };
  const at = push?.receivedAt ?? o.receivedAt;
  return { actor, time: at ?? isoTime(c.time) };
}

/** A git commit time (seconds) as ISO 8601. */
export function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}
