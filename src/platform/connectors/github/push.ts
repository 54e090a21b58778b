import type { ConnectorContext, LocalChange, PushOutcome } from '../../runtime/connector.ts';
import { ProviderError } from '../../runtime/providerError.ts';
import { GithubApi } from './api.ts';
import { githubConfig, type GithubConfig } from './config.ts';
import { fileBytes, storablePath } from './files.ts';
import { ISSUES_FOLDER, PULLS_FOLDER } from './issues.ts';
import { newFileId, type FileMeta } from './treeDiff.ts';

type TreeEntry = { path: string; mode: string; type: 'blob'; sha: string | null };

interface Accepted {
  index: number;
  outcome: Extract<PushOutcome, { ok: true }>;
  entries: TreeEntry[];
}

/**
 * Sends files created, edited, moved or deleted here back to the branch as ONE commit with the
 * run's message (git data API: blobs, a tree on the head's tree, a commit, a fast-forward of the
 * branch). A change is refused when GitHub's copy changed since the last sync (the next pull
 * brings GitHub's version), and every change when the branch moved during the push.
 */
export async function pushGithub(ctx: ConnectorContext, changes: LocalChange[]): Promise<PushOutcome[]> {
  const cfg = githubConfig(ctx.config);
  const api = new GithubApi(ctx.http, ctx.apiBase, cfg.owner, cfg.repo);
  const branch = cfg.branch ?? (await api.defaultBranch());
  const head = await api.branchHead(branch);
  if (!head) throw new ProviderError('github', 404, `${cfg.owner}/${cfg.repo} has no branch "${branch}"`);
  const folder = await api.subtree(head.tree, cfg.repoPath);
  const current = new Map((folder ? await api.files(folder) : []).map((f) => [f.path, f]));

  const outcomes: PushOutcome[] = [];
  const accepted: Accepted[] = [];
  const usedIds = new Set([...ctx.known.all()].map((k) => k.sourceId));
  const refuse = (message: string) => outcomes.push({ ok: false, message });
  for (const [index, change] of changes.entries()) {
    if (change.kind !== 'create' && change.known.meta.kind !== 'file') {
      refuse('issues and pull requests are read-only here: change them on GitHub');
      continue;
    }
    const target = change.kind === 'delete' ? null : change.path;
    if (target !== null && !writable(target, cfg)) {
      refuse(`"${target}" cannot be written to the repository${reservedFolder(target) ? ` (${reservedFolder(target)}/ holds the synced issues)` : ''}`);
      continue;
    }
    const old = change.kind === 'create' ? null : (change.known.meta as unknown as FileMeta);
    if (old) {
      const there = current.get(old.path);
      if (there && there.sha !== old.sha) {
        refuse(`${old.path} changed on GitHub since the last sync: the next pull brings GitHub's version`);
        continue;
      }
      if (!there && change.kind === 'update') {
        refuse(`${old.path} was deleted or moved on GitHub since the last sync: the next pull brings that change`);
        continue;
      }
    }
    if (target !== null && target !== old?.path && current.has(target)) {
      refuse(`${target} already exists on GitHub: the next pull brings it`);
      continue;
    }
    const entries: TreeEntry[] = [];
    if (old && current.has(old.path) && target !== old.path) entries.push({ path: repoPath(cfg, old.path), mode: old.mode, type: 'blob', sha: null });
    if (change.kind === 'delete') {
      accepted.push({ index, entries, outcome: { ok: true, sourceId: change.sourceId, sourceVersion: '' } });
      outcomes.push(accepted.at(-1)!.outcome);
      continue;
    }
    const sha = await api.createBlob(fileBytes(change.type, change.content));
    const mode = old?.mode ?? '100644';
    entries.push({ path: repoPath(cfg, change.path), mode, type: 'blob', sha });
    const sourceId = change.kind === 'create' ? newFileId(change.path, sha, usedIds) : change.sourceId;
    const meta: FileMeta = { kind: 'file', path: change.path, sha, mode };
    accepted.push({ index, entries, outcome: { ok: true, sourceId, sourceVersion: sha, path: change.path, meta: { ...meta } } });
    outcomes.push(accepted.at(-1)!.outcome);
  }

  const entries = accepted.flatMap((a) => a.entries);
  if (entries.length === 0) return outcomes;
  const tree = await api.createTree(head.tree, entries);
  const commit = await api.createCommit(ctx.runMessage, tree, head.commit);
  if (!(await api.updateBranch(branch, commit))) {
    const message = `the branch ${branch} moved on GitHub during the push (not a fast-forward): nothing was written; the next pull brings GitHub's change`;
    for (const a of accepted) outcomes[a.index] = { ok: false, message };
  }
  return outcomes;
}

function repoPath(cfg: GithubConfig, path: string): string {
  return cfg.repoPath ? `${cfg.repoPath}/${path}` : path;
}

function reservedFolder(path: string): string | null {
  if (path.startsWith(`${ISSUES_FOLDER}/`)) return ISSUES_FOLDER;
  if (path.startsWith(`${PULLS_FOLDER}/`)) return PULLS_FOLDER;
  return null;
}

function writable(path: string, cfg: GithubConfig): boolean {
  const reserved = reservedFolder(path);
  if ((reserved === ISSUES_FOLDER && cfg.includeIssues) || (reserved === PULLS_FOLDER && cfg.includePulls)) return false;
  return storablePath(path);
}
