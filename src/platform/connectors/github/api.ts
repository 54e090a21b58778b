import type { SourceHttp } from '../../runtime/connector.ts';
import { ProviderError } from '../../runtime/providerError.ts';

/** GitHub's REST API; `CNS_GITHUB_API_URL` replaces it (GitHub Enterprise: `https://HOST/api/v3`). */
export const GITHUB_API_BASE = 'https://api.github.com';
export const GITHUB_API_VERSION = '2022-11-28';

/** One file of a tree, its path relative to the folder listed. */
export interface TreeFile {
  path: string;
  mode: string;
  sha: string;
  size: number;
}

interface TreeEntry {
  path: string;
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha: string;
  size?: number;
}

export interface Issue {
  id: number;
  number: number;
  title: string;
  state: string;
  body: string | null;
  html_url: string;
  user: { login: string } | null;
  labels: ({ name: string } | string)[];
  assignees: { login: string }[] | null;
  created_at: string;
  updated_at: string;
  closed_at: string | null;
  draft?: boolean;
  pull_request?: { merged_at?: string | null; html_url?: string };
}

/** The calls of GitHub's REST API the connector makes, for one repository. */
export class GithubApi {
  private readonly repoUrl: string;

  constructor(
    private readonly http: SourceHttp,
    private readonly apiBase: string,
    owner: string,
    repo: string,
  ) {
    this.repoUrl = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
  }

  async defaultBranch(): Promise<string> {
    return (await this.http.request({ url: this.repoUrl })).json<{ default_branch: string }>().default_branch;
  }

  /** The branch's head commit and its root tree; null when the branch does not exist (404). */
  async branchHead(branch: string): Promise<{ commit: string; tree: string } | null> {
    const res = await this.http.request({ url: `${this.repoUrl}/branches/${refPath(branch)}`, accept: [404] });
    if (res.status === 404) return null;
    const b = res.json<{ commit: { sha: string; commit: { tree: { sha: string } } } }>();
    return { commit: b.commit.sha, tree: b.commit.commit.tree.sha };
  }

  /** The tree at `folder` ('' the root) under the root tree `root`; null when there is no such folder. */
  async subtree(root: string, folder: string): Promise<string | null> {
    let sha = root;
    for (const name of folder.split('/').filter((s) => s !== '')) {
      const entry = (await this.tree(sha, false)).tree.find((e) => e.path === name && e.type === 'tree');
      if (!entry) return null;
      sha = entry.sha;
    }
    return sha;
  }

  /**
   * Every file under a tree. One recursive call; when GitHub truncates it (over 100,000 entries
   * or 7 MB), the tree is read one level at a time instead, each sub-tree recursively again.
   */
  async files(sha: string, prefix = ''): Promise<TreeFile[]> {
    const whole = await this.tree(sha, true);
    if (!whole.truncated) return whole.tree.filter((e) => e.type === 'blob').map((e) => file(e, prefix));
    const out: TreeFile[] = [];
    for (const e of (await this.tree(sha, false)).tree) {
      if (e.type === 'blob') out.push(file(e, prefix));
      else if (e.type === 'tree') out.push(...(await this.files(e.sha, `${prefix}${e.path}/`)));
    }
    return out;
  }

  private async tree(sha: string, recursive: boolean): Promise<{ tree: TreeEntry[]; truncated: boolean }> {
    const res = await this.http.request({ url: `${this.repoUrl}/git/trees/${sha}`, query: recursive ? { recursive: 1 } : undefined });
    return res.json<{ tree: TreeEntry[]; truncated: boolean }>();
  }

  async blob(sha: string): Promise<Buffer> {
    const b = (await this.http.request({ url: `${this.repoUrl}/git/blobs/${sha}` })).json<{ content: string; encoding: string }>();
    return b.encoding === 'base64' ? Buffer.from(b.content, 'base64') : Buffer.from(b.content, 'utf8');
  }

  /** Issues and pull requests updated at or after `since` (all when null), oldest update first, 100 per answer page. */
  async *issues(since: string | null): AsyncGenerator<Issue[]> {
    let url: string | null = `${this.repoUrl}/issues`;
    let query: Record<string, string | number> | undefined = { state: 'all', sort: 'updated', direction: 'asc', per_page: 100, ...(since ? { since } : {}) };
    while (url) {
      const res = await this.http.request({ url, query });
      yield res.json<Issue[]>();
      url = this.nextLink(res.headers.link);
      query = undefined;
    }
  }

  /** The `rel="next"` address of a Link header, only on the API's own origin (the token goes with it). */
  private nextLink(header: string | string[] | undefined): string | null {
    const value = Array.isArray(header) ? header.join(',') : header ?? '';
    const m = /<([^>]+)>\s*;\s*rel="?next"?/.exec(value);
    if (!m) return null;
    const next = new URL(m[1], this.apiBase);
    if (next.origin !== new URL(this.apiBase).origin) throw new ProviderError('github', null, `a Link header pointed outside ${new URL(this.apiBase).origin}`);
    return next.toString();
  }

  async createBlob(content: Buffer): Promise<string> {
    const res = await this.http.request({ method: 'POST', url: `${this.repoUrl}/git/blobs`, json: { content: content.toString('base64'), encoding: 'base64' } });
    return res.json<{ sha: string }>().sha;
  }

  async createTree(baseTree: string, entries: { path: string; mode: string; type: 'blob'; sha: string | null }[]): Promise<string> {
    const res = await this.http.request({ method: 'POST', url: `${this.repoUrl}/git/trees`, json: { base_tree: baseTree, tree: entries } });
    return res.json<{ sha: string }>().sha;
  }

  async createCommit(message: string, tree: string, parent: string): Promise<string> {
    const res = await this.http.request({ method: 'POST', url: `${this.repoUrl}/git/commits`, json: { message, tree, parents: [parent] } });
    return res.json<{ sha: string }>().sha;
  }

  /** Moves the branch to `commit` (fast-forward only); false when GitHub refuses (422: the branch moved meanwhile). */
  async updateBranch(branch: string, commit: string): Promise<boolean> {
    const res = await this.http.request({ method: 'PATCH', url: `${this.repoUrl}/git/refs/heads/${refPath(branch)}`, json: { sha: commit, force: false }, accept: [422] });
    return res.status !== 422;
  }
}

function file(e: TreeEntry, prefix: string): TreeFile {
  return { path: prefix + e.path, mode: e.mode, sha: e.sha, size: e.size ?? 0 };
}

/** A branch name in a URL path: its slashes stay (`feature/x`), everything else is encoded. */
function refPath(branch: string): string {
  return branch.split('/').map(encodeURIComponent).join('/');
}
