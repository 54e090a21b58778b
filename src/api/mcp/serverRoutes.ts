import type { Context, Middleware } from 'koa';
import type { Services } from '../../app/services.ts';
import { bearerToken } from '../../auth/authenticator.ts';
import { looksLikeAccessKey } from '../../auth/accessKeys.ts';
import { admitted } from '../../http/middleware/authenticate.ts';
import { API_PREFIX } from '../../http/apiPrefix.ts';
import { route, type RouteDeclaration, type RouteGroup } from '../../http/routes/declaration.ts';
import type { McpContext } from '../../mcp/service.ts';
import { agentParams } from './agentSchemas.ts';
import { endpointParams } from './schemas.ts';

/** An endpoint's server (`e`) or an agent's (`a`). */
const MCP_PATH = new RegExp(`^${API_PREFIX}/mcp/(e|a)/([^/]+)/?$`);

/**
 * The gate of the MCP servers, mounted before the app's authentication: it knows the endpoint
 * or agent, so a paused one's own key is 403 (not the 401 of an unknown key), a deleted one 404,
 * and a wrong key 401, all before the body is read or any MCP message is processed.
 */
export function mcpGate(s: Services): Middleware {
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

/** The MCP transport of one server kind: POST, GET and DELETE on `/:{param}`, answered by the transport itself once the gate admitted the request. */
function serverRoutes(s: Services, on: { param: string; params: RouteDeclaration['params']; description: string; whose: string }): RouteDeclaration[] {
  const serve = (summary: string, method: RouteDeclaration['method']) =>
    route({
      method,
      path: `/:${on.param}`,
      summary,
      description: on.description,
      permission: 'content:read',
      params: on.params,
      streams: 'text/event-stream',
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

/** POST|GET|DELETE /mcp/e/{endpoint_id}: an endpoint's MCP server. */
export function mcpServerRoutes(s: Services): RouteGroup {
  return { prefix: '/mcp/e', tag: 'MCP server', routes: serverRoutes(s, { param: 'endpoint_id', params: endpointParams, description, whose: "an endpoint's" }) };
}

/** POST|GET|DELETE /mcp/a/{agent_id}: an agent's MCP server, offering its bound tools. */
export function agentMcpServerRoutes(s: Services): RouteGroup {
  return { prefix: '/mcp/a', tag: 'MCP server', routes: serverRoutes(s, { param: 'agent_id', params: agentParams, description: agentDescription, whose: "an agent's" }) };
}
