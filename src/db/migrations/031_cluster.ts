import type { Migration } from '../migrate.ts';

/**
 * A cluster of nodes (issue 31, docs/design/cluster.md §2): the cluster's own settings (the
 * signing key's fingerprint, the replica count), its members and their heartbeats, and its leases
 * (the coordinator's). A cluster runs on PostgreSQL only; SQLite carries the same tables so both
 * engines stay at one schema version and `cns db copy` finds every table on both sides.
 */
export const clusterMigration: Migration = {
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
  started_at TEXT NOT NULL,
  heartbeat_at TEXT NOT NULL,
  version TEXT NOT NULL
);

CREATE TABLE cluster_leases (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  epoch INTEGER NOT NULL,
  expires_at TEXT NOT NULL
);
`,
};
