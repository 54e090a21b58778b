import type { Migration } from '../../migrate.ts';

/** The node that runs a sync run, an agent execution or an ingest task: SQLite's 032_node_owner.ts says why. */
export const postgresNodeOwnerMigration: Migration = {
  version: 32,
  name: 'node_owner',
  sql: `
ALTER TABLE sync_runs ADD COLUMN node_id TEXT;
ALTER TABLE agent_executions ADD COLUMN node_id TEXT;
ALTER TABLE ingest_tasks ADD COLUMN node_id TEXT;
CREATE INDEX sync_runs_active_node ON sync_runs(node_id) WHERE status IN ('queued','running');
CREATE INDEX agent_executions_running_node ON agent_executions(node_id) WHERE status = 'running';
CREATE INDEX ingest_tasks_running_node ON ingest_tasks(node_id) WHERE status = 'running';
`,
};
