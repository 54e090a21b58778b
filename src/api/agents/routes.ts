import type { Principal } from '../../auth/principal.ts';
import { withItems } from '../../presenters/items.ts';
import type { AccessRequest } from '../../agents/config/accesses.ts';
import type { Agent } from '../../agents/config/agentRecord.ts';
import type { BashToolRequest } from '../../agents/config/bashTools.ts';
import { executionView } from '../../agents/executions/executionViews.ts';
import type { AgentsService } from '../../agents/service.ts';
import { created, ok } from '../../http/envelope.ts';
import { pageInfo } from '../../http/pagination.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { projectRoleAllows } from '../../policies/permissions.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { visibleAgent } from '../shared/connectionResource.ts';
import { presentAccess, presentAgent, presentBashTool, presentExecution } from './presenter.ts';
import * as schema from './schemas.ts';

/**
 * An agent by id is found only by users and by its own key (visibleAgent: any other key is told
 * it does not exist), then checked on its project: reading with project:read (a member holds it
 * with content:read, and so does the agent's own key, whose content reach is only its accesses),
 * changing with keys:manage.
 */
const SEES = 'project:read';
const MANAGE = 'keys:manage';

const accessRequest = (b: { node_id: string | null; mode: 'read' | 'read_write'; tools?: AccessRequest['tools'] }): AccessRequest => ({ nodeId: b.node_id, mode: b.mode, tools: b.tools });
const bashRequest = (b: { node_id: string | null; name?: string; mode?: 'read' | 'read_write'; limits?: BashToolRequest['limits'] }): BashToolRequest => ({
  nodeId: b.node_id,
  name: b.name,
  mode: b.mode,
  limits: b.limits,
});

/** What the agent configuration routes use. */
export interface AgentConfigRouteServices {
  agents: Pick<AgentsService, 'agents' | 'accesses' | 'bashTools' | 'executions'>;
}

/**
 * Agent configuration (spec 4.8, issue 14): agents, what they may reach (accesses, bash tools)
 * and their executions. Reading needs content:read on the project (or the agent's own key);
 * changing needs keys:manage, as for every key. The routes check the project (an agent the
 * caller cannot see is "Agent not found."); the domain the finer part (src/agents/config/).
 */
