import type { Migration } from '../migrate.ts';

/**
 * Outgoing webhooks (issue 33): a project's hooks and their durable deliveries. A hook acts as
 * the principal that created it (a user or an access key): it is sent only what that principal
 * may read, inside its `path_prefix`. `cursor` is the project commit number up to which the
 * hook's deliveries were queued, so commits a crash left unqueued are queued at the next start.
 * Deliveries are sent in `seq` order per hook, one at a time; rows stay as the delivery log.
 */
export const webhooksMigration: Migration = {
  version: 24,
  name: 'webhooks',
  sql: `
CREATE TABLE webhooks (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  -- JSON array of event names.
  events TEXT NOT NULL,
  path_prefix TEXT NOT NULL DEFAULT '',
  -- Set by its managers; a disabled hook (disabled_at) is off until set active again.
  active INTEGER NOT NULL DEFAULT 1,
  -- The signing secret, sealed (SecretBox, purpose "webhooks", the hook id as AAD).
  secret_sealed TEXT NOT NULL,
  creator_kind TEXT NOT NULL CHECK (creator_kind IN ('user', 'key')),
  creator_id TEXT NOT NULL,
  cursor INTEGER NOT NULL,
  -- Milliseconds since the epoch of the first failed attempt since the last success.
  failing_since INTEGER,
  disabled_at TEXT,
  disabled_reason TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX webhooks_project ON webhooks(project_id);

CREATE TABLE webhook_deliveries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  hook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  event TEXT NOT NULL,
  -- The project commit number it reports (NULL for events that are not commits).
  project_version INTEGER,
  -- The exact bytes sent, so a retry or a redelivery is signed over the same body.
  body TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts INTEGER NOT NULL DEFAULT 0,
  -- Milliseconds since the epoch.
  next_attempt_at INTEGER NOT NULL,
  first_attempt_at INTEGER,
  last_attempt_at INTEGER,
  response_status INTEGER,
  -- The start of the answer's body (a few KB).
  response_body TEXT,
  duration_ms INTEGER,
  error TEXT,
  redelivery_of TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_queue ON webhook_deliveries(hook_id, status, seq);
`,
};
