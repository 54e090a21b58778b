import type { Context, Middleware } from 'koa';
import type { Services } from '../../app/services.ts';
import { bearerToken } from '../../auth/authenticator.ts';
import { looksLikeAccessKey } from '../../auth/accessKeys.ts';
import { API_PREFIX } from '../../http/apiPrefix.ts';
import { route, type RouteDeclaration, type RouteGroup } from '../../http/routes/declaration.ts';
import type { CallContext } from '../../mcp/context.ts';
import { endpointParams } from './schemas.ts';

const MCP_PATH = new RegExp(`^${API_PREFIX}/mcp/e/([^/]+)/?$`);

/**
 * The gate of the MCP servers, mounted before the app's authentication: it knows the endpoint,
 * so a paused endpoint's own key is 403 (not the 401 of an unknown key), a deleted one 404, and
 * a wrong key 401, all before the body is read or any MCP message is processed.
 */
export function mcpGate(s: Services): Middleware {
  return async (ctx, next) => {
    const m = MCP_PATH.exec(ctx.path);
    if (m) {
      const header = ctx.get('Authorization');
      const key = ctx.get('X-Access-Key').trim();
      const token = bearerToken(header || undefined) ?? (key && looksLikeAccessKey(key) ? key : null);
      const c = await s.mcp.admit(decodeURIComponent(m[1]!), token);
      ctx.state.mcp = c;
      ctx.state.principal = c.principal;
    }
    await next();
  };
}

const description =
  'The Streamable HTTP transport of the Model Context Protocol (not an envelope): POST carries JSON-RPC messages (an `initialize` ' +
  'starts a session whose id comes back in `Mcp-Session-Id`; send it on every later request), GET opens the session\'s event stream, ' +
  'DELETE ends the session. Clients send `Accept: application/json, text/event-stream`; answers are JSON unless the client ranks ' +
  'text/event-stream first. Authorization: Bearer <the endpoint\'s key>, or a user token that may read the project.';

/** POST|GET|DELETE /mcp/e/{endpoint_id}: the admitted request goes to the MCP transport, which answers it itself. */
export function mcpServerRoutes(s: Services): RouteGroup {
  const serve = (summary: string, method: RouteDeclaration['method']) =>
    route({
      method,
      path: '/:endpoint_id',
      summary,
      description,
      permission: 'content:read',
      params: endpointParams,
      streams: 'text/event-stream',
      async handle(ctx: Context) {
        const c = ctx.state.mcp as CallContext | undefined;
        if (!c) throw new Error('the MCP gate is not mounted');
        ctx.respond = false;
        await s.mcp.handle(ctx.req, ctx.res, ctx.request.body, c);
      },
    });
  return {
    prefix: '/mcp/e',
    tag: 'MCP server',
    routes: [
      serve("Send JSON-RPC messages to an endpoint's MCP server", 'post'),
      serve("Open the MCP session's server-to-client event stream", 'get'),
      serve('End an MCP session', 'delete'),
    ],
  };
}
