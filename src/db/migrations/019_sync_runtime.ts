import type { Migration } from '../migrate.ts';

/**
 * The platform sync runtime (issue 16). A sync's schedule (`interval_s`, `next_run_at`, kept
 * here so it survives restarts), its source cursor, the project commit up to which local
 * changes were considered, why it was paused, and its sealed webhook secret. Runs gain a
 * `queued` status (waiting for the global concurrency cap) and the runtime's figures; the
 * table is rebuilt because SQLite cannot change a CHECK constraint in place. `sync_items` maps
 * each source item to the node it fills, so a renamed item moves its node (history kept).
 */
export const syncRuntimeMigration: Migration = {
  version: 19,
  name: 'sync_runtime',
  sql: `
ALTER TABLE sync_states ADD COLUMN interval_s INTEGER;
ALTER TABLE sync_states ADD COLUMN next_run_at TEXT;
ALTER TABLE sync_states ADD COLUMN source_cursor TEXT;
ALTER TABLE sync_states ADD COLUMN local_cursor INTEGER;
ALTER TABLE sync_states ADD COLUMN pause_reason TEXT;
ALTER TABLE sync_states ADD COLUMN webhook_secret TEXT;
CREATE INDEX sync_states_due ON sync_states(next_run_at) WHERE next_run_at IS NOT NULL;

CREATE TABLE sync_runs_v2 (
  id TEXT PRIMARY KEY,
  sync_id TEXT NOT NULL REFERENCES sync_states(sync_id) ON DELETE CASCADE,
  project_id TEXT NOT NULL,
  trigger TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('queued','running','succeeded','failed','interrupted')),
  started_at TEXT NOT NULL,
  finished_at TEXT,
  cursor_from INTEGER,
  cursor_to INTEGER,
  files_up INTEGER NOT NULL DEFAULT 0,
  files_down INTEGER NOT NULL DEFAULT 0,
  conflicts TEXT NOT NULL DEFAULT '[]',
  errors TEXT NOT NULL DEFAULT '[]',
  pulled_created INTEGER NOT NULL DEFAULT 0,
  pulled_updated INTEGER NOT NULL DEFAULT 0,
  pulled_deleted INTEGER NOT NULL DEFAULT 0,
  cursor_before TEXT,
  cursor_after TEXT,
  http_calls INTEGER NOT NULL DEFAULT 0,
  rate_limited_ms INTEGER NOT NULL DEFAULT 0
);
INSERT INTO sync_runs_v2 (id, sync_id, project_id, trigger, status, started_at, finished_at, cursor_from, cursor_to, files_up, files_down, conflicts, errors)
  SELECT id, sync_id, project_id, trigger, status, started_at, finished_at, cursor_from, cursor_to, files_up, files_down, conflicts, errors FROM sync_runs;
DROP TABLE sync_runs;
ALTER TABLE sync_runs_v2 RENAME TO sync_runs;
CREATE INDEX sync_runs_sync ON sync_runs(sync_id, started_at);
CREATE INDEX sync_runs_active ON sync_runs(status) WHERE status IN ('queued','running');

CREATE TABLE sync_items (
  sync_id TEXT NOT NULL REFERENCES sync_states(sync_id) ON DELETE CASCADE,
  source_id TEXT NOT NULL,
  -- Null between a page's commit and the moment its new nodes are looked up (node_path finds them).
  node_id TEXT,
  -- The project path the node was given (a free one when the source's path was taken).
  node_path TEXT NOT NULL,
  -- The path under the sync's folder as the source names it.
  path TEXT NOT NULL,
  source_version TEXT NOT NULL,
  -- The node's content hash when the sync last wrote or pushed it: another one is a local change.
  content_hash TEXT,
  meta TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY (sync_id, source_id)
) WITHOUT ROWID;
CREATE INDEX sync_items_node ON sync_items(sync_id, node_id);
`,
};
