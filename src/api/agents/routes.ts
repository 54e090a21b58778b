import type { AccessRequest } from '../../agents/config/accesses.ts';
import type { Agent } from '../../agents/config/agentRecord.ts';
import type { BashToolRequest } from '../../agents/config/bashTools.ts';
import type { Services } from '../../app/services.ts';
import { created, ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo } from '../../http/pagination.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { presentAccess, presentAgent, presentBashTool, presentExecution } from './presenter.ts';
import * as schema from './schemas.ts';

const READ = 'content:read';
const MANAGE = 'keys:manage';

const accessRequest = (b: { node_id: string | null; mode: 'read' | 'read_write'; tools?: AccessRequest['tools'] }): AccessRequest => ({ nodeId: b.node_id, mode: b.mode, tools: b.tools });
const bashRequest = (b: { node_id: string | null; name?: string; mode?: 'read' | 'read_write'; limits?: BashToolRequest['limits'] }): BashToolRequest => ({
  nodeId: b.node_id,
  name: b.name,
  mode: b.mode,
  limits: b.limits,
});

/**
 * Agent configuration (spec 4.8, issue 14): agents, what they may reach (accesses, bash tools)
 * and their executions. Reading needs content:read on the project (or the agent's own key);
 * changing needs keys:manage, as for every key. The domain checks both (src/agents/config/).
 */
