import type { Migration } from '../migrate.ts';

/**
 * Database connections (issue 18, spec 4.10): PostgreSQL, MySQL/MariaDB and SQLite sources a
 * project reads tables from. The password is stored only sealed with the service's secret
 * (src/auth/secretBox.ts, the row id as AAD); SQLite connections name a `file` inside the
 * operator's folder (CNS_DB_SQLITE_DIR) and leave the network fields null.
 */
export const dbConnectionsMigration: Migration = {
  version: 17,
  name: 'db_connections',
  sql: `
CREATE TABLE db_connections (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  engine TEXT NOT NULL CHECK (engine IN ('postgres', 'mysql', 'sqlite')),
  host TEXT,
  port INTEGER,
  database TEXT,
  user TEXT,
  password_encrypted TEXT,
  ssl TEXT NOT NULL DEFAULT 'disable',
  file TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX db_connections_name ON db_connections(project_id, name);
`,
};
