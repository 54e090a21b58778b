import type { DbConnectors } from '../../data/dbConnectors/connectors.ts';
import { withItems } from '../../presenters/items.ts';
import type { SslMode } from '../../data/dbConnectors/types.ts';
import { created, ok } from '../../http/envelope.ts';
import { pageInfo } from '../../http/pagination.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { grantOf } from '../../policies/contentAccess.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { presentConnection, presentPreview, presentSave, presentTables } from './presenter.ts';
import * as schema from './schemas.ts';

const sslMode = (ssl: boolean | SslMode | undefined): SslMode | undefined => (ssl === true ? 'verify-full' : ssl === false ? 'disable' : ssl);

/**
 * Database connectors (spec 4.10) under `prefix`: the same declarations answer under
 * `/db-connector/connections` and `/db-connector/access`. Creating and deleting need
 * keys:manage; reading tables content:read; saving content:write on the target path.
 */
export function dbConnectorRoutes(s: { dbConnectors: DbConnectors }, prefix: '/db-connector/connections' | '/db-connector/access'): RouteGroup {
  const connectors = () => s.dbConnectors;
  /** A database connection by id: one of a project the caller cannot see is "Database connection not found." */
  const connection = { resource: ({ params }: { params: { id: string } }) => connectors().find(params.id), name: 'Database connection' };
  return {
    prefix,
    tag: prefix === '/db-connector/connections' ? 'Database connectors' : 'Database connectors (alias /db-connector/access)',
    routes: [
      route({
        method: 'get',
        path: '/',
        summary: "List a project's database connections",
        permission: 'content:read',
        authorize: { project: ({ query }) => query.project_id },
        query: schema.listQuery,
        response: schema.connectionList,
        async handle(ctx, { query }) {
          const { items, total } = await connectors().list(query.project_id, query);
          ok(ctx, { ...withItems('connections', items.map(presentConnection)), ...pageInfo(total, query) });
        },
      }),
      route({
        method: 'post',
        path: '/',
        summary: 'Create a database connection (PostgreSQL, MySQL/MariaDB or SQLite); it is tested before it is saved',
        description:
          'A connection that cannot connect (wrong password, unknown database, unreachable host within 5 s) is 422 naming the field, and nothing is saved. ' +
          'The password is stored encrypted and never returned. Every session the connector opens is read-only, with a statement timeout and a row cap.',
        permission: 'keys:manage',
        authorize: { project: ({ body }) => body.project_id },
        status: 201,
        body: schema.createBody,
        response: schema.connectionSchema,
        async handle(ctx, { body, access: { principal } }) {
          const { project_id, ssl, ...rest } = body;
          const createdBy = principal.kind === 'user' ? principal.id : null;
          const connection = await connectors().create({ projectId: project_id, ...rest, ssl: sslMode(ssl) }, createdBy);
          created(ctx, presentConnection(connection), 'Database connection tested and created');
        },
      }),
      route({
        method: 'get',
        path: '/:id',
        summary: 'Read a database connection (never its password)',
        permission: 'content:read',
        authorize: connection,
        params: schema.connectionParams,
        response: schema.connectionSchema,
        handle(ctx, { access }) {
          ok(ctx, presentConnection(access.record));
        },
      }),
      route({
        method: 'delete',
        path: '/:id',
        summary: 'Delete a database connection',
        permission: 'keys:manage',
        authorize: connection,
        params: schema.connectionParams,
        response: deletedSchema,
        async handle(ctx, { params, access }) {
          await connectors().delete(access.record);
          ok(ctx, presentDeleted(params.id), 'Database connection deleted');
        },
      }),
      route({
        method: 'get',
        path: '/:id/tables',
        summary: 'Schemas, tables and views of the database, with row estimates and columns',
        permission: 'content:read',
        authorize: connection,
        params: schema.connectionParams,
        response: schema.tableList,
        async handle(ctx, { access }) {
          const { connection, ...list } = await connectors().tables(access.record);
          ok(ctx, presentTables(connection, list));
        },
      }),
      route({
        method: 'get',
        path: '/:id/tables/:table/preview',
        summary: 'The first rows of a table or view (LIMIT, never a full scan), typed',
        permission: 'content:read',
        authorize: connection,
        params: schema.tableParams,
        query: schema.previewQuery,
        response: schema.previewSchema,
        async handle(ctx, { params, query, access }) {
          ok(ctx, presentPreview(await connectors().preview(access.record, params.table, query.limit)));
        },
      }),
      route({
        method: 'post',
        path: '/:id/save',
        summary: "Save a table's first rows or a read-only query's result as a content node (one version, the caller as actor)",
        description:
          '`query` must be one read-only SELECT (or WITH … SELECT) statement; every session is read-only anyway. A result larger than the ' +
          'largest node (CNS_MAX_CONTENT_BYTES) is 413 naming how many rows fit. 201 when the node was created, 200 when it got a new version.',
        permission: 'content:write',
        // The target path is checked once normalized (422 for one that is not a path).
        authorize: connection,
        params: schema.connectionParams,
        body: schema.saveBody,
        status: 201,
        alsoStatus: 200,
        response: schema.saveResultSchema,
        async handle(ctx, { body, access }) {
          const result = await connectors().save(grantOf(access, 'content:write'), access.record, body);
          const status = result.node.version === 1 ? 201 : 200;
          ok(ctx, presentSave(result, body.format), `Saved ${result.rows} rows`, status);
        },
      }),
    ],
  };
}
