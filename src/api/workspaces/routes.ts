import type { Services } from '../../app/services.ts';
import { ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { presentStatus, presentWorkspace } from './presenter.ts';
import * as schema from './schemas.ts';

/**
 * Agent workspaces (spec 4.10, issue 14): an agent's draft over its read_write accesses, where its
 * write and bash tools act without touching the live content until it is completed as ONE commit
 * by the agent. The project comes from the agent, so `AgentWorkspaces` checks the caller (members
 * with content:write, or the agent's own key; the status needs content:read).
 */
export function workspaceRoutes(s: Services): RouteGroup {
  const w = () => s.agents.workspaces;
  return {
    prefix: '/workspace',
    tag: 'Workspaces',
    routes: [
      route({
        method: 'post',
        path: '/create',
        summary: "Open an agent's workspace (one per agent) over its read_write accesses at the current version",
        description: '409 when the agent has one open; 422 when it has no read_write access.',
        permission: 'content:write',
        status: 201,
        body: schema.createBody,
        response: schema.workspaceSchema,
        handle(ctx, { body }) {
          ok(ctx, presentWorkspace(w().open(principalOf(ctx), body.agent_id)), 'Workspace opened', 201);
        },
      }),
      route({
        method: 'get',
        path: '/:agent_id/status',
        summary: "The workspace's base version and drafted paths, each with its diff against the version it started from",
        permission: 'content:read',
        params: schema.agentParams,
        response: schema.statusSchema,
        async handle(ctx, { params }) {
          ok(ctx, presentStatus(await w().status(principalOf(ctx), params.agent_id)));
        },
      }),
      route({
        method: 'post',
        path: '/:agent_id/complete',
        summary: 'Merge the draft into the live content as ONE commit by the agent, and close the workspace',
        description:
          'Each path is merged three ways with what changed live since its draft started (text by lines, JSON by keys). A conflict answers 409 with every conflicting path and its regions (details.conflicts): nothing is written and the workspace stays open.',
        permission: 'content:write',
        params: schema.agentParams,
        body: schema.completeBody,
        response: schema.completeResult,
        async handle(ctx, { params, body }) {
          const r = await w().complete(principalOf(ctx), params.agent_id, body.message);
          ok(ctx, r, r.version === null ? 'Workspace completed; nothing to write' : 'Workspace completed');
        },
      }),
      route({
        method: 'delete',
        path: '/:agent_id',
        summary: "Discard the agent's workspace and its draft",
        permission: 'content:write',
        params: schema.agentParams,
        response: deletedSchema,
        async handle(ctx, { params }) {
          await w().discard(principalOf(ctx), params.agent_id);
          ok(ctx, presentDeleted(params.agent_id), 'Workspace discarded');
        },
      }),
    ],
  };
}
