import { PROCESS_START, type Ownership } from '../ownership.ts';
import type { ClusterNode } from './clusterNode.ts';

/**
 * Ownership (ownership.ts) of a cluster node running one process: it runs the box's duties and
 * its start-up recovery (scoped to its own rows by node id), and a project's background work
 * (scheduled syncs, ingestion tasks, webhook deliveries) only where it is the project's primary.
 * Writes are checked by the content core (ClusterNode.mayWrite), not by a lease fence.
 */
export function nodeOwnership(node: ClusterNode): Ownership {
  return {
    alone: false,
    workerName: '',
    boxStart: true,
    boxDuties: true,
    // Every copy keeps the search index of what it holds (its follower reconcile announces the commits here).
    holds: () => true,
    // A node's copies are written by this process alone (its own data folder).
    soleWriterSince: () => PROCESS_START,
    adopt: (projectId) => node.isPrimarySync(projectId),
    onAcquired: () => () => {},
  };
}
