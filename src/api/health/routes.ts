import { z } from 'zod';
import type { Db } from '../../db/database.ts';
import { serviceVersion } from '../../config/version.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';

export const healthSchema = z.object({ status: z.enum(['ok', 'degraded']), version: z.string(), database: z.boolean() });

/** GET /healthz: outside the base path and unauthenticated, for load balancers and orchestrators. */
export function healthRoutes(s: { db: Db }): RouteGroup {
  return {
    prefix: '',
    server: '/',
    tag: 'Health',
    routes: [
      route({
        method: 'get',
        path: '/healthz',
        summary: 'Liveness and database reachability (503 when the database is unreachable)',
        authorize: { public: 'load balancers and orchestrators probe it without a credential' },
        response: healthSchema,
        handle(ctx) {
          let database = false;
          try {
            database = s.db.prepare('SELECT 1 AS ok').get() !== undefined;
          } catch {
            database = false;
          }
          ctx.status = database ? 200 : 503;
          ctx.body = {
            success: database,
            code: database ? 0 : 'INTERNAL_ERROR',
            data: { status: database ? 'ok' : 'degraded', version: serviceVersion, database },
            message: database ? 'OK' : 'Database unreachable',
          };
        },
      }),
    ],
  };
}
