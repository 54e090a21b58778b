import type { ContentStore } from '../../content/contentStore.ts';
import type { RouteGroup } from '../../http/routes/declaration.ts';
import { nodeHistoryRoutes as historyDeclarations } from '../shared/nodeHistory.ts';

/** History by node id (spec 4.2); /collab/versions/… are the same declarations. GET /nodes/{id}/audit-logs is served by content/auditRoutes.ts. */
export function nodeHistoryRoutes(s: { content: ContentStore }): RouteGroup {
  return {
    prefix: '/nodes',
    tag: 'Node history',
    routes: historyDeclarations(s, {
      versions: '/:nodeId/versions',
      version: '/:nodeId/versions/:version',
      rollback: '/:nodeId/rollback/:version',
      diff: '/:nodeId/diff/:v1/:v2',
    }),
  };
}
