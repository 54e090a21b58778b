import type { Settings } from '../../config/settings.ts';
import type { ContentStore } from '../../content/contentStore.ts';
import type { RouteGroup } from '../../http/routes/declaration.ts';
import type { McpEndpoint } from '../../mcp/endpoints.ts';
import type { McpService } from '../../mcp/service.ts';
import { endpointChanges, endpointInput, nodeBoundRoutes } from '../shared/nodeBoundRoutes.ts';
import { clientConfig, presentEndpoint } from './presenter.ts';
import * as schema from './schemas.ts';

/**
 * MCP endpoints (spec 4.9, issue 13): managing them needs keys:manage on their project. The key
 * is shown once, in the answers of create and regenerate-key, with a client config holding it.
 */
export function mcpEndpointRoutes(s: { mcp: Pick<McpService, 'endpoints'>; content: Pick<ContentStore, 'findById'>; settings: Pick<Settings, 'baseUrl'> }): RouteGroup {
  const endpoints = () => s.mcp.endpoints;
  const baseUrl = () => s.settings.baseUrl;
  const present = async (e: McpEndpoint) => presentEndpoint(e, baseUrl(), await endpoints().boundTools(e));
  return {
    prefix: '/mcp-endpoints',
    tag: 'MCP endpoints',
    routes: nodeBoundRoutes({
      noun: 'MCP endpoint',
      listKey: 'mcp_endpoints',
      service: endpoints,
      findNode: (id) => s.content.findById(id),
      present,
      withKey: async ({ endpoint, key }) => ({ mcp_endpoint: await present(endpoint), key, client_config: clientConfig(endpoint, baseUrl(), key) }),
      schemas: { endpoint: schema.endpointSchema, withKey: schema.endpointWithKey, create: schema.createEndpointBody, update: schema.updateEndpointBody },
      create: (principal, body) =>
        endpoints().create(principal, { ...endpointInput(body), toolIds: body.tool_ids }),
      update: (principal, endpoint, body) =>
        endpoints().update(principal, endpoint, { ...endpointChanges(body), toolIds: body.tool_ids }),
      words: {
        create: 'an MCP endpoint on a folder; its key is shown once (the answer carries a client configuration with the key filled in)',
        get: 'an MCP endpoint with its server URL and client configuration',
        update: "an MCP endpoint's name, folder, mode, status or bound tools",
        updateDescription: 'Pausing or revoking ends its open MCP sessions; the tools a session lists follow the change at its next request.',
        delete: 'its key and sessions stop working',
        regenerate: 'the previous one (and the sessions opened with it) stop working',
      },
    }),
  };
}
