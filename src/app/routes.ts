import Router from '@koa/router';
import type { Services } from './services.ts';
import { serviceVersion } from '../config/version.ts';
import { API_PREFIX } from '../config/apiPrefix.ts';
import type { RouteGroup } from '../http/routes/declaration.ts';
import { mountGroup, publicMatcher, type RouteGuards } from '../http/routes/mount.ts';
import { openApiDocument, type OpenApiSource } from '../http/routes/openapi.ts';
import { indexBySegment } from '../http/routes/segmentIndex.ts';
import { agentChatRoutes } from '../api/agents/chatRoutes.ts';
import { agentConfigRoutes } from '../api/agents/routes.ts';
import { authRoutes } from '../api/auth/routes.ts';
import { chatSessionRoutes } from '../api/chat/routes.ts';
import { clusterRoutes } from '../api/cluster/routes.ts';
import { connectionRoutes } from '../api/connections/routes.ts';
import { dbConnectorRoutes } from '../api/dbConnectors/routes.ts';
import { collabRoutes } from '../api/collab/routes.ts';
import { archiveRoutes } from '../api/content/archiveRoutes.ts';
import { auditRoutes } from '../api/content/auditRoutes.ts';
import { blameRoutes } from '../api/content/blameRoutes.ts';
import { projectContentRoutes } from '../api/content/projectContentRoutes.ts';
import { contentRoutes } from '../api/content/routes.ts';
import { eventRoutes } from '../api/events/routes.ts';
import { healthRoutes } from '../api/health/routes.ts';
import { ingestRoutes } from '../api/ingest/routes.ts';
import { nodeHistoryRoutes } from '../api/nodes/historyRoutes.ts';
import { nodeRoutes } from '../api/nodes/routes.ts';
import { nodeSnapshotRoutes } from '../api/nodes/snapshotRoutes.ts';
import { nodeTransferRoutes } from '../api/nodes/transferRoutes.ts';
import { organizationRoutes } from '../api/organizations/routes.ts';
import { profileRoutes } from '../api/profile/routes.ts';
import { projectRoutes } from '../api/projects/routes.ts';
import { mcpEndpointRoutes } from '../api/mcp/routes.ts';
import { agentMcpServerRoutes, mcpServerRoutes } from '../api/mcp/serverRoutes.ts';
import { mcpAgentRoutes } from '../api/mcp/agentRoutes.ts';
import { mcpProxyRoutes } from '../api/mcp/proxyRoutes.ts';
import { sandboxRoutes } from '../api/sandbox/routes.ts';
import { syncRoutes } from '../api/sync/routes.ts';
import { tableRoutes } from '../api/tables/routes.ts';
import { toolRoutes } from '../api/tools/routes.ts';
import { workspaceRoutes } from '../api/workspaces/routes.ts';
import { publishRoutes } from '../api/publishes/routes.ts';
import { publicPublishRoutes } from '../api/publishes/publicRoutes.ts';
import { analyticsRoutes } from '../api/analytics/routes.ts';
import { oauthRoutes } from '../api/oauth/routes.ts';
import { webhookRoutes } from '../api/webhooks/routes.ts';

export { API_PREFIX };

/** What the mount asks to enforce every declared check. */
export function routeGuards(s: Services): RouteGuards {
  return { authorizer: s.authorizer, access: s.access, findNode: (id) => s.content.findById(id), owner: s.cluster?.gate, ownerReads: s.cluster?.gateReads };
}

/**
 * Every resource's routes, mounted under /api/v1. Each resource lives in its own folder with its
 * routes, request schemas and presenter. Every group builds its router and its part of the
 * OpenAPI document from one declaration (order matters: the first matching route answers).
 */
export function apiRoutes(s: Services): OpenApiSource & { routers: Router[]; isPublic: (method: string, path: string) => boolean } {
  const groups: RouteGroup[] = [
    healthRoutes(s),
    authRoutes(s),
    profileRoutes(s),
    organizationRoutes(s),
    connectionRoutes(s, '/connections'),
    connectionRoutes(s, '/access'),
    dbConnectorRoutes(s, '/db-connector/connections'),
    dbConnectorRoutes(s, '/db-connector/access'),
    toolRoutes(s),
    ingestRoutes(s),
    tableRoutes(s),
    sandboxRoutes(s),
    mcpEndpointRoutes(s),
    mcpServerRoutes(s),
    agentMcpServerRoutes(s),
    mcpAgentRoutes(s),
    mcpProxyRoutes(s),
    agentConfigRoutes(s),
    agentChatRoutes(s),
    chatSessionRoutes(s),
    workspaceRoutes(s),
    nodeHistoryRoutes(s),
    nodeSnapshotRoutes(s),
    collabRoutes(s),
    syncRoutes(s),
    eventRoutes(s),
    webhookRoutes(s),
    projectRoutes(s),
    projectContentRoutes(s),
    contentRoutes(s),
    archiveRoutes(s),
    auditRoutes(s),
    blameRoutes(s),
    nodeTransferRoutes(s),
    nodeRoutes(s),
    publishRoutes(s),
    publicPublishRoutes(s),
    analyticsRoutes(s),
    oauthRoutes(s),
    clusterRoutes({ settings: s.settings, membership: s.membership, projectCount: () => s.content.listProjects().length, ...(s.node && { heldByNode: () => s.node!.placements.heldByNode(), moves: { move: (project: string, to: string, from?: string) => s.node!.moves.move(project, to, from), drain: (id: string) => s.node!.drains.start(id) } }) }),
  ];
  // /healthz is mounted by the app outside the base path; it is only documented here.
  const guards = routeGuards(s);
  const routers = groups.filter((g) => !g.server).map((g) => mountGroup(g, guards));
  return {
    basePath: API_PREFIX,
    title: 'Content Node Service API',
    version: serviceVersion,
    description: 'A git-backed, versioned store of content for people and AI agents. Every answer is in the envelope {success, code, data, message}.',
    groups,
    routers,
    isPublic: publicMatcher(groups, API_PREFIX),
  };
}

export function apiRouter(s: Services): { router: Router; isPublic: (method: string, path: string) => boolean } {
  const api = new Router({ prefix: API_PREFIX });
  const source = apiRoutes(s);
  let document: unknown;
  // Public: the description of the API is no secret, and clients fetch it before signing in.
  api.get('/openapi.json', (ctx) => {
    document ??= openApiDocument(source);
    ctx.body = document;
  });
  // Each group's layers are copied into this one router. No allowedMethods per group: the app's
  // api.allowedMethods() answers 405/501 from the same matched layers, and 36 of them wrapped
  // every request in as many promise continuations that could never act after a route matched.
  for (const r of source.routers) api.use(r.routes());
  indexBySegment(api, API_PREFIX);
  return { router: api, isPublic: source.isPublic };
}
