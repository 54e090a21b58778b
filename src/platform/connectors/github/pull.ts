import type { ConnectorContext, PullPage, SourceChange } from '../../runtime/connector.ts';
import { ProviderError } from '../../runtime/providerError.ts';
import { GithubApi, type TreeFile } from './api.ts';
import { githubConfig, type GithubConfig } from './config.ts';
import { parseGithubCursor, serializeGithubCursor, type GithubCursor } from './cursor.ts';
import { fileNode, storablePath } from './files.ts';
import { isPull, issueItem, ISSUES_FOLDER, PULLS_FOLDER } from './issues.ts';
import { knownFiles, planTree, type FileMeta } from './treeDiff.ts';

/** Changes per pull page (one commit each). */
const PAGE_ITEMS = 50;
/** Larger files are not synced: their base64 answer would pass the runtime's 64 MiB answer limit. */
export const MAX_FILE_BYTES = 40 * 1024 * 1024;
/** GitHub's `since` is read with a second of overlap; issues seen again with the same `updated_at` are skipped. */
const ISSUES_OVERLAP_MS = 1000;

/**
 * A GitHub pull: the files of a folder of a branch (git data API: the branch head, its tree,
 * and only the blobs whose sha differs from what the sync holds), then, optionally, issues and
 * pull requests updated since the cursor. An unchanged branch head costs one call.
 */
export async function* pullGithub(ctx: ConnectorContext, cursor: string | null): AsyncGenerator<PullPage> {
  const cfg = githubConfig(ctx.config);
  const api = new GithubApi(ctx.http, ctx.apiBase, cfg.owner, cfg.repo);
  const prev = parseGithubCursor(cursor);
  // Pages before the last carry the cursor the run started from: a run cut short compares again,
  // and skips what it wrote already (the known blob shas match).
  const startCursor = prev ? serializeGithubCursor(prev) : null;

  let branch = cfg.branch ?? prev?.branch ?? (await api.defaultBranch());
  let head = await api.branchHead(branch);
  if (!head && !cfg.branch && prev) {
    // The default branch was renamed or changed since the last run.
    branch = await api.defaultBranch();
    head = await api.branchHead(branch);
  }
  if (!head) throw new ProviderError('github', 404, `${cfg.owner}/${cfg.repo} has no branch "${branch}"`);

  const kinds = `${cfg.includeIssues ? 'issues' : ''}${cfg.includePulls ? '+pulls' : ''}`;
  const next: GithubCursor = { v: 1, branch, repoPath: cfg.repoPath, commit: head.commit, tree: prev?.tree ?? null, issues: null, issueKinds: kinds };
  const sameFolder = prev?.branch === branch && prev.repoPath === cfg.repoPath;

  let batch: SourceChange[] = [];
  const take = (changes: SourceChange[]): PullPage | null => {
    batch.push(...changes);
    if (batch.length < PAGE_ITEMS) return null;
    const page = { changes: batch, cursor: startCursor };
    batch = [];
    return page;
  };

  if (!sameFolder || prev?.commit !== head.commit) {
    const known = knownFiles(ctx.known);
    const tree = await api.subtree(head.tree, cfg.repoPath);
    if (tree === null && known.length === 0 && cfg.repoPath !== '') {
      throw new ProviderError('github', 404, `${cfg.owner}/${cfg.repo} has no folder "${cfg.repoPath}" on branch ${branch}`);
    }
    // Another commit that left the synced folder as it was: nothing to compare.
    if (!sameFolder || tree !== prev?.tree || known.length === 0) {
      const files = tree === null ? [] : (await api.files(tree)).filter((f) => synced(f, cfg));
      const plan = planTree(files, known);
      const ready = take(plan.deletes.map((sourceId) => ({ kind: 'delete', sourceId })));
      if (ready) yield ready;
      for (const { sourceId, file } of plan.upserts) {
        const node = fileNode(file.path, await api.blob(file.sha));
        const meta: FileMeta = { kind: 'file', path: file.path, sha: file.sha, mode: file.mode };
        const page = take([{ kind: 'upsert', item: { sourceId, path: file.path, ...node, sourceVersion: file.sha, meta: { ...meta } } }]);
        if (page) yield page;
      }
    }
    next.tree = tree;
  }

  // Issues and pull requests no longer wanted leave the project.
  const unwanted = [...ctx.known.all()].filter(
    (k) => k.meta.kind === 'issue' && (k.path.startsWith(`${PULLS_FOLDER}/`) ? !cfg.includePulls : !cfg.includeIssues),
  );
  const ready = take(unwanted.map((k) => ({ kind: 'delete', sourceId: k.sourceId })));
  if (ready) yield ready;

  if (cfg.includeIssues || cfg.includePulls) {
    const since = prev?.issueKinds === kinds && prev.issues ? new Date(Date.parse(prev.issues) - ISSUES_OVERLAP_MS).toISOString().replace(/\.\d{3}Z$/, 'Z') : null;
    next.issues = prev?.issueKinds === kinds ? prev.issues : null;
    for await (const issues of api.issues(since)) {
      const changes: SourceChange[] = [];
      for (const issue of issues) {
        if (!next.issues || Date.parse(issue.updated_at) > Date.parse(next.issues)) next.issues = issue.updated_at;
        if (isPull(issue) ? !cfg.includePulls : !cfg.includeIssues) continue;
        const item = issueItem(issue);
        const known = ctx.known.get(item.sourceId);
        if (known && known.sourceVersion === item.sourceVersion && known.path === item.path) continue;
        changes.push({ kind: 'upsert', item });
      }
      const page = take(changes);
      if (page) yield page;
    }
  }

  const after = serializeGithubCursor(next);
  if (batch.length || after !== startCursor) yield { changes: batch, cursor: after };
}

/**
 * Files the sync holds: not symbolic links or submodules (no node form), not names the content
 * store refuses, not over MAX_FILE_BYTES, not under the issue folders when those are synced.
 */
function synced(f: TreeFile, cfg: GithubConfig): boolean {
  if (f.mode === '120000' || f.mode === '160000' || f.size > MAX_FILE_BYTES || !storablePath(f.path)) return false;
  if (cfg.includeIssues && f.path.startsWith(`${ISSUES_FOLDER}/`)) return false;
  return !(cfg.includePulls && f.path.startsWith(`${PULLS_FOLDER}/`));
}
