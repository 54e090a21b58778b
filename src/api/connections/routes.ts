import type { Context } from 'koa';
import type { Services } from '../../app/services.ts';
import type { ConnectionRecord } from '../../domain/connections/connectionRecord.ts';
import { created, ok } from '../../http/envelope.ts';
import { asAppError, notFound } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo } from '../../http/pagination.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { presentConnection } from './presenter.ts';
import * as schema from './schemas.ts';

/**
 * Connections (spec 4.6) under `prefix`: the same declarations answer under `/connections` and
 * `/access`. Every operation needs keys:manage on the connection's project.
 */
export function connectionRoutes(s: Services, prefix: '/connections' | '/access'): RouteGroup {
  /** A connection the caller may manage; one in a project they cannot see is "not found", not "project not found". */
  function manageable(ctx: Context, id: string): ConnectionRecord {
    const connection = s.connections.find(id);
    if (!connection) throw notFound('Connection');
    try {
      s.authorizer.requireProject(principalOf(ctx), connection.project_id, 'keys:manage');
    } catch (err) {
      if (asAppError(err)?.code === 'NOT_FOUND') throw notFound('Connection');
      throw err;
    }
    return connection;
  }

  const permission = 'keys:manage';
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
        handle(ctx, { query }) {
          const { items, total } = s.connections.listByProject(query.project_id, { kind: query.kind }, query);
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
        handle(ctx, { body }) {
          const principal = principalOf(ctx);
          const { connection, key } = s.connections.createConnection({
            projectId: body.project_id,
            kind: body.kind,
            name: body.name,
            scopePath: body.scope_path,
            mode: body.mode,
            createdBy: principal.kind === 'user' ? principal.id : null,
          });
          created(ctx, { connection: presentConnection(connection), key }, 'Connection created; the key is shown only this once');
        },
      }),
      route({
        method: 'get',
        path: '/:id',
        summary: 'Read a connection',
        permission,
        params: schema.connectionParams,
        response: schema.connectionSchema,
        handle(ctx, { params }) {
          ok(ctx, presentConnection(manageable(ctx, params.id)));
        },
      }),
      route({
        method: 'patch',
        path: '/:id',
        summary: "Change a connection's name, scope, mode or status",
        permission,
        params: schema.connectionParams,
        body: schema.updateConnectionBody,
        response: schema.connectionSchema,
        handle(ctx, { params, body }) {
          const connection = manageable(ctx, params.id);
          const updated = s.connections.update(connection.id, { name: body.name, scopePath: body.scope_path, mode: body.mode, status: body.status });
          ok(ctx, presentConnection(updated), 'Connection updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:id',
        summary: 'Delete a connection; its key stops working',
        permission,
        params: schema.connectionParams,
        response: deletedSchema,
        handle(ctx, { params }) {
          s.connections.delete(manageable(ctx, params.id).id);
          ok(ctx, presentDeleted(params.id), 'Connection deleted; its key no longer works');
        },
      }),
      route({
        method: 'post',
        path: '/:id/regenerate-key',
        summary: 'Issue a new key; the previous one stops working',
        permission,
        params: schema.connectionParams,
        response: schema.connectionWithKey,
        handle(ctx, { params }) {
          const { connection, key } = s.connections.regenerateKey(manageable(ctx, params.id).id);
          ok(ctx, { connection: presentConnection(connection), key }, 'New key issued; the previous key no longer works');
        },
      }),
    ],
  };
}
