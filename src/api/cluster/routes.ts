import { hostname } from 'node:os';
import type { ClusterMembership } from '../../cluster/membership.ts';
import { serviceVersion } from '../../config/version.ts';
import { ok } from '../../http/envelope.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { clusterSchema, presentClusterNode } from './presenter.ts';

export interface ClusterRouteDeps {
  settings: { baseUrl: string };
  /** This node's membership (a cluster on PostgreSQL); null: a service of its own. */
  membership: Pick<ClusterMembership, 'nodeId' | 'nodes'> | null;
  /** How many projects each node writes and holds (a cluster's placement); absent outside a cluster. */
  heldByNode?: () => Promise<Map<string, { primary: number; copies: number }>>;
  /** Outside a cluster: how many projects this service holds. */
  projectCount: () => number;
}

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
    ],
  };
}
