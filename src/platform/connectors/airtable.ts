import type { PlatformConnector } from '../runtime/connector.ts';
import { lazyPull, lazyPush } from '../runtime/lazyConnector.ts';
import { retryAfterMs } from '../runtime/sourceHttp.ts';
import { validateAirtableConfig } from './airtable/config.ts';

/** Airtable's public API (paths start with /v0); `CNS_AIRTABLE_API_URL` replaces it. */
export const AIRTABLE_API_BASE = 'https://api.airtable.com';

/** Airtable asks clients over its limit (5 requests/s per base) to wait 30 s before the next request. */
const AIRTABLE_PENALTY_MS = 30_000;

/** Airtable tables of a base (spec 4.7): one JSON node per record at `<table name>/<record id>.json`. */
export const airtableConnector: PlatformConnector = {
  spec: {
    provider: 'airtable',
    display_name: 'Airtable',
    description:
      'Tables of an Airtable base: one JSON node per record (<table name>/<record id>.json = {id, createdTime, fields}). Field edits and new rows go back to Airtable.',
    auth: {
      type: 'oauth',
      description: 'OAuth, or a personal access token with the data.records:read, data.records:write and schema.bases:read scopes and access to the base.',
      scopes: ['data.records:read', 'data.records:write', 'schema.bases:read'],
      personal_token: true,
    },
    capabilities: { pull: true, push: { create: true, update: true, delete: false }, incremental: true, webhooks: false },
    sync_modes: ['manual', 'interval'],
    default_sync_mode: 'manual',
    directions: ['pull', 'push'],
    config_fields: [
      { name: 'path', type: 'path', required: true, description: 'Project folder the tables are written to (one folder per table).' },
      { name: 'base_id', type: 'string', required: true, description: 'Id of the base (appXXXXXXXXXXXXXX, from its address).' },
      { name: 'tables', type: 'string_list', required: false, description: 'Ids or names of the tables to sync (every table of the base when empty).' },
      {
        name: 'detect_deletes',
        type: 'boolean',
        required: false,
        description: 'Look for deleted records on every run (one extra call per 100 records); otherwise at most every 6 hours.',
      },
    ],
  },

  authHeaders: (credential) => ({ authorization: `Bearer ${credential.accessToken}` }),
  rateLimitDelay: (res, now) => (res.status === 429 ? (retryAfterMs(res, now) ?? AIRTABLE_PENALTY_MS) : null),
  validateConfig: validateAirtableConfig,
  pull: lazyPull(() => import('./airtable/pull.ts'), (m) => m.pullAirtable),
  push: lazyPush(() => import('./airtable/push.ts'), (m) => m.pushAirtable),
};
