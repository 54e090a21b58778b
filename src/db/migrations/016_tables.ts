import type { Migration } from '../migrate.ts';

/**
 * Tables (spec 4.5, issue 18): a table is a json node of its project plus this record. The node
 * holds the data (every change is a version of it, through the content store); the record
 * holds the name, the description and the optional JSON Schema every change is validated
 * against. `node_id` follows the node wherever it moves; `path` is where it was created (shown
 * when the node is permanently gone). A table goes with its project (ON DELETE CASCADE).
 *
 * Onboarding needs no schema change: `users.onboarding_completed_at` (migration 001) holds the
 * explicit completion; the steps are computed from real state.
 */
export const tablesMigration: Migration = {
  version: 16,
  name: 'tables',
  sql: `
CREATE TABLE json_tables (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  node_id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  json_schema TEXT,
  path TEXT NOT NULL,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX json_tables_project ON json_tables(project_id, created_at);
`,
};
