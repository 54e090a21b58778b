import Router from '@koa/router';
import type { Services } from '../../app/services.ts';
import { historyHandlers } from './historyHandlers.ts';

/** History by node id (spec 4.2). GET /nodes/{id}/audit-logs is served by content/auditRoutes.ts. */
export function nodeHistoryRoutes(s: Services): Router {
  const router = new Router({ prefix: '/nodes' });
  const h = historyHandlers(s);
  router.get('/:nodeId/versions', h.versions);
  router.get('/:nodeId/versions/:version', h.version);
  router.post('/:nodeId/rollback/:version', h.rollback);
  router.get('/:nodeId/diff/:v1/:v2', h.diff);
  return router;
}
