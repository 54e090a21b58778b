import type { Migration } from '../migrate.ts';

/**
 * Ingestion (spec 4.10, issue 15): the durable task queue and the ETL rules.
 *
 * - ingest_tasks: one row per submitted file or URL submission. `input` is what the task needs
 *   to run again from the beginning after a restart (the temporary file, or the URL and crawl
 *   options); `actor` is what the versions it writes record, `created_by` the principal's id
 *   (`actor.type` user → a user, else a key) so that the submitter is authorized again when the
 *   task runs. Workers take queued tasks in rowid order, round-robin over projects.
 * - ingest_rules: how a project's files become content (markdown, json, or json extracted by
 *   the language model to `json_schema`); `match` chooses a rule when a submission names none.
 *
 * Both go with their project (ON DELETE CASCADE); a task keeps its rule_id after the rule is
 * deleted (it records which rule applied).
 */
export const ingestMigration: Migration = {
  version: 15,
  name: 'ingest',
  sql: `
CREATE TABLE ingest_tasks (
  id TEXT PRIMARY KEY,
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
CREATE INDEX ingest_tasks_status ON ingest_tasks(status, project_id);
CREATE INDEX ingest_tasks_project ON ingest_tasks(project_id, created_at);

CREATE TABLE ingest_rules (
  id TEXT PRIMARY KEY,
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
CREATE INDEX ingest_rules_project ON ingest_rules(project_id, created_at);
`,
};
