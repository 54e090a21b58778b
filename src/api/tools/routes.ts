import { z } from 'zod';
import { DomainError } from '../../errors/domainError.ts';
import { ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { toolSchemas, toolTypes } from '../../tools/registry.ts';
import type { ToolsService } from '../../tools/service.ts';
import type { ContentStore } from '../../content/contentStore.ts';
import type { NewTool } from '../../tools/tools.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { presentTool, presentToolList } from './presenter.ts';
import * as schema from './schemas.ts';

/**
 * Tools (spec 4.9, issue 11). Managing tools needs content:write on their project; calling one
 * runs it as the caller (their rights and the tool's subtree both apply) through the same
 * `Tools.call` that MCP and agents use. A tool in a project the caller cannot see is "Tool not found.".
 */
export function toolRoutes(s: { tools: Pick<ToolsService, 'tools'>; content: Pick<ContentStore, 'findById'> }): RouteGroup {
  const t = () => s.tools.tools;
  /** The project a new tool would belong to, only to run its creation on that project's owner (a search tool's index lives there). */
  const placedIn = ({ body }: { body: { node_id?: string | null; project_id?: string } }) => (body.node_id ? s.content.findById(body.node_id)?.projectId : body.project_id);
  const tool = { resource: ({ params }: { params: { tool_id: string } }) => t().find(params.tool_id), name: 'Tool' };
  /** What both create routes ask the tools service for. */
  const newTool = (body: z.output<typeof schema.createToolBody> | z.output<typeof schema.createSearchToolBody>, type: string): NewTool => ({
    projectId: body.project_id, nodeId: body.node_id, name: body.name, description: body.description, type, config: body.config,
  });
  return {
    prefix: '/tools',
    tag: 'Tools',
    routes: [
      route({
        method: 'get',
        path: '/',
        summary: "List tools of an organization's projects (org_id) or of one project (project_id)",
        // Either an organization or a project is named, and a key's list by organization is its own project's tools: no one check fits.
        authorize: { checkedBy: 'the list names an organization or a project, and Tools.listForOrg / listForProject check whichever is named' },
        query: schema.listToolsQuery,
        response: schema.toolList,
        async handle(ctx, { query }) {
          const p = principalOf(ctx);
          ok(ctx, presentToolList(await (query.project_id ? t().listForProject(p, query.project_id) : t().listForOrg(p, query.org_id!))));
        },
      }),
      route({
        method: 'get',
        path: '/types',
        summary: 'The tool types with the JSON Schemas of their arguments and config',
        authorize: { signedIn: 'the tool types of this server, the same for every caller' },
        response: schema.toolTypeList,
        handle(ctx) {
          const types = [...toolTypes.values()].map((tt) => ({ type: tt.type, summary: tt.summary, binds: tt.binds, input_schema: toolSchemas(tt.type).input, config_schema: toolSchemas(tt.type).config }));
          ok(ctx, { types });
        },
      }),
      route({
        method: 'get',
        path: '/by-node/:node_id',
        summary: 'Tools bound to a node',
        permission: 'content:read',
        authorize: { node: ({ params }) => params.node_id },
        params: schema.nodeParams,
        response: schema.toolList,
        async handle(ctx, { params }) {
          ok(ctx, presentToolList(await t().listByNode(params.node_id)));
        },
      }),
      route({
        method: 'get',
        path: '/by-project/:project_id',
        summary: "A project's tools",
        permission: 'project:read',
        authorize: { project: ({ params }) => params.project_id },
        params: schema.projectParams,
        response: schema.toolList,
        async handle(ctx, { params }) {
          ok(ctx, presentToolList(await t().listByProject(params.project_id)));
        },
      }),
      route({
        method: 'post',
        path: '/',
        summary: 'Create a tool bound to a node (type: ls, cat, tree, write, search, grep, query_json, shell)',
        // The project is the node's (node_id) or the one named (project_id, for the whole project).
        authorize: { checkedBy: "the tool's project is its node's or the one named: Tools.create checks content:write there and that the caller reaches the node", placedIn },
        status: 201,
        body: schema.createToolBody,
        response: schema.toolSchema,
        async handle(ctx, { body }) {
          const tool = await t().create(principalOf(ctx), newTool(body, body.type));
          ok(ctx, presentTool(tool), 'Tool created', 201);
        },
      }),
      route({
        method: 'post',
        path: '/search',
        summary: 'Create a search tool; its index is built asynchronously (202, index status pending)',
        // As POST /tools: an unseen node is "Node not found." before anything is said about the project.
        authorize: { checkedBy: "the tool's project is its node's (checked against project_id) or the one named: Tools.create checks content:write there and that the caller reaches the node", placedIn },
        status: 202,
        body: schema.createSearchToolBody,
        response: schema.toolWithIndex,
        async handle(ctx, { body }) {
          const tool = await t().create(principalOf(ctx), newTool(body, 'search'));
          ok(ctx, { tool: presentTool(tool), index: t().searchIndex(tool) }, 'Search tool created; its index is being built', 202);
        },
      }),
      route({
        method: 'get',
        path: '/:tool_id',
        summary: 'Read a tool',
        permission: 'project:read',
        authorize: tool,
        params: schema.toolParams,
        response: schema.toolSchema,
        handle(ctx, { access }) {
          ok(ctx, presentTool(access.record));
        },
      }),
      route({
        method: 'put',
        path: '/:tool_id',
        summary: "Change a tool's name, description or config",
        permission: 'content:write',
        authorize: tool,
        params: schema.toolParams,
        body: schema.updateToolBody,
        response: schema.toolSchema,
        async handle(ctx, { body, access }) {
          ok(ctx, presentTool(await t().update(access.record, body)), 'Tool updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:tool_id',
        summary: 'Delete a tool (the last search tool of a project deletes its index)',
        permission: 'content:write',
        authorize: tool,
        params: schema.toolParams,
        response: deletedSchema,
        async handle(ctx, { params, access }) {
          await t().delete(access.record);
          ok(ctx, presentDeleted(params.tool_id), 'Tool deleted');
        },
      }),
      route({
        method: 'post',
        path: '/:tool_id/call',
        summary: "Run a tool as the caller with `arguments` (validated against the type's input schema)",
        description: 'The same function MCP endpoints and agents call. Writes through a tool are versions whose actor is the caller.',
        permission: 'project:read',
        authorize: tool,
        params: schema.toolParams,
        body: schema.callToolBody,
        response: schema.callResult,
        async handle(ctx, { body, access }) {
          const { record } = access;
          ok(ctx, { tool_id: record.id, type: record.type, result: await t().call(access.principal, record, body.arguments) });
        },
      }),
      route({
        method: 'post',
        path: '/:tool_id/search',
        summary: 'Query a search tool (short form of /call): {query, top_k?, mode?, path_prefix?}',
        permission: 'project:read',
        authorize: tool,
        params: schema.toolParams,
        body: z.record(z.string(), z.unknown()),
        response: schema.searchResultSchema,
        async handle(ctx, { body, access }) {
          if (access.record.type !== 'search') throw new DomainError('NOT_FOUND', 'This tool is not a search tool.');
          ok(ctx, await t().call(access.principal, access.record, body));
        },
      }),
      route({
        method: 'get',
        path: '/:tool_id/search-index',
        summary: "A search tool's index state: status, counts, lag behind the project, mode",
        permission: 'project:read',
        authorize: tool,
        // The index is kept, and its state known, by the project's owner (several workers).
        onOwner: true,
        params: schema.toolParams,
        response: schema.indexStateSchema,
        handle(ctx, { access }) {
          ok(ctx, t().searchIndex(access.record));
        },
      }),
    ],
  };
}
