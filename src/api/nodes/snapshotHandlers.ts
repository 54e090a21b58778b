import type { Context } from 'koa';
import type { Services } from '../../app/services.ts';
import type { FolderSnapshot } from '../../content/contentStore.ts';
import { ok } from '../../http/envelope.ts';
import { validationError } from '../../http/errors.ts';
import { parseInput } from '../../http/validate.ts';
import { NodeGuard } from './nodeAccess.ts';
import { presentNode } from './presenter.ts';
import * as schema from './schemas.ts';

/**
 * Folder snapshots: the commits that changed anything beneath a folder, and rolling the folder
 * back to one of them as one new commit. Shared by /nodes/{id}/snapshots and /collab/snapshots/{id}.
 */
export function snapshotHandlers(s: Services) {
  const guard = new NodeGuard(s);
  const store = s.content;
  const folderOf = (ctx: Context, action: 'content:read' | 'content:write') => {
    const { nodeId } = parseInput(schema.nodeParams, { nodeId: ctx.params.nodeId }, 'params');
    const q = parseInput(schema.optionalProjectQuery, { project_id: ctx.query.project_id }, 'query');
    const r = guard.node(ctx, nodeId, action, q.project_id);
    if (r.node.type !== 'folder') throw validationError('Snapshots exist for folders only.', [{ field: 'node_id', message: 'not a folder' }]);
    return r;
  };
  return {
    list(ctx: Context) {
      const q = parseInput(schema.snapshotsQuery, ctx.query, 'query');
      const { node } = folderOf(ctx, 'content:read');
      const page = store.folderSnapshots(node.projectId, node.id, { limit: q.limit, before: q.before });
      ok(ctx, { folder_id: node.id, path: node.path, snapshots: page.snapshots.map(presentSnapshot), total: page.total });
    },
    async rollback(ctx: Context) {
      const { snapshotId } = parseInput(schema.snapshotParams, ctx.params, 'params');
      const body = parseInput(schema.rollbackBody, ctx.request.body, 'body');
      const { node, caller } = folderOf(ctx, 'content:write');
      const r = await store.rollbackFolder(caller.projectId, caller.actor, node.id, { commitId: snapshotId }, { message: body?.message });
      ok(
        ctx,
        {
          folder_id: node.id,
          snapshot_id: snapshotId,
          changed: r.changed,
          project_version: r.projectVersion,
          commit_id: r.commitId,
          nodes: r.nodes.map((n) => presentNode(n)),
        },
        `Folder rolled back to snapshot ${snapshotId.slice(0, 12)}`,
      );
    },
  };
}

function presentSnapshot(x: FolderSnapshot) {
  return {
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
