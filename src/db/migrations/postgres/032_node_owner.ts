import type { Migration } from '../../migrate.ts';

/** The node that runs a sync run, an agent execution or an ingest task: SQLite's 032_node_owner.ts says why. */
export const postgresNodeOwnerMigration: Migration = {
  version: 32,
  name: 'node_owner',
  sql: `
ALTER TABLE sync_runs ADD COLUMN cluster_node TEXT;
ALTER TABLE agent_executions ADD COLUMN cluster_node TEXT;
ALTER TABLE ingest_tasks ADD COLUMN cluster_node TEXT;
CREATE INDEX sync_runs_active_cluster_node ON sync_runs(cluster_node) WHERE status IN ('queued','running');
CREATE INDEX agent_executions_running_cluster_node ON agent_executions(cluster_node) WHERE status = 'running';
CREATE INDEX ingest_tasks_running_cluster_node ON ingest_tasks(cluster_node) WHERE status = 'running';
`,
};
