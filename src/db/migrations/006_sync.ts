import type { Migration } from '../migrate.ts';

/**
 * Data sync (spec 4.7, issue 6). A sync is a `sync` connection (its key is the sync's
 * credential) plus the state below; every cycle is a run record. The last index serves the
 * changelog and the live feed: content audit entries by project commit number.
 */
export const syncMigration: Migration = {
  version: 6,
  name: 'sync',
  sql: `
CREATE TABLE sync_states (
  sync_id TEXT PRIMARY KEY REFERENCES connections(id) ON DELETE CASCADE,
  project_id TEXT NOT NULL,
  provider TEXT NOT NULL,
  trigger_mode TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active','paused')),
  acked_cursor INTEGER NOT NULL DEFAULT 0,
  last_run_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX sync_states_project ON sync_states(project_id);

CREATE TABLE sync_runs (
  id TEXT PRIMARY KEY,
  sync_id TEXT NOT NULL REFERENCES sync_states(sync_id) ON DELETE CASCADE,
  project_id TEXT NOT NULL,
  trigger TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running','succeeded','failed','interrupted')),
  started_at TEXT NOT NULL,
  finished_at TEXT,
  cursor_from INTEGER,
  cursor_to INTEGER,
  files_up INTEGER NOT NULL DEFAULT 0,
  files_down INTEGER NOT NULL DEFAULT 0,
  conflicts TEXT NOT NULL DEFAULT '[]',
  errors TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX sync_runs_sync ON sync_runs(sync_id, started_at);

CREATE INDEX content_audit_log_project_version
  ON content_audit_log(project_id, json_extract(details, '$.project_version'));
`,
};
