import type { PlatformConnector } from '../runtime/connector.ts';
import { lazyPull, lazyPush } from '../runtime/lazyConnector.ts';
import { GITHUB_API_VERSION } from './github/api.ts';
import { validateGithubConfig } from './github/config.ts';
import { githubRateLimitDelay } from './github/rateLimit.ts';

export { GITHUB_API_BASE } from './github/api.ts';

/**
 * A GitHub repository's files under a folder of a branch (JSON, Markdown, other files), and
 * optionally its issues and pull requests as Markdown with front matter (spec 4.7). Files edited
 * here go back as one commit per run.
 */
export const githubConnector: PlatformConnector = {
  spec: {
    provider: 'github',
    display_name: 'GitHub',
    description:
      'Files of a repository folder on a branch (.json as JSON, .md as Markdown, others as files; symbolic links, submodules and files over 40 MiB are left out), and optionally issues (_issues/<number>.md) and pull requests (_pulls/<number>.md) as Markdown with front matter. Files created, edited, moved or deleted here go back as one commit per run, with the run\'s message.',
    auth: {
      type: 'oauth',
      description: 'OAuth (a GitHub OAuth app), or a personal access token with the Contents permission (read and write to push; Issues and Pull requests read for those).',
      scopes: ['repo', 'read:user'],
      personal_token: true,
    },
    // Webhook mode: a repository webhook (push events) posting to the sync's webhook_url, signed with its secret.
    capabilities: { pull: true, push: { create: true, update: true, delete: true }, incremental: true, webhooks: true },
    sync_modes: ['manual', 'interval', 'webhook'],
    default_sync_mode: 'manual',
    directions: ['pull', 'push'],
    config_fields: [
      { name: 'path', type: 'path', required: true, description: 'Project folder the repository files are written to.' },
      { name: 'owner', type: 'string', required: true, description: 'User or organization owning the repository.' },
      { name: 'repo', type: 'string', required: true, description: 'Repository name.' },
      { name: 'branch', type: 'string', required: false, description: 'Branch to sync (default: the repository\'s default branch).' },
      { name: 'repo_path', type: 'string', required: false, description: 'Folder of the repository to sync (default: the whole repository).' },
      { name: 'include_issues', type: 'boolean', required: false, description: 'Also sync issues, read-only, to _issues/<number>.md.' },
      { name: 'include_pulls', type: 'boolean', required: false, description: 'Also sync pull requests, read-only, to _pulls/<number>.md.' },
    ],
  },

  authHeaders: (credential) => ({
    authorization: `Bearer ${credential.accessToken}`,
    accept: 'application/vnd.github+json',
    'x-github-api-version': GITHUB_API_VERSION,
  }),
  rateLimitDelay: githubRateLimitDelay,
  validateConfig: validateGithubConfig,
  pull: lazyPull(() => import('./github/pull.ts'), (m) => m.pullGithub),
  push: lazyPush(() => import('./github/push.ts'), (m) => m.pushGithub),
};
