import type { ColumnType } from 'kysely';

/**
 * A cluster's tables (migration 031), used on PostgreSQL only. Their times are timestamptz,
 * written as now() and compared with now() in SQL: they are read back as ages or as text, never
 * compared in JavaScript.
 */
export interface ClusterTables {
  cluster_config: ClusterConfigTable;
  cluster_nodes: ClusterNodesTable;
  cluster_leases: ClusterLeasesTable;
  project_placement: ProjectPlacementTable;
  project_copies: ProjectCopiesTable;
}

/** PostgreSQL's timestamptz (a Date when selected as it is). */
type Timestamp = ColumnType<Date, Date | string, Date | string>;

/** The cluster's own settings, written by the first node: `key_fingerprint`, `replicas`. */
export interface ClusterConfigTable {
  key: string;
  value: string;
}

export type ClusterNodeState = 'up' | 'down' | 'draining' | 'left';

export interface ClusterNodesTable {
  node_id: string;
  url: string;
  state: ClusterNodeState;
  /** This run of the node: a node that starts again takes a new one, and the old run's beats stop matching. */
  incarnation: string;
  started_at: Timestamp;
  heartbeat_at: Timestamp;
  version: string;
}

export interface ClusterLeasesTable {
  name: string;
  holder: string;
  /** Grows each time the lease passes to another holder. */
  epoch: number;
  expires_at: Timestamp;
}

/** A project's primary node and the epoch it writes under (migration 033); `electing` while a failover chooses the next. */
export interface ProjectPlacementTable {
  project_id: string;
  epoch: number;
  primary_node: string | null;
  state: 'ok' | 'electing';
}

/** A node holding a copy of a project (the primary's included). */
export interface ProjectCopiesTable {
  project_id: string;
  node_id: string;
}
