import Router from '@koa/router';
import type { Services } from '../../app/services.ts';
import { serviceVersion } from '../../app/version.ts';

/** GET /healthz: outside the base path and unauthenticated, for load balancers and orchestrators. */
export function healthRoutes(s: Services): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    let database = false;
    try {
      database = s.db.prepare('SELECT 1 AS ok').get() !== undefined;
    } catch {
      database = false;
    }
    ctx.status = database ? 200 : 503;
    ctx.body = { success: database, data: { status: database ? 'ok' : 'degraded', version: serviceVersion, database }, message: database ? 'OK' : 'Database unreachable' };
  });
  return router;
}
