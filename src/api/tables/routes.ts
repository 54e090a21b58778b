import { tablePath, type Tables } from '../../data/tables/tables.ts';
import { ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { grantOf } from '../../policies/contentAccess.ts';
import { presentChange, presentTable, presentTableList } from './presenter.ts';
import * as schema from './schemas.ts';

const pointerNote =
  'Pointers are RFC 6901 (`~0` is `~`, `~1` is `/`); `""` or `/` is the whole table. A missing member is 404, a pointer through a string, number, boolean or null is 422.';
const changeNote =
  "Each change is one version of the table's json node (actor: the caller), so the node's history, diff and rollback are the table's. " +
  "`base_version` (the node's version) makes a stale change 409; with a json_schema, a change the schema refuses is 422 with the schema's errors. " +
  "A table whose node is in the trash answers 409 (restore the node), one whose node was permanently deleted 404.";

/**
 * Tables (spec 4.5): JSON data addressed by JSON Pointer, kept in a json node of a project.
 * Reading needs content:read and changing content:write on the node's path (the content-access
 * policy, so a key's scope applies): the routes check the table's project, the tables service
 * the node under that grant.
 */
export function tableRoutes(s: { tables: Tables }): RouteGroup {
  const t = () => s.tables;
  /** A table by id: one of a project the caller cannot see is "Table not found." */
  const table = { resource: ({ params }: { params: { table_id: string } }) => t().find(params.table_id), name: 'Table' };
  return {
    prefix: '/tables',
    tag: 'Tables',
    routes: [
      route({
        method: 'get',
        path: '/',
        summary: "List the tables of an organization's projects (org_id) or of one project (project_id)",
        description: "Needs content:read on the project, or a role in the organization (then the tables of the organization's projects the caller may read).",
        authorize: { checkedBy: 'one project or a whole organization, as the query says: the tables service checks whichever is named' },
        query: schema.listTablesQuery,
        response: schema.tableList,
        async handle(ctx, { query }) {
          const p = principalOf(ctx);
          ok(ctx, presentTableList(query.project_id ? await t().listForProject(p, query.project_id) : await t().listForOrg(p, query.org_id!)));
        },
      }),
      route({
        method: 'post',
        path: '/',
        summary: 'Create a table: a new json node (default tables/<slug>.json) holding data (default []), optionally with a JSON Schema',
        description: 'The schema is compiled when it is set (422 when ajv refuses it) and the initial data must match it. Nothing may be at the path yet (409).',
        permission: 'content:write',
        authorize: { content: ({ body }) => body.project_id, paths: ({ body }) => [tablePath(body)] },
        status: 201,
        body: schema.createTableBody,
        response: schema.tableSchema,
        async handle(ctx, { body, access: grant }) {
          const view = await t().create(grant, {
            name: body.name,
            path: body.path,
            description: body.description,
            data: body.data,
            jsonSchema: body.json_schema,
          });
          ok(ctx, presentTable(view), 'Table created', 201);
        },
      }),
      route({
        method: 'get',
        path: '/:table_id',
        summary: 'Read a table (its record, with the path and version of its node)',
        permission: 'content:read',
        authorize: table,
        params: schema.tableParams,
        response: schema.tableSchema,
        async handle(ctx, { params, access }) {
          ok(ctx, presentTable(await t().get(grantOf(access, 'content:read'), params.table_id)));
        },
      }),
      route({
        method: 'put',
        path: '/:table_id',
        summary: "Change a table's name, description or JSON Schema (null removes it)",
        description: 'A new schema must accept the data as it is: 422 with the schema errors otherwise. The name is the record\'s; the node keeps its path.',
        permission: 'content:write',
        authorize: table,
        params: schema.tableParams,
        body: schema.updateTableBody,
        response: schema.tableSchema,
        async handle(ctx, { params, body, access }) {
          const view = await t().update(grantOf(access, 'content:write'), params.table_id, { name: body.name, description: body.description, jsonSchema: body.json_schema });
          ok(ctx, presentTable(view), 'Table updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:table_id',
        summary: "Delete a table: its node goes to the trash (restorable there as a json node) and the record goes",
        permission: 'content:write',
        authorize: table,
        params: schema.tableParams,
        response: schema.tableDeleted,
        async handle(ctx, { params, access }) {
          const { trashed } = await t().delete(grantOf(access, 'content:write'), params.table_id);
          ok(ctx, { id: params.table_id, deleted: true as const, trash_path: trashed?.path ?? null }, 'Table deleted');
        },
      }),
      route({
        method: 'get',
        path: '/:table_id/data',
        summary: 'The value at a JSON Pointer (path; default: the whole table)',
        description: pointerNote,
        permission: 'content:read',
        authorize: table,
        params: schema.tableParams,
        query: schema.readDataQuery,
        response: schema.dataSchema,
        async handle(ctx, { params, query, access }) {
          const r = await t().read(grantOf(access, 'content:read'), params.table_id, query.path);
          ok(ctx, { table_id: r.view.table.id, node_id: r.view.table.node_id, version: r.view.node!.version, pointer: r.pointer, value: r.value });
        },
      }),
      route({
        method: 'post',
        path: '/:table_id/data',
        summary: 'Append data to the array at path, or merge the keys of data into the object at path',
        description: `${pointerNote} ${changeNote}`,
        permission: 'content:write',
        authorize: table,
        params: schema.tableParams,
        body: schema.appendDataBody,
        response: schema.changeSchema,
        async handle(ctx, { params, body, access }) {
          const c = await t().append(grantOf(access, 'content:write'), params.table_id, body.path, body.data, body.base_version);
          ok(ctx, presentChange(c), c.changed ? 'Data appended' : 'Nothing changed; no new version');
        },
      }),
      route({
        method: 'put',
        path: '/:table_id/data',
        summary: 'Replace the member at path with value, or create it (its parent must exist; "-" appends to an array)',
        description: `${pointerNote} ${changeNote} Answers 201 when the member was created, 200 when it was replaced.`,
        permission: 'content:write',
        authorize: table,
        params: schema.tableParams,
        body: schema.putDataBody,
        response: schema.changeSchema,
        alsoStatus: 201,
        async handle(ctx, { params, body, access }) {
          const c = await t().put(grantOf(access, 'content:write'), params.table_id, body.path, body.value, body.base_version);
          ok(ctx, presentChange(c), c.created ? 'Member created' : c.changed ? 'Member replaced' : 'Nothing changed; no new version', c.created ? 201 : 200);
        },
      }),
      route({
        method: 'delete',
        path: '/:table_id/data',
        summary: 'Remove the member at path (an array closes the gap)',
        description: `${pointerNote} ${changeNote}`,
        permission: 'content:write',
        authorize: table,
        params: schema.tableParams,
        query: schema.deleteDataQuery,
        response: schema.changeSchema,
        async handle(ctx, { params, query, access }) {
          const c = await t().remove(grantOf(access, 'content:write'), params.table_id, query.path, query.base_version);
          ok(ctx, presentChange(c), 'Member deleted');
        },
      }),
    ],
  };
}
