import Router from '@koa/router';
import type { Services } from '../app/services.ts';
import { serviceVersion } from '../app/version.ts';
import { API_PREFIX } from '../http/apiPrefix.ts';
import type { RouteGroup } from '../http/routes/declaration.ts';
import { mountGroup } from '../http/routes/mount.ts';
import { openApiDocument, type OpenApiSource } from '../http/routes/openapi.ts';
import { agentChatRoutes } from './agents/chatRoutes.ts';
import { agentConfigRoutes } from './agents/routes.ts';
import { authRoutes } from './auth/routes.ts';
import { chatSessionRoutes } from './chat/routes.ts';
import { connectionRoutes } from './connections/routes.ts';
import { dbConnectorRoutes } from './dbConnectors/routes.ts';
import { collabRoutes } from './collab/routes.ts';
import { auditRoutes } from './content/auditRoutes.ts';
import { projectContentRoutes } from './content/projectContentRoutes.ts';
import { contentRoutes } from './content/routes.ts';
import { eventRoutes } from './events/routes.ts';
import { healthRoutes } from './health/routes.ts';
import { ingestRoutes } from './ingest/routes.ts';
import { nodeHistoryRoutes } from './nodes/historyRoutes.ts';
import { nodeRoutes } from './nodes/routes.ts';
import { nodeSnapshotRoutes } from './nodes/snapshotRoutes.ts';
import { nodeTransferRoutes } from './nodes/transferRoutes.ts';
import { organizationRoutes } from './organizations/routes.ts';
import { profileRoutes } from './profile/routes.ts';
import { projectRoutes } from './projects/routes.ts';
import { mcpEndpointRoutes } from './mcp/routes.ts';
import { agentMcpServerRoutes, mcpServerRoutes } from './mcp/serverRoutes.ts';
import { mcpAgentRoutes } from './mcp/agentRoutes.ts';
import { mcpProxyRoutes } from './mcp/proxyRoutes.ts';
import { sandboxRoutes } from './sandbox/routes.ts';
import { syncRoutes } from './sync/routes.ts';
import { tableRoutes } from './tables/routes.ts';
import { toolRoutes } from './tools/routes.ts';
import { workspaceRoutes } from './workspaces/routes.ts';
import { publishRoutes } from './publishes/routes.ts';
import { publicPublishRoutes } from './publishes/publicRoutes.ts';
import { analyticsRoutes } from './analytics/routes.ts';
import { oauthRoutes } from './oauth/routes.ts';

export { API_PREFIX };

/**
 * Every resource's routes, mounted under /api/v1. Each resource lives in its own folder with its
 * routes, request schemas and presenter. Every group builds its router and its part of the
 * OpenAPI document from one declaration (order matters: the first matching route answers).
 */
export function apiRoutes(s: Services): OpenApiSource & { routers: Router[] } {
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
    projectRoutes(s),
    projectContentRoutes(s),
    contentRoutes(s),
    auditRoutes(s),
    nodeTransferRoutes(s),
    nodeRoutes(s),
    publishRoutes(s),
    publicPublishRoutes(s),
    analyticsRoutes(s),
    oauthRoutes(s),
  ];
  // /healthz is mounted by the app outside the base path; it is only documented here.
  const routers = groups.filter((g) => !g.server).map((g) => mountGroup(g, s.authorizer));
  return {
    basePath: API_PREFIX,
    title: 'Content Node Service API',
    version: serviceVersion,
    description: 'A git-backed, versioned store of content for people and AI agents. Every answer is in the envelope {success, code, data, message}.',
    groups,
    routers,
  };
}

export function apiRouter(s: Services): Router {
  const api = new Router({ prefix: API_PREFIX });
  const source = apiRoutes(s);
  let document: unknown;
  // Public: the description of the API is no secret, and clients fetch it before signing in.
  api.get('/openapi.json', (ctx) => {
    document ??= openApiDocument(source);
    ctx.body = document;
  });
  for (const r of source.routers) api.use(r.routes(), r.allowedMethods());
  return api;
}
