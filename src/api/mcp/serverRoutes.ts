import type { Context, Middleware } from 'koa';
import type { z } from 'zod';
import type { AgentsService } from '../../agents/service.ts';
import { bearerToken } from '../../auth/authenticator.ts';
import { looksLikeAccessKey } from '../../auth/accessKeys.ts';
import { admitted } from '../../http/middleware/authenticate.ts';
import { API_PREFIX } from '../../config/apiPrefix.ts';
import { route, type ProjectOwned, type RouteDeclaration, type RouteGroup } from '../../http/routes/declaration.ts';
import type { McpContext, McpService } from '../../mcp/service.ts';
import type { ProjectAction } from '../../policies/permissions.ts';
import { onConnection } from '../shared/connectionResource.ts';
import { agentParams } from './agentSchemas.ts';
import { endpointParams } from './schemas.ts';

/** An endpoint's server (`e`) or an agent's (`a`). */
const MCP_PATH = new RegExp(`^${API_PREFIX}/mcp/(e|a)/([^/]+)/?$`);

/**
 * The gate of the MCP servers, mounted before the app's authentication: it knows the endpoint
 * or agent, so a paused one's own key is 403 (not the 401 of an unknown key), a deleted one 404,
 * and a wrong key 401, all before the body is read or any MCP message is processed. It is where
 * these routes authenticate and where their caller is first checked (src/mcp/gate.ts); the
 * routes' declared checks see the principal it admitted.
 */
export function mcpGate(s: { mcp: Pick<McpService, 'admit' | 'admitAgent'> }): Middleware {
  return async (ctx, next) => {
    const m = MCP_PATH.exec(ctx.path);
    if (m) {
      const header = ctx.get('Authorization');
      const key = ctx.get('X-Access-Key').trim();
      const token = bearerToken(header || undefined) ?? (key && looksLikeAccessKey(key) ? key : null);
      const id = decodeURIComponent(m[2]!);
      const c: McpContext = m[1] === 'a' ? await s.mcp.admitAgent(id, token) : await s.mcp.admit(id, token);
      ctx.state.mcp = c;
      admitted(ctx, c.principal);
    }
    await next();
  };
}

const description =
  'The Streamable HTTP transport of the Model Context Protocol (not an envelope): POST carries JSON-RPC messages (an `initialize` ' +
  'starts a session whose id comes back in `Mcp-Session-Id`; send it on every later request), GET opens the session\'s event stream, ' +
  'DELETE ends the session. Clients send `Accept: application/json, text/event-stream`; answers are JSON unless the client ranks ' +
  'text/event-stream first. Authorization: Bearer <the endpoint\'s key>, or a user token that may read the project.';

const agentDescription =
  'The MCP server of an agent: exactly the tools bound to it (GET /mcp/agents/{agent_id}/tools), under their binding names, each run ' +
  'as the agent over its own node (writes are versions by actor agent, author `agent:<name>`). The same Streamable HTTP transport ' +
  "as an endpoint's server. Authorization: Bearer <the agent's key>, or a user token that may read the project (the writing tools " +
  'are listed only to users who may write it). A paused agent is 403.';

/**
 * The MCP transport of one server kind: POST, GET and DELETE on `/:{param}`, answered by the
 * transport itself once the gate admitted the request. The declared check is the gate's project
 * check made again on the principal it admitted, so these routes say what they need like any other.
 */
function serverRoutes(
  s: { mcp: Pick<McpService, 'handle'> },
  on: {
    param: string;
    params: z.ZodType<Record<string, string>>;
    description: string;
    whose: string;
    /** The server's record by id (null: "<name> not found."), and what its project check needs. */
    find: (id: string) => Promise<ProjectOwned | null>;
    name: string;
    permission: ProjectAction;
  },
): RouteDeclaration[] {
  const serve = (summary: string, method: RouteDeclaration['method']) =>
    route({
      method,
      path: `/:${on.param}`,
      summary,
      description: on.description,
      permission: on.permission,
      authorize: { resource: ({ params }) => on.find(params[on.param]!), name: on.name },
      params: on.params,
      streams: 'text/event-stream',
      // A session (and its event stream) lives on the worker that created it: the project's owner.
      onOwner: true,
      async handle(ctx: Context) {
        const c = ctx.state.mcp as McpContext | undefined;
        if (!c) throw new Error('the MCP gate is not mounted');
        ctx.respond = false;
        await s.mcp.handle(ctx.req, ctx.res, ctx.request.body, c);
      },
    });
  return [
    serve(`Send JSON-RPC messages to ${on.whose} MCP server`, 'post'),
    serve(`Open the server-to-client event stream of ${on.whose} MCP session`, 'get'),
    serve(`End ${on.whose} MCP session`, 'delete'),
  ];
}

/**
 * POST|GET|DELETE /mcp/e/{endpoint_id}: an endpoint's MCP server. content:read, as the gate
 * requires of a user (an endpoint's own key holds it in its scope).
 */
export function mcpServerRoutes(s: { mcp: Pick<McpService, 'handle' | 'endpoints'> }): RouteGroup {
  const find = (id: string) => onConnection(s.mcp.endpoints.find(id));
  return {
    prefix: '/mcp/e',
    tag: 'MCP server',
    routes: serverRoutes(s, { param: 'endpoint_id', params: endpointParams, description, whose: "an endpoint's", find, name: 'MCP endpoint', permission: 'content:read' }),
  };
}

/**
 * POST|GET|DELETE /mcp/a/{agent_id}: an agent's MCP server, offering its bound tools. project:read:
 * for a member it carries content:read (what the gate requires), and an agent's own key holds it
 * (its content reach is its accesses, never content:read of its own).
 */
export function agentMcpServerRoutes(s: { mcp: Pick<McpService, 'handle'>; agents: { agents: Pick<AgentsService['agents'], 'find'> } }): RouteGroup {
  const find = (id: string) => onConnection(s.agents.agents.find(id));
  return {
    prefix: '/mcp/a',
    tag: 'MCP server',
    routes: serverRoutes(s, { param: 'agent_id', params: agentParams, description: agentDescription, whose: "an agent's", find, name: 'Agent', permission: 'project:read' }),
  };
}