export function agentConfigRoutes(s: Services): RouteGroup {
  const a = () => s.agents;
  const full = (agent: Agent) => presentAgent(agent, a().accesses.located(agent.connection.id), a().bashTools.located(agent.connection.id));
  return {
    prefix: '/agent-config',
    tag: 'Agents',
    routes: [
      route({
        method: 'get',
        path: '/',
        summary: "List a project's agents (an agent's key lists only itself)",
        permission: READ,
        query: schema.listAgentsQuery,
        response: schema.agentList,
        handle(ctx, { query }) {
          const { items, total } = a().agents.list(principalOf(ctx), query.project_id, query);
          ok(ctx, { agents: items.map(full), ...pageInfo(total, query) });
        },
      }),
      route({
        method: 'get',
        path: '/default',
        summary: "The project's default agent, created on first use",
        description: 'Created with the default system prompt and model and one access: the whole project, read_write, the default tools. Concurrent first calls get the same agent.',
        permission: READ,
        query: schema.projectQuery,
        response: schema.agentSchema,
        handle(ctx, { query }) {
          ok(ctx, full(a().agents.defaultFor(principalOf(ctx), query.project_id)));
        },
      }),
      route({
        method: 'post',
        path: '/',
        summary: 'Create an agent; its access key is shown once',
        description: 'An agent reaches nothing until it is given accesses or bash tools. Its writes are versions by actor `agent`, author `agent:<name>`.',
        permission: MANAGE,
        status: 201,
        body: schema.createAgentBody,
        response: schema.agentWithKey,
        handle(ctx, { body }) {
          const { agent, key } = a().agents.create(principalOf(ctx), {
            projectId: body.project_id,
            name: body.name,
            systemPrompt: body.system_prompt,
            model: body.model,
            description: body.description,
            temperature: body.temperature,
            maxToolRounds: body.max_tool_rounds,
          });
          created(ctx, { agent: full(agent), key }, 'Agent created; its key is shown only this once');
        },
      }),
      route({
        method: 'get',
        path: '/:agent_id',
        summary: 'Read an agent with its accesses and bash tools',
        permission: READ,
        params: schema.agentParams,
        response: schema.agentSchema,
        handle(ctx, { params }) {
          ok(ctx, full(a().agents.readable(principalOf(ctx), params.agent_id)));
        },
      }),
      route({
        method: 'put',
        path: '/:agent_id',
        summary: "Change an agent's name, prompt, model, description, temperature, tool rounds or status",
        permission: MANAGE,
        params: schema.agentParams,
        body: schema.updateAgentBody,
        response: schema.agentSchema,
        handle(ctx, { params, body }) {
          const agent = a().agents.update(principalOf(ctx), params.agent_id, {
            name: body.name,
            systemPrompt: body.system_prompt,
            model: body.model,
            description: body.description,
            temperature: body.temperature,
            maxToolRounds: body.max_tool_rounds,
            status: body.status,
          });
          ok(ctx, full(agent), 'Agent updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:agent_id',
        summary: 'Delete an agent: its key, accesses, bash tools, chat sessions and executions go with it',
        permission: MANAGE,
        params: schema.agentParams,
        response: deletedSchema,
        handle(ctx, { params }) {
          a().agents.delete(principalOf(ctx), params.agent_id);
          ok(ctx, presentDeleted(params.agent_id), 'Agent deleted; its key no longer works');
        },
      }),
      route({
        method: 'post',
        path: '/:agent_id/accesses',
        summary: 'Give an agent access to a node (or, with node_id null, the whole project)',
        description: 'One access per node; the caller must reach the node. `write` needs mode read_write.',
        permission: MANAGE,
        status: 201,
        params: schema.agentParams,
        body: schema.accessBody,
        response: schema.accessSchema,
        handle(ctx, { params, body }) {
          created(ctx, presentAccess(a().accesses.add(principalOf(ctx), params.agent_id, accessRequest(body))), 'Access added');
        },
      }),
      route({
        method: 'put',
        path: '/:agent_id/accesses',
        summary: "Replace all of an agent's accesses at once",
        description: 'Every item is checked first: one bad item is a 422 naming its index and nothing changes. An access to a node that was already there keeps its id.',
        permission: MANAGE,
        params: schema.agentParams,
        body: schema.replaceAccessesBody,
        response: schema.accessList,
        handle(ctx, { params, body }) {
          const accesses = a().accesses.replace(principalOf(ctx), params.agent_id, body.accesses.map(accessRequest));
          ok(ctx, { accesses: accesses.map(presentAccess) }, 'Accesses replaced');
        },
      }),
      route({
        method: 'put',
        path: '/:agent_id/accesses/:access_id',
        summary: "Change an access's node, mode or tools",
        permission: MANAGE,
        params: schema.accessParams,
        body: schema.updateAccessBody,
        response: schema.accessSchema,
        handle(ctx, { params, body }) {
          const access = a().accesses.update(principalOf(ctx), params.agent_id, params.access_id, { nodeId: body.node_id, mode: body.mode, tools: body.tools });
          ok(ctx, presentAccess(access), 'Access updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:agent_id/accesses/:access_id',
        summary: 'Take an access away from an agent',
        permission: MANAGE,
        params: schema.accessParams,
        response: deletedSchema,
        handle(ctx, { params }) {
          a().accesses.remove(principalOf(ctx), params.agent_id, params.access_id);
          ok(ctx, presentDeleted(params.access_id), 'Access removed');
        },
      }),
      route({
        method: 'post',
        path: '/:agent_id/bash',
        summary: "Give an agent a shell over a folder's subtree (or, with node_id null, the whole project)",
        description: 'Run by the sandbox runtime with the given limits. The name (default bash) is the tool the model sees, unique per agent (409 otherwise).',
        permission: MANAGE,
        status: 201,
        params: schema.agentParams,
        body: schema.bashBody,
        response: schema.bashSchema,
        handle(ctx, { params, body }) {
          created(ctx, presentBashTool(a().bashTools.add(principalOf(ctx), params.agent_id, bashRequest(body))), 'Bash tool added');
        },
      }),
      route({
        method: 'put',
        path: '/:agent_id/bash',
        summary: "Replace all of an agent's bash tools at once",
        description: 'Every item is checked first: one bad item is a 422 naming its index and nothing changes. A tool whose name was already there keeps its id.',
        permission: MANAGE,
        params: schema.agentParams,
        body: schema.replaceBashBody,
        response: schema.bashList,
        handle(ctx, { params, body }) {
          const tools = a().bashTools.replace(principalOf(ctx), params.agent_id, body.bash_tools.map(bashRequest));
          ok(ctx, { bash_tools: tools.map(presentBashTool) }, 'Bash tools replaced');
        },
      }),
      route({
        method: 'put',
        path: '/:agent_id/bash/:bash_id',
        summary: "Change a bash tool's folder, name, mode or limits",
        permission: MANAGE,
        params: schema.bashParams,
        body: schema.updateBashBody,
        response: schema.bashSchema,
        handle(ctx, { params, body }) {
          const tool = a().bashTools.update(principalOf(ctx), params.agent_id, params.bash_id, { nodeId: body.node_id, name: body.name, mode: body.mode, limits: body.limits });
          ok(ctx, presentBashTool(tool), 'Bash tool updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:agent_id/bash/:bash_id',
        summary: 'Take a bash tool away from an agent',
        permission: MANAGE,
        params: schema.bashParams,
        response: deletedSchema,
        handle(ctx, { params }) {
          a().bashTools.remove(principalOf(ctx), params.agent_id, params.bash_id);
          ok(ctx, presentDeleted(params.bash_id), 'Bash tool removed');
        },
      }),
      route({
        method: 'get',
        path: '/:agent_id/executions',
        summary: "An agent's executions (one per chat turn), newest first",
        description: "Paginated by cursor: `before` is the previous page's `next` (an execution id).",
        permission: READ,
        params: schema.agentParams,
        query: schema.executionsQuery,
        response: schema.executionList,
        handle(ctx, { params, query }) {
          const agent = a().agents.readable(principalOf(ctx), params.agent_id);
          const { items, next } = a().executions.list(agent.connection.id, { limit: query.limit, before: query.before });
          ok(ctx, { executions: items.map(presentExecution), next });
        },
      }),
    ],
  };
}
