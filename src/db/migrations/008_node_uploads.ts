import type { Migration } from '../migrate.ts';

/**
 * Issued upload addresses (POST /nodes/upload, issue 9). The address only names a row; the row
 * holds the grant: who asked (re-authorized at PUT), which node at which path, and the version
 * the target had when the address was issued (0 = a new node). The PUT deletes the row in the
 * SQLite transaction of its commit, so an address writes at most once.
 */
export const nodeUploadsMigration: Migration = {
  version: 8,
  name: 'node_uploads',
  sql: `
CREATE TABLE node_uploads (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  node_id TEXT NOT NULL,
  parent_id TEXT,
  name TEXT NOT NULL,
  path TEXT NOT NULL,
  base_version INTEGER NOT NULL,
  size INTEGER NOT NULL,
  mime_type TEXT,
  principal_kind TEXT NOT NULL,
  principal_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX node_uploads_expiry ON node_uploads(expires_at);
`,
};
