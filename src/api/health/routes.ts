import { z } from 'zod';
import type { Db } from '../../db/database.ts';
import { serviceVersion } from '../../config/version.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import type { Ownership } from '../../cluster/ownership.ts';

function workersOf(o: Pick<Ownership, 'alone' | 'workerName' | 'members'>) {
  if (o.alone || !o.members) return {};
  return { worker: o.workerName, workers: o.members().map((m) => ({ name: m.name, pid: m.pid, started_at: m.startedAt, restarts: m.restarts, projects: m.projects })) };
}

const workerSchema = z.object({
  name: z.string(),
  pid: z.number().int(),
  started_at: z.string(),
  restarts: z.number().int(),
  /** Projects whose lease the worker holds: their changes run there. Leases move only when a worker stops or dies. */
  projects: z.number().int(),
});
export const healthSchema = z.object({
  status: z.enum(['ok', 'degraded']),
  version: z.string(),
  database: z.boolean(),
  /** Several workers (`cns serve --workers N`): the worker that answered, and every live worker. */
  worker: z.string().optional(),
  workers: z.array(workerSchema).optional(),
});

/** GET /healthz: outside the base path and unauthenticated, for load balancers and orchestrators. */
export function healthRoutes(s: { db: Db; ownership: Pick<Ownership, 'alone' | 'workerName' | 'members'> }): RouteGroup {
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
            data: { status: database ? 'ok' : 'degraded', version: serviceVersion, database, ...workersOf(s.ownership) },
            message: database ? 'OK' : 'Database unreachable',
          };
        },
      }),
    ],
  };
}
