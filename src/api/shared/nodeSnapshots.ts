import type { z } from 'zod';
import { rollbackFolder } from '../../commands/rollbackFolder.ts';
import type { ContentStore, FolderSnapshot, NodeInfo } from '../../content/contentStore.ts';
import { ok } from '../../http/envelope.ts';
import { validationError } from '../../http/errors.ts';
import { route, type RouteDeclaration } from '../../http/routes/declaration.ts';
import { nodePresenter } from '../../presenters/idPaths.ts';
import { nodeById } from './nodeHistory.ts';
import * as schema from './nodeHistorySchemas.ts';

/**
 * Folder snapshots: the commits that changed anything beneath a folder, and rolling the folder
 * back to one of them as one new commit. Declared for /nodes/{id}/snapshots and /collab/snapshots/{id}.
 */
export function nodeSnapshotRoutes(s: { content: ContentStore }, paths: { list: string; rollback: string }): RouteDeclaration[] {
  const store = s.content;
  const folder = (node: NodeInfo) => {
    if (node.type !== 'folder') throw validationError('Snapshots exist for folders only.', [{ field: 'node_id', message: 'not a folder' }]);
    return node;
  };
  return [
    route({
      method: 'get',
      path: paths.list,
      summary: 'The commits that changed anything beneath a folder, newest first',
      permission: 'content:read',
      authorize: nodeById,
      params: schema.nodeParams,
      query: schema.snapshotsQuery,
      response: schema.snapshotList,
      handle(ctx, { query, access }) {
        const node = folder(access.node);
        const page = store.folderSnapshots(node.projectId, node.id, { limit: query.limit, before: query.before });
        ok(ctx, { folder_id: node.id, path: node.path, snapshots: page.snapshots.map(presentSnapshot), total: page.total });
      },
    }),
    route({
      method: 'post',
      path: paths.rollback,
      summary: 'Roll a folder back to a snapshot, as one new commit',
      permission: 'content:write',
      authorize: nodeById,
      params: schema.snapshotParams,
      query: schema.optionalProjectQuery,
      body: schema.rollbackBody,
      response: schema.snapshotRollback,
      async handle(ctx, { params, body, access }) {
        const node = folder(access.node);
        const { snapshotId } = params;
        const to = snapshotId.length === 40 ? { commitId: snapshotId } : { projectVersion: Number(snapshotId) };
        const r = await rollbackFolder(s, access.grant, { folder: node, to, message: body?.message });
        const present = nodePresenter(store, 'id');
        ok(
          ctx,
          {
            folder_id: node.id,
            snapshot_id: snapshotId,
            changed: r.changed,
            project_version: r.projectVersion,
            commit_id: r.commitId,
            nodes: r.nodes.map((n) => present.node(n)),
          },
          `Folder rolled back to snapshot ${snapshotId.slice(0, 12)}`,
        );
      },
    }),
  ];
}

/** Typed by the documented schema, so the answer cannot drift from the API reference. */
function presentSnapshot(x: FolderSnapshot): z.output<typeof schema.snapshotSchema> {
  return {
    id: x.projectVersion,
    snapshot_id: x.snapshotId,
    project_version: x.projectVersion,
    created_at: x.createdAt,
    actor_type: x.actorType,
    actor_id: x.actorId,
    author: x.author,
    message: x.message,
    files_count: x.filesCount,
    changed_count: x.changedCount,
  };
}
