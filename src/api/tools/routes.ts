import { z } from 'zod';
import type { Principal } from '../../auth/principal.ts';
import type { Services } from '../../app/services.ts';
import { DomainError } from '../../errors/domainError.ts';
import { ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { toolSchemas, toolTypes } from '../../tools/registry.ts';
import type { ToolRecord } from '../../tools/toolStore.ts';
import type { NewTool } from '../../tools/tools.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { presentTool, presentToolList } from './presenter.ts';
import * as schema from './schemas.ts';

/**
 * Tools (spec 4.9, issue 11). Managing tools needs content:write on their project; calling one
 * runs it as the caller (their rights and the tool's subtree both apply) through the same
 * `Tools.call` that MCP and agents use.
 */
export function toolRoutes(s: Services): RouteGroup {
  const t = () => s.tools.tools;
  /** What both create routes ask the tools service for. */
  const newTool = (body: z.output<typeof schema.createToolBody> | z.output<typeof schema.createSearchToolBody>, type: string): NewTool => ({
    projectId: body.project_id, nodeId: body.node_id, name: body.name, description: body.description, type, config: body.config,
  });
  /** A list of tools of one node or project; the tools service checks the caller's access. */
  const toolsOf = <P extends z.ZodType>(path: string, summary: string, permission: string, params: P, list: (p: Principal, params: z.output<P>) => ToolRecord[]) =>
    route({
      method: 'get',
      path,
      summary,
      permission,
      params,
      response: schema.toolList,
      handle(ctx, input) {
        ok(ctx, presentToolList(list(principalOf(ctx), input.params)));
      },
    });
  return {
    prefix: '/tools',
    tag: 'Tools',
    routes: [
      route({
        method: 'get',
        path: '/',
        summary: "List tools of an organization's projects (org_id) or of one project (project_id)",
        permission: 'project:read',
        query: schema.listToolsQuery,
        response: schema.toolList,
        handle(ctx, { query }) {
          const p = principalOf(ctx);
          ok(ctx, presentToolList(query.project_id ? t().listForProject(p, query.project_id) : t().listForOrg(p, query.org_id!)));
        },
      }),
      route({
        method: 'get',
        path: '/types',
        summary: 'The tool types with the JSON Schemas of their arguments and config',
        response: schema.toolTypeList,
        handle(ctx) {
          principalOf(ctx);
          const types = [...toolTypes.values()].map((tt) => ({ type: tt.type, summary: tt.summary, binds: tt.binds, input_schema: toolSchemas(tt.type).input, config_schema: toolSchemas(tt.type).config }));
          ok(ctx, { types });
        },
      }),
      toolsOf('/by-node/:node_id', 'Tools bound to a node', 'content:read', schema.nodeParams, (p, { node_id }) => t().listForNode(p, node_id)),
      toolsOf('/by-project/:project_id', "A project's tools", 'project:read', schema.projectParams, (p, { project_id }) => t().listForProject(p, project_id)),
      route({
        method: 'post',
        path: '/',
        summary: 'Create a tool bound to a node (type: ls, cat, tree, write, search, query_json, shell)',
        permission: 'content:write',
        status: 201,
        body: schema.createToolBody,
        response: schema.toolSchema,
        handle(ctx, { body }) {
          const tool = t().create(principalOf(ctx), newTool(body, body.type));
          ok(ctx, presentTool(tool), 'Tool created', 201);
        },
      }),
      route({
        method: 'post',
        path: '/search',
        summary: 'Create a search tool; its index is built asynchronously (202, index status pending)',
        permission: 'content:write',
        status: 202,
        body: schema.createSearchToolBody,
        response: schema.toolWithIndex,
        handle(ctx, { body }) {
          const p = principalOf(ctx);
          const tool = t().create(p, newTool(body, 'search'));
          ok(ctx, { tool: presentTool(tool), index: t().searchIndex(p, tool.id) }, 'Search tool created; its index is being built', 202);
        },
      }),
      route({
        method: 'get',
        path: '/:tool_id',
        summary: 'Read a tool',
        permission: 'project:read',
        params: schema.toolParams,
        response: schema.toolSchema,
        handle(ctx, { params }) {
          ok(ctx, presentTool(t().visible(principalOf(ctx), params.tool_id)));
        },
      }),
      route({
        method: 'put',
        path: '/:tool_id',
        summary: "Change a tool's name, description or config",
        permission: 'content:write',
        params: schema.toolParams,
        body: schema.updateToolBody,
        response: schema.toolSchema,
        handle(ctx, { params, body }) {
          ok(ctx, presentTool(t().update(principalOf(ctx), params.tool_id, body)), 'Tool updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:tool_id',
        summary: 'Delete a tool (the last search tool of a project deletes its index)',
        permission: 'content:write',
        params: schema.toolParams,
        response: deletedSchema,
        async handle(ctx, { params }) {
          await t().delete(principalOf(ctx), params.tool_id);
          ok(ctx, presentDeleted(params.tool_id), 'Tool deleted');
        },
      }),
      route({
        method: 'post',
        path: '/:tool_id/call',
        summary: "Run a tool as the caller with `arguments` (validated against the type's input schema)",
        description: 'The same function MCP endpoints and agents call. Writes through a tool are versions whose actor is the caller.',
        permission: 'content:read',
        params: schema.toolParams,
        body: schema.callToolBody,
        response: schema.callResult,
        async handle(ctx, { params, body }) {
          const p = principalOf(ctx);
          const tool = t().visible(p, params.tool_id);
          ok(ctx, { tool_id: tool.id, type: tool.type, result: await t().call(p, tool, body.arguments) });
        },
      }),
      route({
        method: 'post',
        path: '/:tool_id/search',
        summary: 'Query a search tool (short form of /call): {query, top_k?, mode?, path_prefix?}',
        permission: 'content:read',
        params: schema.toolParams,
        body: z.record(z.string(), z.unknown()),
        response: schema.searchResultSchema,
        async handle(ctx, { params, body }) {
          const p = principalOf(ctx);
          const tool = t().visible(p, params.tool_id);
          if (tool.type !== 'search') throw new DomainError('NOT_FOUND', 'This tool is not a search tool.');
          ok(ctx, await t().call(p, tool, body));
        },
      }),
      route({
        method: 'get',
        path: '/:tool_id/search-index',
        summary: "A search tool's index state: status, counts, lag behind the project, mode",
        permission: 'project:read',
        params: schema.toolParams,
        response: schema.indexStateSchema,
        handle(ctx, { params }) {
          ok(ctx, t().searchIndex(principalOf(ctx), params.tool_id));
        },
      }),
    ],
  };
}