export function agentConfigRoutes(s: AgentConfigRouteServices): RouteGroup {
  const a = () => s.agents;
  const agent = { resource: ({ params }: { params: { agent_id: string } }, principal: Principal) => visibleAgent(principal, a().agents.find(params.agent_id)), name: 'Agent' };
  const full = async (agent: Agent) => {
    const [accesses, bashTools] = await Promise.all([a().accesses.located(agent.connection.id), a().bashTools.located(agent.connection.id)]);
    return presentAgent(agent, accesses, bashTools);
  };
  return {
    prefix: '/agent-config',
    tag: 'Agents',
    routes: [
      route({
        method: 'get',
        path: '/',
        summary: "List a project's agents (an agent's key lists only itself)",
        permission: SEES,
        authorize: { project: ({ query }) => query.project_id },
        query: schema.listAgentsQuery,
        response: schema.agentList,
        async handle(ctx, { query, access }) {
          const { items, total } = await a().agents.list(access.principal, query.project_id, query);
          ok(ctx, { ...withItems('agents', await Promise.all(items.map(full))), ...pageInfo(total, query) });
        },
      }),
      route({
        method: 'get',
        path: '/default',
        summary: "The project's default agent, created on first use",
        description: 'Created with the default system prompt and model and one access: the whole project, read_write, the default tools. Concurrent first calls get the same agent.',
        permission: SEES,
        authorize: { project: ({ query }) => query.project_id },
        query: schema.projectQuery,
        response: schema.agentSchema,
        async handle(ctx, { query, access }) {
          ok(ctx, await full(await a().agents.defaultFor(access.principal, query.project_id)));
        },
      }),
      route({
        method: 'post',
        path: '/',
        summary: 'Create an agent; its access key is shown once',
        description: 'An agent reaches nothing until it is given accesses or bash tools. Its writes are versions by actor `agent`, author `agent:<name>`.',
        permission: 'keys:manage',
        authorize: { project: ({ body }) => body.project_id },
        status: 201,
        body: schema.createAgentBody,
        response: schema.agentWithKey,
        async handle(ctx, { body, access }) {
          const { agent, key } = await a().agents.create(access.principal, {
            projectId: body.project_id,
            name: body.name,
            systemPrompt: body.system_prompt,
            model: body.model,
            description: body.description,
            temperature: body.temperature,
            maxToolRounds: body.max_tool_rounds,
            maxToolCallsPerRound: body.max_tool_calls_per_round,
          });
          created(ctx, { id: agent.connection.id, agent: await full(agent), key }, 'Agent created; its key is shown only this once');
        },
      }),
      route({
        method: 'get',
        path: '/:agent_id',
        summary: 'Read an agent with its accesses and bash tools',
        permission: SEES,
        authorize: agent,
        params: schema.agentParams,
        response: schema.agentSchema,
        async handle(ctx, { access }) {
          ok(ctx, await full(access.record));
        },
      }),
      route({
        method: 'put',
        path: '/:agent_id',
        summary: "Change an agent's name, prompt, model, description, temperature, tool rounds, tool calls per round or status",
        permission: MANAGE,
        authorize: agent,
        params: schema.agentParams,
        body: schema.updateAgentBody,
        response: schema.agentSchema,
        async handle(ctx, { body, access }) {
          const updated = await a().agents.update(access.record, {
            name: body.name,
            systemPrompt: body.system_prompt,
            model: body.model,
            description: body.description,
            temperature: body.temperature,
            maxToolRounds: body.max_tool_rounds,
            maxToolCallsPerRound: body.max_tool_calls_per_round,
            status: body.status,
          });
          ok(ctx, await full(updated), 'Agent updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:agent_id',
        summary: 'Delete an agent: its key, accesses, bash tools, chat sessions and executions go with it',
        permission: MANAGE,
        authorize: agent,
        params: schema.agentParams,
        response: deletedSchema,
        async handle(ctx, { params, access }) {
          await a().agents.delete(access.record);
          ok(ctx, presentDeleted(params.agent_id), 'Agent deleted; its key no longer works');
        },
      }),
      route({
        method: 'post',
        path: '/:agent_id/accesses',
        summary: 'Give an agent access to a node (or, with node_id null, the whole project)',
        description: 'One access per node; the caller must reach the node. `write` needs mode read_write. ',
        permission: MANAGE,
        authorize: agent,
        status: 201,
        params: schema.agentParams,
        body: schema.accessBody,
        response: schema.accessSchema,
        async handle(ctx, { body, access }) {
          created(ctx, presentAccess(await a().accesses.add(access.principal, access.record, accessRequest(body))), 'Access added');
        },
      }),
      route({
        method: 'put',
        path: '/:agent_id/accesses',
        summary: "Replace all of an agent's accesses at once",
        description: 'Every item is checked first: one bad item is a 422 naming its index and nothing changes. An access to a node that was already there keeps its id. ',
        permission: MANAGE,
        authorize: agent,
        params: schema.agentParams,
        body: schema.replaceAccessesBody,
        response: schema.accessList,
        async handle(ctx, { body, access }) {
          const accesses = await a().accesses.replace(access.principal, access.record, body.accesses.map(accessRequest));
          ok(ctx, { accesses: accesses.map(presentAccess) }, 'Accesses replaced');
        },
      }),
      route({
        method: 'put',
        path: '/:agent_id/accesses/:access_id',
        summary: "Change an access's node, mode or tools",
        permission: MANAGE,
        authorize: agent,
        params: schema.accessParams,
        body: schema.updateAccessBody,
        response: schema.accessSchema,
        async handle(ctx, { params, body, access }) {
          const changed = await a().accesses.update(access.principal, access.record, params.access_id, { nodeId: body.node_id, mode: body.mode, tools: body.tools });
          ok(ctx, presentAccess(changed), 'Access updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:agent_id/accesses/:access_id',
        summary: 'Take an access away from an agent',
        permission: MANAGE,
        authorize: agent,
        params: schema.accessParams,
        response: deletedSchema,
        async handle(ctx, { params, access }) {
          await a().accesses.remove(access.principal, access.record, params.access_id);
          ok(ctx, presentDeleted(params.access_id), 'Access removed');
        },
      }),
      route({
        method: 'post',
        path: '/:agent_id/bash',
        summary: "Give an agent a shell over a folder's subtree (or, with node_id null, the whole project)",
        description: 'Run by the sandbox runtime with the given limits. The name (default bash) is the tool the model sees, unique per agent (409 otherwise). ',
        permission: MANAGE,
        authorize: agent,
        status: 201,
        params: schema.agentParams,
        body: schema.bashBody,
        response: schema.bashSchema,
        async handle(ctx, { body, access }) {
          created(ctx, presentBashTool(await a().bashTools.add(access.principal, access.record, bashRequest(body))), 'Bash tool added');
        },
      }),
      route({
        method: 'put',
        path: '/:agent_id/bash',
        summary: "Replace all of an agent's bash tools at once",
        description: 'Every item is checked first: one bad item is a 422 naming its index and nothing changes. A tool whose name was already there keeps its id. ',
        permission: MANAGE,
        authorize: agent,
        params: schema.agentParams,
        body: schema.replaceBashBody,
        response: schema.bashList,
        async handle(ctx, { body, access }) {
          const tools = await a().bashTools.replace(access.principal, access.record, body.bash_tools.map(bashRequest));
          ok(ctx, { bash_tools: tools.map(presentBashTool) }, 'Bash tools replaced');
        },
      }),
      route({
        method: 'put',
        path: '/:agent_id/bash/:bash_id',
        summary: "Change a bash tool's folder, name, mode or limits",
        permission: MANAGE,
        authorize: agent,
        params: schema.bashParams,
        body: schema.updateBashBody,
        response: schema.bashSchema,
        async handle(ctx, { params, body, access }) {
          const tool = await a().bashTools.update(access.principal, access.record, params.bash_id, { nodeId: body.node_id, name: body.name, mode: body.mode, limits: body.limits });
          ok(ctx, presentBashTool(tool), 'Bash tool updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:agent_id/bash/:bash_id',
        summary: 'Take a bash tool away from an agent',
        permission: MANAGE,
        authorize: agent,
        params: schema.bashParams,
        response: deletedSchema,
        async handle(ctx, { params, access }) {
          await a().bashTools.remove(access.principal, access.record, params.bash_id);
          ok(ctx, presentDeleted(params.bash_id), 'Bash tool removed');
        },
      }),
      route({
        method: 'get',
        path: '/:agent_id/executions',
        summary: "An agent's executions (one per chat turn), newest first",
        description:
          "Paginated by cursor: `before` is the previous page's `next` (an execution id). A turn's details (its tool calls' arguments) are shown to whoever started its chat session and to the project's admins; anyone else gets the summary (`details`).",
        permission: SEES,
        authorize: agent,
        params: schema.agentParams,
        query: schema.executionsQuery,
        response: schema.executionList,
        async handle(ctx, { query, access }) {
          const { connection } = access.record;
          const { items, next } = await a().executions.list(connection.id, { limit: query.limit, before: query.before });
          const viewer = { principalId: access.principal.id, projectAdmin: access.role !== null && projectRoleAllows(access.role, MANAGE) };
          ok(ctx, { executions: items.map((e) => presentExecution(executionView(e, viewer))), next });
        },
      }),
    ],
  };
}
