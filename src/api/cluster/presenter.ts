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

const NODE_ID = /^[a-z0-9-]{1,32}$/;

export const moveBodySchema = z.object({
  project_id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/).describe('the project to move'),
  to: z.string().regex(NODE_ID).describe('the node that takes a copy (and writes the project, unless `from` names a replica)'),
  from: z.string().regex(NODE_ID).optional().describe("the node whose copy leaves; without it, the primary's copy moves to `to` (or, when `to` already holds a copy, `to` only becomes the primary)"),
});

export const moveSchema = z.object({
  project_id: z.string(),
  kind: z.enum(['replica', 'primary', 'switchover']).describe("replica: a replica's copy moved; primary: the primary's copy moved and `to` writes the project; switchover: `to` writes the project, every copy stays"),
  from: z.string().nullable().describe('the node whose copy left; null for a switchover'),
  to: z.string(),
  primary: z.string().describe('the node that writes the project now'),
  epoch: z.number().int().describe('the epoch it writes under (one more after a change of primary)'),
  copies: z.array(z.string()).describe('the nodes holding a copy now'),
  duration_ms: z.number().int(),
});

export const drainSchema = z.object({
  node: z.string(),
  state: z.enum(['draining', 'left']).describe('draining: its copies are being moved (`GET /cluster` shows the count go down); left: it holds nothing and can be stopped'),
});
