import type { ContentStore } from '../../content/contentStore.ts';
import type { RouteGroup } from '../../http/routes/declaration.ts';
import { nodeSnapshotRoutes as snapshotDeclarations } from '../shared/nodeSnapshots.ts';

/** Folder snapshots by id (spec 4.2); /collab/snapshots/… are the same declarations. */
export function nodeSnapshotRoutes(s: { content: ContentStore }): RouteGroup {
  return {
    prefix: '/nodes',
    tag: 'Snapshots',
    routes: snapshotDeclarations(s, { list: '/:nodeId/snapshots', rollback: '/:nodeId/rollback-snapshot/:snapshotId' }),
  };
}
