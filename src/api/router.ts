import Router from '@koa/router';
import type { Services } from '../app/services.ts';
import { authRoutes } from './auth/routes.ts';
import { connectionRoutes } from './connections/routes.ts';
import { collabRoutes } from './collab/routes.ts';
import { auditRoutes } from './content/auditRoutes.ts';
import { projectContentRoutes } from './content/projectContentRoutes.ts';
import { contentRoutes } from './content/routes.ts';
import { eventRoutes } from './events/routes.ts';
import { nodeHistoryRoutes } from './nodes/historyRoutes.ts';
import { nodeRoutes } from './nodes/routes.ts';
import { nodeSnapshotRoutes } from './nodes/snapshotRoutes.ts';
import { nodeTransferRoutes } from './nodes/transferRoutes.ts';
import { organizationRoutes } from './organizations/routes.ts';
import { profileRoutes } from './profile/routes.ts';
import { projectRoutes } from './projects/routes.ts';
import { syncRoutes } from './sync/routes.ts';

export const API_PREFIX = '/api/v1';

/**
 * Every resource's router, mounted under /api/v1. Each resource lives in its own folder with
 * its routes, request schemas and presenter.
 */
export function apiRouter(s: Services): Router {
  const api = new Router({ prefix: API_PREFIX });
  const resources: Router[] = [
    authRoutes(s),
    profileRoutes(s),
    organizationRoutes(s),
    projectRoutes(s),
    connectionRoutes(s, '/connections'),
    connectionRoutes(s, '/access'),
    projectContentRoutes(s),
    contentRoutes(s),
    auditRoutes(s),
    nodeTransferRoutes(s),
    nodeRoutes(s),
    nodeHistoryRoutes(s),
    nodeSnapshotRoutes(s),
    collabRoutes(s),
    syncRoutes(s),
    eventRoutes(s),
  ];
  for (const r of resources) api.use(r.routes(), r.allowedMethods());
  return api;
}
