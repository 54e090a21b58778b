import type { PlatformConnector, SourceResponse } from '../runtime/connector.ts';
import { lazyPull, lazyPush } from '../runtime/lazyConnector.ts';
import { linearRateLimitDelay, linearUnauthorized } from './linear/graphql.ts';
import { validateLinearConfig } from './linear/scope.ts';

/** Linear's public API (GraphQL at `/graphql`); `CNS_LINEAR_API_URL` replaces it. */
export const LINEAR_API_BASE = 'https://api.linear.app';

/**
 * Linear issues of a team or project (spec 4.7): one JSON node per issue at
 * `issues/<IDENTIFIER>.json` and its description at `issues/<IDENTIFIER>.md`.
 */
export const linearConnector: PlatformConnector = {
  spec: {
    provider: 'linear',
    display_name: 'Linear',
    description:
      'Issues of a Linear team or project: one JSON node per issue (issues/<IDENTIFIER>.json) and its description as Markdown (issues/<IDENTIFIER>.md). Title, description, state and assignee edits go back to Linear.',
    auth: {
      type: 'oauth',
      description: 'OAuth (read and write scopes), or a personal API key from Linear\'s Settings → Security & access.',
      scopes: ['read', 'write'],
      personal_token: true,
    },
    capabilities: { pull: true, push: { create: false, update: true, delete: false }, incremental: true, webhooks: false },
    sync_modes: ['manual', 'interval'],
    default_sync_mode: 'manual',
    directions: ['pull', 'push'],
    config_fields: [
      { name: 'path', type: 'path', required: true, description: 'Project folder the issues are written to.' },
      { name: 'team_id', type: 'string', required: false, description: 'Id of the team whose issues are synced (or give team_key).' },
      { name: 'team_key', type: 'string', required: false, description: 'Key of the team whose issues are synced, such as ENG (or give team_id).' },
      { name: 'project_id', type: 'string', required: false, description: 'Only the issues of this project (alone, or within the team).' },
    ],
  },

  // Personal API keys go bare; OAuth access tokens as Bearer (Linear refuses a key sent as Bearer).
  authHeaders: (credential) => ({ authorization: credential.kind === 'oauth' ? `Bearer ${credential.accessToken}` : credential.accessToken }),
  rateLimitDelay: linearRateLimitDelay,
  isUnauthorized: linearUnauthorized,
  validateConfig: validateLinearConfig,
  pull: lazyPull(() => import('./linear/pull.ts'), (m) => m.pullLinear),
  push: lazyPush(() => import('./linear/push.ts'), (m) => m.pushLinear),
};
