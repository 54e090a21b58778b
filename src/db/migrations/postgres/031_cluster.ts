import type { Migration } from '../../migrate.ts';

/**
 * SQLite's migration 031 on PostgreSQL: the cluster's settings, members and leases. Times are
 * timestamptz here, written and compared only with PostgreSQL's now(): the nodes' own clocks are
 * never compared with each other (docs/design/cluster.md §2).
 */
export const postgresClusterMigration: Migration = {
  version: 31,
  name: 'cluster',
  sql: `
CREATE TABLE cluster_config (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE cluster_nodes (
  node_id TEXT PRIMARY KEY,
  url TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('up','down','draining','left')),
  incarnation TEXT NOT NULL,
  started_at TIMESTAMPTZ NOT NULL,
  heartbeat_at TIMESTAMPTZ NOT NULL,
  version TEXT NOT NULL
);

CREATE TABLE cluster_leases (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  epoch BIGINT NOT NULL,
  expires_at TIMESTAMPTZ NOT NULL
);
`,
};
