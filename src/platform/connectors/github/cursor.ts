/**
 * The cursor of a GitHub sync: the commit (and the synced folder's tree) last synced on the
 * branch (the default branch's name remembered, so an unchanged repository costs one call), and
 * the newest `updated_at` of the issues read, with which kinds were read.
 */
export interface GithubCursor {
  v: 1;
  branch: string;
  repoPath: string;
  commit: string | null;
  tree: string | null;
  issues: string | null;
  issueKinds: string;
}

export function parseGithubCursor(cursor: string | null): GithubCursor | null {
  if (!cursor) return null;
  try {
    const c = JSON.parse(cursor) as Partial<GithubCursor>;
    if (c.v !== 1 || typeof c.branch !== 'string') return null;
    const str = (v: unknown) => (typeof v === 'string' ? v : null);
    return { v: 1, branch: c.branch, repoPath: str(c.repoPath) ?? '', commit: str(c.commit), tree: str(c.tree), issues: str(c.issues), issueKinds: str(c.issueKinds) ?? '' };
  } catch {
    // An unreadable cursor means a full comparison, never a failed sync.
    return null;
  }
}

export function serializeGithubCursor(c: GithubCursor): string {
  return JSON.stringify(c);
}
