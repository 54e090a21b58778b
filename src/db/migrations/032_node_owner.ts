import type { Migration } from '../migrate.ts';

/**
 * A cluster (issue 31) shares one metadata store between nodes, so the rows of work going on name
 * the node that runs it: `node_id` on sync runs, agent executions and ingest tasks, set when the
 * run is queued or started, the execution started, the task claimed. A node's start-up recovery
 * then touches only its own rows (and those from before the cluster, with none). Null on a single
 * box, which owns every row. The indexes serve those recoveries. Same on PostgreSQL
 * (postgres/032_node_owner.ts).
 */
export const nodeOwnerMigration: Migration = {
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
