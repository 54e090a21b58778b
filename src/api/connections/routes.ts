import Router from '@koa/router';
import type { Context } from 'koa';
import type { Services } from '../../app/services.ts';
import type { ConnectionRecord } from '../../domain/connections/connectionRecord.ts';
import { created, ok } from '../../http/envelope.ts';
import { asAppError, notFound } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo } from '../../http/pagination.ts';
import { parseInput } from '../../http/validate.ts';
import { presentConnection } from './presenter.ts';
import { createConnectionBody, listConnectionsQuery, updateConnectionBody } from './schemas.ts';

/**
 * Connections (spec 4.6) under `prefix`: the same handlers answer under `/connections` and
 * `/access`. Every operation needs keys:manage on the connection's project.
 */
export function connectionRoutes(s: Services, prefix: '/connections' | '/access'): Router {
  const router = new Router({ prefix });

  /** A connection the caller may manage; one in a project they cannot see is "not found", not "project not found". */
  function manageable(ctx: Context): ConnectionRecord {
    const principal = principalOf(ctx);
    const connection = s.connections.find(ctx.params.id);
    if (!connection) throw notFound('Connection');
    try {
      s.authorizer.requireProject(principal, connection.project_id, 'keys:manage');
    } catch (err) {
      if (asAppError(err)?.code === 'NOT_FOUND') throw notFound('Connection');
      throw err;
    }
    return connection;
  }

  router.get('/', (ctx) => {
    const query = parseInput(listConnectionsQuery, ctx.query, 'query');
    s.authorizer.requireProject(principalOf(ctx), query.project_id, 'keys:manage');
    const { items, total } = s.connections.listByProject(query.project_id, { kind: query.kind }, query);
    ok(ctx, { connections: items.map(presentConnection), ...pageInfo(total, query) });
  });

  router.post('/', (ctx) => {
    const principal = principalOf(ctx);
    const body = parseInput(createConnectionBody, ctx.request.body, 'body');
    s.authorizer.requireProject(principal, body.project_id, 'keys:manage');
    const { connection, key } = s.connections.createConnection({
      projectId: body.project_id,
      kind: body.kind,
      name: body.name,
      scopePath: body.scope_path,
      mode: body.mode,
      createdBy: principal.kind === 'user' ? principal.id : null,
    });
    created(ctx, { connection: presentConnection(connection), key }, 'Connection created; the key is shown only this once');
  });

  router.get('/:id', (ctx) => {
    ok(ctx, presentConnection(manageable(ctx)));
  });

  router.patch('/:id', (ctx) => {
    const connection = manageable(ctx);
    const body = parseInput(updateConnectionBody, ctx.request.body, 'body');
    const updated = s.connections.update(connection.id, { name: body.name, scopePath: body.scope_path, mode: body.mode, status: body.status });
    ok(ctx, presentConnection(updated), 'Connection updated');
  });

  router.delete('/:id', (ctx) => {
    const connection = manageable(ctx);
    s.connections.delete(connection.id);
    ok(ctx, { id: connection.id, deleted: true }, 'Connection deleted; its key no longer works');
  });

  router.post('/:id/regenerate-key', (ctx) => {
    const { connection, key } = s.connections.regenerateKey(manageable(ctx).id);
    ok(ctx, { connection: presentConnection(connection), key }, 'New key issued; the previous key no longer works');
  });

  return router;
}
