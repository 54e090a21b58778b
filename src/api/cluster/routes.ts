import { hostname } from 'node:os';
import type { ClusterMembership } from '../../cluster/membership.ts';
import { serviceVersion } from '../../config/version.ts';
import { z } from 'zod';
import { DomainError } from '../../errors/domainError.ts';
import { ok } from '../../http/envelope.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { clusterSchema, drainSchema, moveBodySchema, moveSchema, presentClusterNode } from './presenter.ts';

export interface ClusterRouteDeps {
  settings: { baseUrl: string };
  /** This node's membership (a cluster on PostgreSQL); null: a service of its own. */
  membership: Pick<ClusterMembership, 'nodeId' | 'nodes'> | null;
  /** How many projects each node writes and holds (a cluster's placement); absent outside a cluster. */
  heldByNode?: () => Promise<Map<string, { primary: number; copies: number }>>;
  /** Outside a cluster: how many projects this service holds. */
  projectCount: () => number;
  /** Moves and drains (a cluster's node); absent outside a cluster. */
  moves?: {
    move(project: string, to: string, from?: string): Promise<z.infer<typeof moveSchema>>;
    drain(node: string): Promise<{ state: 'draining' | 'left' }>;
  };
}

const ADMIN = "where projects live is the cluster's business, not an organization's: the service's administrators decide";
const notACluster = () => new DomainError('CONFLICT', 'This service is not a node of a cluster (no CNS_BUS_URL): every project lives here, and there is nowhere to move it.', { reason: 'NOT_A_CLUSTER' });

/** GET /cluster: the nodes of the cluster and their health, for the service's administrators. */
export function clusterRoutes(s: ClusterRouteDeps): RouteGroup {
  // Outside a cluster the one node is this service, running since its routes were built.
  const startedAt = new Date().toISOString();
  const alone = () => ({ id: hostname() || 'local', url: s.settings.baseUrl, state: 'up' as const, heartbeatAgeMs: 0, version: serviceVersion, startedAt });
  return {
    prefix: '/cluster',
    tag: 'Cluster',
    routes: [
      route({
        method: 'get',
        path: '/',
        summary: 'The nodes of the cluster: address, state, heartbeat age, version and the projects each holds (administrators only)',
        description: 'Outside a cluster (no CNS_BUS_URL) it lists this service alone. Needs an administrator of the service: any other caller is answered 403.',
        authorize: { admin: "the cluster's nodes belong to no organization or project: the service's administrators see them" },
        response: clusterSchema,
        async handle(ctx) {
          const m = s.membership;
          if (!m || !s.heldByNode) {
            const all = s.projectCount();
            ok(ctx, { node: null, cluster: false, nodes: [presentClusterNode(alone(), { primary: all, copies: all })] });
            return;
          }
          const [nodes, held] = await Promise.all([m.nodes(), s.heldByNode()]);
          ok(ctx, { node: m.nodeId, cluster: true, nodes: nodes.map((n) => presentClusterNode(n, held.get(n.id) ?? { primary: 0, copies: 0 })) });
        },
      }),
      route({
        method: 'post',
        path: '/moves',
        summary: "Move a project's copy to another node while it is written (administrators only); answers once the move is done",
        description:
          "`to` must be up. Without `from`, the primary's copy moves to `to`, which then writes the project (when `to` already holds a copy, it only becomes the primary: a switchover). With `from`, that copy moves to `to`, which must hold none yet; when `from` is the primary, `to` takes over. Writes go on meanwhile; a change of primary holds them for a moment (some may answer 503 with Retry-After). 404: unknown project or node; 409: not possible (node not up, copy already there or absent, primary down, another move running, not a cluster); 503: interrupted (retry: at worst one extra copy is left).",
        authorize: { admin: ADMIN },
        body: moveBodySchema,
        response: moveSchema,
        async handle(ctx, { body }) {
          if (!s.moves) throw notACluster();
          ok(ctx, await s.moves.move(body.project_id, body.to, body.from));
        },
      }),
      route({
        method: 'post',
        path: '/nodes/:id/drain',
        summary: 'Drain a node: move every copy it holds to other nodes, then mark it left (administrators only)',
        description:
          'Answers 202 once the node is `draining`; the coordinator then moves its copies, two at a time, its primaries by planned switchover, and marks it `left` when it holds none (`GET /cluster` shows the progress). A drained node still answers and routes requests; stop it to remove it. Asking again is harmless. 404: unknown node; 409: the node is down, there are too few other nodes up to hold every copy, or not a cluster.',
        authorize: { admin: ADMIN },
        params: z.object({ id: z.string().regex(/^[a-z0-9-]{1,32}$/).describe('the node (CNS_NODE_ID)') }),
        status: 202,
        response: drainSchema,
        async handle(ctx, { params }) {
          if (!s.moves) throw notACluster();
          ok(ctx, { node: params.id, ...(await s.moves.drain(params.id)) }, 'Accepted', 202);
        },
      }),
    ],
  };
}
