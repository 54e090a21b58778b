import type { Migration } from '../migrate.ts';

/**
 * The metadata store (issue 30) orders rows by columns, never by SQLite's rowid, which
 * PostgreSQL has no counterpart of:
 *
 * - ingest_tasks and ingest_rules get `seq`, their insertion order (the queue claims a project's
 *   tasks in it, rules are matched in it): the tables are rebuilt with `seq` as their key and
 *   the old rowids as its values, `id` unique.
 * - node_uploads gets `claimed_at`: a PUT claims its row before it commits (one winner), and
 *   deletes it after; a claim left by a crash is finished or released (api/nodes/transferRoutes.ts).
 *
 * Nothing references these tables, so the rebuild keeps every foreign key as it was.
 */
export const ingestOrderMigration: Migration = {
  version: 29,
  name: 'ingest_order',
  sql: `
CREATE TABLE ingest_tasks_seq (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  source TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('file','url','platform')),
  status TEXT NOT NULL CHECK (status IN ('queued','running','succeeded','failed','cancelled')),
  target_path TEXT NOT NULL,
  mode TEXT,
  keep_original INTEGER NOT NULL DEFAULT 0,
  rule_id TEXT,
  input TEXT NOT NULL,
  progress TEXT,
  result TEXT,
  error TEXT,
  created_by TEXT NOT NULL,
  actor TEXT NOT NULL,
  created_at TEXT NOT NULL,
  started_at TEXT,
  finished_at TEXT
);
INSERT INTO ingest_tasks_seq (seq, id, project_id, source, kind, status, target_path, mode, keep_original, rule_id, input, progress, result, error, created_by, actor, created_at, started_at, finished_at)
  SELECT rowid, id, project_id, source, kind, status, target_path, mode, keep_original, rule_id, input, progress, result, error, created_by, actor, created_at, started_at, finished_at
  FROM ingest_tasks ORDER BY rowid;
DROP TABLE ingest_tasks;
ALTER TABLE ingest_tasks_seq RENAME TO ingest_tasks;
CREATE INDEX ingest_tasks_status ON ingest_tasks(status, project_id, seq);
CREATE INDEX ingest_tasks_project ON ingest_tasks(project_id, seq);

CREATE TABLE ingest_rules_seq (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  match TEXT NOT NULL DEFAULT '{}',
  target TEXT NOT NULL CHECK (target IN ('markdown','json')),
  json_schema TEXT,
  instructions TEXT,
  created_by TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
INSERT INTO ingest_rules_seq (seq, id, project_id, name, description, match, target, json_schema, instructions, created_by, created_at, updated_at)
  SELECT rowid, id, project_id, name, description, match, target, json_schema, instructions, created_by, created_at, updated_at
  FROM ingest_rules ORDER BY rowid;
DROP TABLE ingest_rules;
ALTER TABLE ingest_rules_seq RENAME TO ingest_rules;
CREATE INDEX ingest_rules_project ON ingest_rules(project_id, created_at, seq);

ALTER TABLE node_uploads ADD COLUMN claimed_at TEXT;
`,
};
