import type { AgentsService } from '../../agents/service.ts';
import { ok } from '../../http/envelope.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { onConnection } from '../shared/connectionResource.ts';
import { presentStatus, presentWorkspace } from './presenter.ts';
import * as schema from './schemas.ts';

/**
 * Agent workspaces (spec 4.10, issue 14): an agent's draft over its read_write accesses, where its
 * write and bash tools act without touching the live content until it is completed as ONE commit
 * by the agent. Members with content:write act on it, or the agent's own key; the status needs
 * content:read. The routes check project:read on the agent's project (an agent the caller cannot
 * see is "Agent not found."): one permission cannot say "content:write for members, nothing more
 * for the agent's own key", so `AgentWorkspaces` keeps that finer part.
 */
export function workspaceRoutes(s: { agents: Pick<AgentsService, 'agents' | 'workspaces'> }): RouteGroup {
  const w = () => s.agents.workspaces;
  const permission = 'project:read';
  /** Said of the routes that change the workspace, whose declared check is project:read. */
  const writes = "Members need content:write on the agent's project; the agent's own key acts on its own workspace.";
  const byId = (id: string) => onConnection(s.agents.agents.find(id));
  const agent = { resource: ({ params }: { params: { agent_id: string } }) => byId(params.agent_id), name: 'Agent' };
  return {
    prefix: '/workspace',
    tag: 'Workspaces',
    routes: [
      route({
        method: 'post',
        path: '/create',
        summary: "Open an agent's workspace (one per agent) over its read_write accesses at the current version",
        description: `409 when the agent has one open; 422 when it has no read_write access. ${writes}`,
        permission,
        authorize: { resource: ({ body }) => byId(body.agent_id), name: 'Agent' },
        status: 201,
        body: schema.createBody,
        response: schema.workspaceSchema,
        async handle(ctx, { access }) {
          ok(ctx, presentWorkspace(await w().open(access.principal, access.record.connection)), 'Workspace opened', 201);
        },
      }),
      route({
        method: 'get',
        path: '/:agent_id/status',
        summary: "The workspace's base version and drafted paths, each with its diff against the version it started from",
        permission,
        authorize: agent,
        params: schema.agentParams,
        response: schema.statusSchema,
        async handle(ctx, { access }) {
          ok(ctx, presentStatus(await w().status(access.principal, access.record.connection)));
        },
      }),
      route({
        method: 'post',
        path: '/:agent_id/complete',
        summary: 'Merge the draft into the live content as ONE commit by the agent, and close the workspace',
        description:
          'Each path is merged three ways with what changed live since its draft started (text by lines, JSON by keys). A conflict answers 409 with every conflicting path and its regions (details.conflicts): nothing is written and the workspace stays open. ' +
          writes,
        permission,
        authorize: agent,
        params: schema.agentParams,
        body: schema.completeBody,
        response: schema.completeResult,
        async handle(ctx, { body, access }) {
          const r = await w().complete(access.principal, access.record.connection, body.message);
          ok(ctx, r, r.version === null ? 'Workspace completed; nothing to write' : 'Workspace completed');
        },
      }),
      route({
        method: 'delete',
        path: '/:agent_id',
        summary: "Discard the agent's workspace and its draft",
        description: writes,
        permission,
        authorize: agent,
        params: schema.agentParams,
        response: deletedSchema,
        async handle(ctx, { params, access }) {
          await w().discard(access.principal, access.record.connection);
          ok(ctx, presentDeleted(params.agent_id), 'Workspace discarded');
        },
      }),
    ],
  };
}
