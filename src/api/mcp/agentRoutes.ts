import type { Services } from '../../app/services.ts';
import { created, ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { agentServerUrl, presentBinding, presentNewKey } from './agentPresenter.ts';
import * as schema from './agentSchemas.ts';

const READ = 'content:read';
const MANAGE = 'keys:manage';

/**
 * Tools bound to agents and the agents' MCP servers (spec 4.9, issue 13): reading follows the
 * agent (content:read on its project, or its own key), changing needs keys:manage on its project.
 * The domain checks both (src/agents/bindings/), answering 404 for an agent the caller cannot see.
 */
export function mcpAgentRoutes(s: Services): RouteGroup {
  const bindings = () => s.mcp.agentTools;
  return {
    prefix: '/mcp/agents',
    tag: 'MCP agents',
    routes: [
      route({
        method: 'get',
        path: '/:agent_id/tools',
        summary: "List the tools bound to an agent (what its MCP server offers)",
        permission: READ,
        params: schema.agentParams,
        response: schema.bindingList,
        handle(ctx, { params }) {
          const tools = bindings().list(principalOf(ctx), params.agent_id);
          ok(ctx, { agent_id: params.agent_id, server_url: agentServerUrl(s.settings.baseUrl, params.agent_id), tools: tools.map(presentBinding) });
        },
      }),
      route({
        method: 'post',
        path: '/:agent_id/tools',
        summary: "Bind one of the project's tools to an agent",
        description:
          "The agent then offers it (on its MCP server, and in chat) under `name`, working over the tool's node as the agent: binding a " +
          'writing tool lets the agent write there. The caller must reach the tool\'s node; a tool of another project is 404; a tool bound ' +
          'twice, or a name the agent already offers, is 409.',
        permission: MANAGE,
        status: 201,
        params: schema.agentParams,
        body: schema.bindBody,
        response: schema.bindingSchema,
        handle(ctx, { params, body }) {
          const bound = bindings().bind(principalOf(ctx), params.agent_id, { toolId: body.tool_id, name: body.name, description: body.description });
          created(ctx, presentBinding(bound), 'Tool bound to the agent');
        },
      }),
      route({
        method: 'put',
        path: '/:agent_id/tools/:tool_id',
        summary: "Change the name or description a bound tool is offered under",
        permission: MANAGE,
        params: schema.bindingParams,
        body: schema.updateBindingBody,
        response: schema.bindingSchema,
        handle(ctx, { params, body }) {
          ok(ctx, presentBinding(bindings().update(principalOf(ctx), params.agent_id, params.tool_id, body)), 'Binding updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:agent_id/tools/:tool_id',
        summary: 'Unbind a tool from an agent (the tool itself stays)',
        permission: MANAGE,
        params: schema.bindingParams,
        response: deletedSchema,
        handle(ctx, { params }) {
          ok(ctx, presentDeleted(bindings().unbind(principalOf(ctx), params.agent_id, params.tool_id).id), 'Tool unbound from the agent');
        },
      }),
      route({
        method: 'get',
        path: '/:agent_id/status',
        summary: "An agent's MCP status: active, bound tools, calls and errors in the last 24 hours, last call",
        permission: READ,
        params: schema.agentParams,
        response: schema.statusSchema,
        handle(ctx, { params }) {
          ok(ctx, bindings().status(principalOf(ctx), params.agent_id));
        },
      }),
      route({
        method: 'post',
        path: '/:agent_id/regenerate-key',
        summary: "Regenerate an agent's key: the new key is shown once, the old one stops working at once",
        description: "The agent's MCP sessions opened with the old key end too.",
        permission: MANAGE,
        params: schema.agentParams,
        response: schema.regeneratedKeySchema,
        handle(ctx, { params }) {
          const { agent, key } = s.mcp.regenerateAgentKey(principalOf(ctx), params.agent_id);
          ok(ctx, presentNewKey(agent, key, s.settings.baseUrl), "Key regenerated; it is shown only this once");
        },
      }),
    ],
  };
}
