import type { AccessConnectionStore } from '../../domain/connections/accessConnectionStore.ts';
import { created, ok } from '../../http/envelope.ts';
import { pageInfo } from '../../http/pagination.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { presentConnection } from './presenter.ts';
import * as schema from './schemas.ts';

/**
 * Connections (spec 4.6) under `prefix`: the same declarations answer under `/connections` and
 * `/access`. Every operation needs keys:manage on the connection's project.
 */
export function connectionRoutes(s: { connections: AccessConnectionStore }, prefix: '/connections' | '/access'): RouteGroup {
  const permission = 'keys:manage';
  /** A connection by id: one in a project the caller cannot manage is "Connection not found." */
  const connection = { resource: ({ params }: { params: { id: string } }) => s.connections.find(params.id), name: 'Connection' };
  return {
    prefix,
    tag: prefix === '/connections' ? 'Connections' : 'Connections (alias /access)',
    routes: [
      route({
        method: 'get',
        path: '/',
        summary: "List a project's connections",
        permission,
        authorize: { project: ({ query }) => query.project_id },
        query: schema.listConnectionsQuery,
        response: schema.connectionList,
        async handle(ctx, { query }) {
          const { items, total } = await s.connections.listByProject(query.project_id, { kind: query.kind }, query);
          ok(ctx, { connections: items.map(presentConnection), ...pageInfo(total, query) });
        },
      }),
      route({
        method: 'post',
        path: '/',
        summary: 'Create an access key (an api connection); the key is shown once',
        permission,
        authorize: { project: ({ body }) => body.project_id },
        status: 201,
        body: schema.createConnectionBody,
        response: schema.connectionWithKey,
        async handle(ctx, { body, access }) {
          const { connection, key } = await s.connections.createConnection({
            projectId: body.project_id,
            kind: body.kind,
            name: body.name,
            scopePath: body.scope_path,
            mode: body.mode,
            createdBy: access.principal.kind === 'user' ? access.principal.id : null,
          });
          created(ctx, { connection: presentConnection(connection), key }, 'Connection created; the key is shown only this once');
        },
      }),
      route({
        method: 'get',
        path: '/:id',
        summary: 'Read a connection',
        permission,
        authorize: connection,
        params: schema.connectionParams,
        response: schema.connectionSchema,
        handle(ctx, { access }) {
          ok(ctx, presentConnection(access.record));
        },
      }),
      route({
        method: 'patch',
        path: '/:id',
        summary: "Change a connection's name, scope, mode or status",
        permission,
        authorize: connection,
        params: schema.connectionParams,
        body: schema.updateConnectionBody,
        response: schema.connectionSchema,
        async handle(ctx, { body, access }) {
          const updated = await s.connections.update(access.record.id, { name: body.name, scopePath: body.scope_path, mode: body.mode, status: body.status });
          ok(ctx, presentConnection(updated), 'Connection updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:id',
        summary: 'Delete a connection; its key stops working',
        permission,
        authorize: connection,
        params: schema.connectionParams,
        response: deletedSchema,
        async handle(ctx, { params, access }) {
          await s.connections.delete(access.record.id);
          ok(ctx, presentDeleted(params.id), 'Connection deleted; its key no longer works');
        },
      }),
      route({
        method: 'post',
        path: '/:id/regenerate-key',
        summary: 'Issue a new key; the previous one stops working',
        permission,
        authorize: connection,
        params: schema.connectionParams,
        response: schema.connectionWithKey,
        async handle(ctx, { access }) {
          const { connection, key } = await s.connections.regenerateKey(access.record.id);
          ok(ctx, { connection: presentConnection(connection), key }, 'New key issued; the previous key no longer works');
        },
      }),
    ],
  };
}
