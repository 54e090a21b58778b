import type { Migration } from '../migrate.ts';

/**
 * A cluster (issue 31) shares one metadata store between nodes, so the rows of work going on name
 * the node that runs it: `cluster_node` on sync runs, agent executions and ingest tasks, set when the
 * run is queued or started, the execution started, the task claimed. A node's start-up recovery
 * then touches only its own rows (and those from before the cluster, with none). Null on a single
 * box, which owns every row. The indexes serve those recoveries. Same on PostgreSQL
 * (postgres/032_node_owner.ts).
 */
export const nodeOwnerMigration: Migration = {
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
