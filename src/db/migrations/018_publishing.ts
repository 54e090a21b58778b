import type { Migration } from '../migrate.ts';

/**
 * Publishing and usage analytics (spec 4.10, issue 18).
 *
 * `publishes`: a node made public under an unguessable key (and an optional vanity slug); the
 * content stays in the content store. `version` NULL serves the latest version, a number pins one.
 *
 * `access_counts`: per-minute aggregates (minute = Unix time / 60), one row per project, minute,
 * publish, connection and node seen in that minute ('' when a request had none): never a row per
 * request. `access_visitors`: the distinct visitors of public views in a minute, as a hash of
 * address and user agent salted with the day's random salt (`analytics_salts`, old days deleted),
 * so no address is stored and yesterday's hashes cannot be linked to today's.
 * Everything goes with its project (ON DELETE CASCADE).
 */
export const publishingMigration: Migration = {
  version: 18,
  name: 'publishing',
  sql: `
CREATE TABLE publishes (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  node_id TEXT NOT NULL,
  publish_key TEXT NOT NULL UNIQUE,
  slug TEXT UNIQUE,
  version INTEGER,
  enabled INTEGER NOT NULL DEFAULT 1,
  expires_at TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX publishes_project ON publishes(project_id, created_at);

CREATE TABLE access_counts (
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  minute INTEGER NOT NULL,
  publish_id TEXT NOT NULL DEFAULT '',
  connection_id TEXT NOT NULL DEFAULT '',
  node_id TEXT NOT NULL DEFAULT '',
  views INTEGER NOT NULL DEFAULT 0,
  api_calls INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (project_id, minute, publish_id, connection_id, node_id)
) WITHOUT ROWID;

CREATE TABLE access_visitors (
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  minute INTEGER NOT NULL,
  publish_id TEXT NOT NULL,
  node_id TEXT NOT NULL,
  visitor TEXT NOT NULL,
  PRIMARY KEY (project_id, minute, publish_id, node_id, visitor)
) WITHOUT ROWID;

CREATE TABLE analytics_salts (
  day TEXT PRIMARY KEY,
  salt TEXT NOT NULL
);
`,
};
