import type { Context } from 'koa';
import type { z } from 'zod';
import type { Settings } from '../../config/settings.ts';
import { created, ok } from '../../http/envelope.ts';
import { pageInfo } from '../../http/pagination.ts';
import { route, type RouteDeclaration, type RouteGroup } from '../../http/routes/declaration.ts';
import { redactUrl } from '../../logging/redact.ts';
import type { McpProxyService } from '../../mcp/proxy/service.ts';
import type { ProxyServer } from '../../mcp/proxy/proxyStore.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import * as schema from './proxySchemas.ts';

const proxyUrl = (baseUrl: string, id: string) => `${baseUrl}/api/v1/mcp/proxy/${encodeURIComponent(id)}/mcp`;

/** A proxy server as answered: header names only, never their values. */
function present(p: ProxyServer, baseUrl: string): z.output<typeof schema.proxyServerSchema> {
  return {
    id: p.id,
    project_id: p.project_id,
    name: p.name,
    url: redactUrl(p.url),
    header_names: Object.keys(p.headers),
    proxy_url: proxyUrl(baseUrl, p.id),
    transport: 'streamable-http',
    created_by: p.created_by,
    created_at: p.created_at,
    updated_at: p.updated_at,
  };
}

const forwardDescription =
  "The Streamable HTTP transport of the registered MCP server, forwarded: the body and the transport's headers (`Mcp-Session-Id`, " +
  '`Mcp-Protocol-Version`, `Accept`, `Content-Type`, `Last-Event-ID`) go on with the headers stored for the server; your own ' +
  'Authorization does not. Authorization: Bearer <a user token that may read the project, or an access key of the project>. ' +
  'A refused or unreachable server is 502 UPSTREAM_ERROR.';

/**
 * The MCP proxy (spec 4.9, issue 13): external MCP servers registered per project (managing
 * them needs keys:manage) and the Streamable HTTP address that forwards to each (project:read,
 * which every key of the project holds). A server in a project the caller cannot see is
 * "MCP proxy server not found.".
 */
export function mcpProxyRoutes(s: { mcpProxy: McpProxyService; settings: Pick<Settings, 'baseUrl'> }): RouteGroup {
  const servers = () => s.mcpProxy.servers;
  const show = (p: ProxyServer) => present(p, s.settings.baseUrl);
  const permission = 'keys:manage';
  const server = { resource: ({ params }: { params: { server_id: string } }) => servers().find(params.server_id), name: 'MCP proxy server' };
  const forward = (summary: string, method: RouteDeclaration['method']) =>
    route({
      method,
      path: '/:server_id/mcp',
      summary,
      description: forwardDescription,
      permission: 'project:read',
      authorize: server,
      params: schema.proxyParams,
      streams: 'text/event-stream',
      async handle(ctx: Context, { access }) {
        await s.mcpProxy.forward(access.record, ctx.req, ctx.res, ctx.request.body);
        // The forwarder wrote the answer itself.
        ctx.respond = false;
      },
    });
  return {
    prefix: '/mcp/proxy',
    tag: 'MCP proxy',
    routes: [
      route({
        method: 'get',
        path: '/',
        summary: "List a project's MCP proxy servers",
        permission,
        query: schema.listProxyQuery,
        authorize: { project: ({ query }) => query.project_id },
        response: schema.proxyListSchema,
        async handle(ctx, { query }) {
          const { items, total } = await servers().list(query.project_id, query);
          ok(ctx, { mcp_proxy_servers: items.map(show), ...pageInfo(total, query) });
        },
      }),
      route({
        method: 'post',
        path: '/',
        summary: 'Register an external MCP server on a project',
        description: 'Its header values (API keys, …) are stored encrypted and never shown again. The url must pass the outbound guard (422 naming `url`).',
        permission,
        status: 201,
        body: schema.createProxyBody,
        authorize: { project: ({ body }) => body.project_id },
        response: schema.proxyServerSchema,
        async handle(ctx, { body, access }) {
          const p = await servers().create(access.principal, { projectId: body.project_id, name: body.name, url: body.url, headers: body.headers });
          created(ctx, show(p), 'MCP proxy server registered');
        },
      }),
      route({
        method: 'get',
        path: '/:server_id',
        summary: 'Read an MCP proxy server (header names only)',
        permission,
        authorize: server,
        params: schema.proxyParams,
        response: schema.proxyServerSchema,
        handle(ctx, { access }) {
          ok(ctx, show(access.record));
        },
      }),
      route({
        method: 'put',
        path: '/:server_id',
        summary: "Change an MCP proxy server's name, url or headers",
        permission,
        authorize: server,
        params: schema.proxyParams,
        body: schema.updateProxyBody,
        response: schema.proxyServerSchema,
        async handle(ctx, { body, access }) {
          ok(ctx, show(await servers().update(access.record, body)), 'MCP proxy server updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:server_id',
        summary: 'Delete an MCP proxy server; its address stops forwarding',
        permission,
        authorize: server,
        params: schema.proxyParams,
        response: deletedSchema,
        async handle(ctx, { params, access }) {
          await servers().delete(access.record);
          ok(ctx, presentDeleted(params.server_id), 'MCP proxy server deleted');
        },
      }),
      forward("Send JSON-RPC messages to the proxied MCP server", 'post'),
      forward("Open the proxied MCP session's event stream", 'get'),
      forward('End a proxied MCP session', 'delete'),
    ],
  };
}
