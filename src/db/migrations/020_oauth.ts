import type { Migration } from '../migrate.ts';

/**
 * OAuth and token connections per project (spec 4.10 `/oauth/{provider}/…`, issue 16).
 *
 * `oauth_connections`: at most one connection per project and provider, from the authorization
 * code flow (`kind` oauth) or a personal/integration token (`kind` token). The tokens (access and
 * refresh) are stored only sealed: one JSON object encrypted with a key derived from the data
 * folder's signing secret (src/auth/secretBox.ts, purpose `oauth-tokens`, the row id as AAD).
 * `expires_at` is the access token's expiry (NULL: it does not expire); `needs_reauth` is set when
 * the provider refused the token or its refresh, until the project connects again.
 *
 * `oauth_states`: authorization requests in flight, one row per signed `state` (its id): who
 * started it for which project and provider, the PKCE verifier (sealed), and where the browser
 * goes after the callback (kept here, not in the state, so the state stays short). A callback deletes
 * the row it uses, so a state (and the code that came with it) is accepted once.
 * Both go with their project (ON DELETE CASCADE).
 */
export const oauthMigration: Migration = {
  version: 20,
  name: 'oauth',
  sql: `
CREATE TABLE oauth_connections (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  provider TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('oauth', 'token')),
  account TEXT,
  scopes TEXT NOT NULL DEFAULT '[]',
  tokens_sealed TEXT NOT NULL,
  expires_at TEXT,
  needs_reauth INTEGER NOT NULL DEFAULT 0,
  connected_by TEXT,
  connected_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX oauth_connections_project_provider ON oauth_connections(project_id, provider);

CREATE TABLE oauth_states (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  provider TEXT NOT NULL,
  verifier_sealed TEXT,
  redirect_after TEXT,
  expires_at INTEGER NOT NULL
);
CREATE INDEX oauth_states_expiry ON oauth_states(expires_at);
`,
};
