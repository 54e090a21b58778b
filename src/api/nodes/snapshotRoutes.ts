import Router from '@koa/router';
import type { Services } from '../../app/services.ts';
import { snapshotHandlers } from './snapshotHandlers.ts';

/** Folder snapshots by id (spec 4.2); /collab/snapshots/… serve the same handlers. */
export function nodeSnapshotRoutes(s: Services): Router {
  const router = new Router({ prefix: '/nodes' });
  const h = snapshotHandlers(s);
  router.get('/:nodeId/snapshots', h.list);
  router.post('/:nodeId/rollback-snapshot/:snapshotId', h.rollback);
  return router;
}
