import type { Principal } from '../../auth/principal.ts';
import { withItems } from '../../presenters/items.ts';
import type { AgentsService } from '../../agents/service.ts';
import type { Settings } from '../../config/settings.ts';
import { created, ok } from '../../http/envelope.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import type { McpService } from '../../mcp/service.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { visibleAgent } from '../shared/connectionResource.ts';
import { agentServerUrl, presentBinding, presentNewKey } from './agentPresenter.ts';
import * as schema from './agentSchemas.ts';

/**
 * An agent by id is checked on its project with project:read, which members hold with
 * content:read and its own key holds too. The domain makes the finer part: a key reads only its
 * own agent, and changing needs keys:manage after that (other keys are told it does not exist).
 */
const SEES = 'project:read';
const MANAGE = 'keys:manage';

/** What the agents' MCP routes use. */
export interface McpAgentRouteServices {
  agents: { agents: Pick<AgentsService['agents'], 'find'> };
  mcp: Pick<McpService, 'agentTools' | 'regenerateAgentKey'>;
  settings: Pick<Settings, 'baseUrl'>;
}

/**
 * Tools bound to agents and the agents' MCP servers (spec 4.9, issue 13): reading follows the
 * agent (content:read on its project, or its own key), changing needs keys:manage on its project.
 * The routes check the agent's project (an agent the caller cannot see, or another key's, is
 * "Agent not found."); the domain checks the tool a binding names (src/agents/bindings/).
 */
export function mcpAgentRoutes(s: McpAgentRouteServices): RouteGroup {
  const bindings = () => s.mcp.agentTools;
  const agent = { resource: ({ params }: { params: { agent_id: string } }, principal: Principal) => visibleAgent(principal, s.agents.agents.find(params.agent_id)), name: 'Agent' };
  return {
    prefix: '/mcp/agents',
    tag: 'MCP agents',
    routes: [
      route({
        method: 'get',
        path: '/:agent_id/tools',
        summary: "List the tools bound to an agent (what its MCP server offers)",
        permission: SEES,
        authorize: agent,
        params: schema.agentParams,
        response: schema.bindingList,
        async handle(ctx, { params, access }) {
          const tools = await bindings().list(access.principal, access.record);
          ok(ctx, { agent_id: params.agent_id, server_url: agentServerUrl(s.settings.baseUrl, params.agent_id), ...withItems('tools', tools.map(presentBinding)) });
        },
      }),
      route({
        method: 'post',
        path: '/:agent_id/tools',
        summary: "Bind one of the project's tools to an agent",
        description:
          "The agent then offers it (on its MCP server, and in chat) under `name`, working over the tool's node as the agent: binding a " +
          'writing tool lets the agent write there. The caller must reach the tool\'s node; a tool of another project is 404; a tool bound ' +
          'twice, or a name the agent already offers, is 409. ',
        permission: MANAGE,
        authorize: agent,
        status: 201,
        params: schema.agentParams,
        body: schema.bindBody,
        response: schema.bindingSchema,
        async handle(ctx, { body, access }) {
          const bound = await bindings().bind(access.principal, access.record, { toolId: body.tool_id, name: body.name, description: body.description });
          created(ctx, presentBinding(bound), 'Tool bound to the agent');
        },
      }),
      route({
        method: 'put',
        path: '/:agent_id/tools/:tool_id',
        summary: "Change the name or description a bound tool is offered under",
        permission: MANAGE,
        authorize: agent,
        params: schema.bindingParams,
        body: schema.updateBindingBody,
        response: schema.bindingSchema,
        async handle(ctx, { params, body, access }) {
          ok(ctx, presentBinding(await bindings().update(access.principal, access.record, params.tool_id, body)), 'Binding updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:agent_id/tools/:tool_id',
        summary: 'Unbind a tool from an agent (the tool itself stays)',
        permission: MANAGE,
        authorize: agent,
        params: schema.bindingParams,
        response: deletedSchema,
        async handle(ctx, { params, access }) {
          ok(ctx, presentDeleted((await bindings().unbind(access.principal, access.record, params.tool_id)).id), 'Tool unbound from the agent');
        },
      }),
      route({
        method: 'get',
        path: '/:agent_id/status',
        summary: "An agent's MCP status: active, bound tools, calls and errors in the last 24 hours, last call",
        permission: SEES,
        authorize: agent,
        params: schema.agentParams,
        response: schema.statusSchema,
        async handle(ctx, { access }) {
          ok(ctx, await bindings().status(access.principal, access.record));
        },
      }),
      route({
        method: 'post',
        path: '/:agent_id/regenerate-key',
        summary: "Regenerate an agent's key: the new key is shown once, the old one stops working at once",
        description: "The agent's MCP sessions opened with the old key end too.",
        permission: MANAGE,
        authorize: agent,
        params: schema.agentParams,
        response: schema.regeneratedKeySchema,
        async handle(ctx, { access }) {
          const { agent: renewed, key } = await s.mcp.regenerateAgentKey(access.record);
          ok(ctx, presentNewKey(renewed, key, s.settings.baseUrl), "Key regenerated; it is shown only this once");
        },
      }),
    ],
  };
}
