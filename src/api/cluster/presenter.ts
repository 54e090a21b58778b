import { z } from 'zod';
import type { ClusterNodeView } from '../../cluster/membership.ts';

/** A node as `GET /cluster` answers it. */
export function presentClusterNode(n: ClusterNodeView, held: { primary: number; copies: number }) {
  return { id: n.id, url: n.url, state: n.state, heartbeat_age_ms: n.heartbeatAgeMs, version: n.version, started_at: n.startedAt, projects: held };
}

export const clusterNodeSchema = z.object({
  id: z.string().describe('CNS_NODE_ID (outside a cluster: the host name)'),
  url: z.string().describe('where the other nodes reach it (CNS_NODE_URL; outside a cluster: CNS_BASE_URL)'),
  state: z.enum(['up', 'down', 'draining', 'left']),
  heartbeat_age_ms: z.number().int().describe("time since its last heartbeat, by PostgreSQL's clock"),
  version: z.string().describe('the cns version it runs'),
  started_at: z.string(),
  projects: z
    .object({
      primary: z.number().int().describe('projects this node writes'),
      copies: z.number().int().describe('projects this node holds a copy of, those it writes included'),
    })
    .describe('outside a cluster: every project, held and written here'),
});

export const clusterSchema = z.object({
  node: z.string().nullable().describe('the node that answered (CNS_NODE_ID); null outside a cluster'),
  cluster: z.boolean().describe('whether this service is a node of a cluster (CNS_BUS_URL)'),
  nodes: z.array(clusterNodeSchema).describe('every node, by id; outside a cluster, this service alone'),
});
