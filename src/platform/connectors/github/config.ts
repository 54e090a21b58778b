import { invalidField } from '../../../errors/domainError.ts';
import type { SyncConfig } from '../../runtime/connector.ts';

export interface GithubConfig {
  owner: string;
  repo: string;
  /** null: the repository's default branch. */
  branch: string | null;
  /** The repository folder synced, '' for the whole repository; no leading or trailing slash. */
  repoPath: string;
  includeIssues: boolean;
  includePulls: boolean;
}

/** GitHub's own rules for owner and repository names. */
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
const REPO = /^[A-Za-z0-9._-]{1,100}$/;

const flag = (v: unknown) => v === true || v === 'true';
const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');

export function githubConfig(config: SyncConfig): GithubConfig {
  return {
    owner: text(config.owner),
    repo: text(config.repo).replace(/\.git$/, ''),
    branch: text(config.branch) || null,
    repoPath: text(config.repo_path).replace(/^\/+|\/+$/g, ''),
    includeIssues: flag(config.include_issues),
    includePulls: flag(config.include_pulls),
  };
}

export function validateGithubConfig(config: SyncConfig): void {
  const c = githubConfig(config);
  if (!OWNER.test(c.owner)) throw invalidField('owner', 'owner is the GitHub user or organization that owns the repository');
  if (!REPO.test(c.repo) || c.repo === '.' || c.repo === '..') throw invalidField('repo', 'repo is the repository name (letters, digits, ., - and _)');
  if (c.branch !== null && (/\.\.|[\s~^:?*[\\]|@\{/.test(c.branch) || c.branch.startsWith('/') || c.branch.endsWith('/'))) {
    throw invalidField('branch', 'branch is not a valid git branch name');
  }
  // eslint-disable-next-line no-control-regex
  if (c.repoPath.split('/').some((s) => s === '.' || s === '..') || /\/\/|[\u0000-\u001f]/.test(c.repoPath)) {
    throw invalidField('repo_path', 'repo_path is a folder of the repository, such as docs or content/posts');
  }
  for (const f of ['include_issues', 'include_pulls']) {
    const v = config[f];
    if (v !== undefined && v !== null && typeof v !== 'boolean' && v !== 'true' && v !== 'false') throw invalidField(f, `${f} is true or false`);
  }
}
