import { NotFoundError } from '../errors/contentErrors.ts';
import type { NodeRow, VersionRow } from './indexStore.ts';
import { trashName, type MutationContext } from './mutations.ts';
import { baseName, isTrashPath, joinPath, TRASH_DIR } from './paths.ts';
import { buildTree } from './tree.ts';
import type { NodeChange } from './trailers.ts';
import type { NodeType } from './types.ts';

interface Target {
  path: string;
  parentId: string | null;
  type: NodeType;
  blobId: string | null;
  size: number;
}

/**
 * Returns the project to its state after project version `target` as one commit, from the index
 * alone: each node's latest version at or before `target` gives its parent, name, type and blob
 * there. Nodes whose own attributes differ get a 'rollback' version; live nodes that did not
 * exist (or were trashed) then go to the trash; the tree is rebuilt from the resulting index.
 * Permanently deleted nodes (and what was inside them) cannot come back.
 */
export function rollbackProject(ctx: MutationContext, target: number): void {
  const current = ctx.projectVersion - 1;
  if (target > current) throw new NotFoundError(`project version ${target} does not exist`, { target_version: target });
  if (target === current) return;
  const at = new Map<string, VersionRow>();
  for (const v of ctx.index.versionsAt(ctx.projectId, target)) at.set(v.node_id, v);
  const nodes = new Map<string, NodeRow>();
  for (const n of ctx.index.allNodes(ctx.projectId)) nodes.set(n.id, n);

  const memo = new Map<string, Target | null>();
  const resolve = (id: string): Target | null => {
    if (memo.has(id)) return memo.get(id)!;
    memo.set(id, null); // guards against cycles in corrupt data
    const v = at.get(id);
    let t: Target | null = null;
    if (v && nodes.has(id) && v.operation !== 'delete') {
      if (v.parent_id === null) {
        if (!isTrashPath(v.path)) t = { path: v.path, parentId: null, type: v.type, blobId: v.blob_id, size: v.size };
      } else {
        const parent = resolve(v.parent_id);
        if (parent) t = { path: `${parent.path}/${baseName(v.path)}`, parentId: v.parent_id, type: v.type, blobId: v.blob_id, size: v.size };
      }
    }
    memo.set(id, t);
    return t;
  };

  const changes: NodeChange[] = [];
  for (const n of nodes.values()) {
    const t = resolve(n.id);
    if (t) {
      const differs =
        n.parent_id !== t.parentId ||
        n.name !== baseName(t.path) ||
        n.type !== t.type ||
        (t.type !== 'folder' && n.content_hash !== t.blobId) ||
        (n.parent_id === null && n.path !== t.path);
      if (differs) {
        changes.push({
          id: n.id,
          type: t.type,
          op: 'rollback',
          parentId: t.parentId,
          path: t.path,
          blobId: t.type === 'folder' ? null : t.blobId,
          size: t.size,
          ...(n.path !== t.path ? { fromPath: n.path } : {}),
        });
      }
    } else if (n.state === 'active') {
      const parent = n.parent_id ? nodes.get(n.parent_id) : undefined;
      const goesWithParent = parent !== undefined && parent.state === 'active' && !resolve(parent.id);
      if (!goesWithParent) {
        changes.push({
          id: n.id,
          type: n.type,
          op: 'trash',
          parentId: null,
          path: joinPath(TRASH_DIR, trashName(n)),
          blobId: n.type === 'folder' ? null : n.content_hash,
          size: n.size,
          fromPath: n.path,
        });
      }
    }
  }
  // Parents before children, so that the trailers replay in a sensible order.
  changes.sort((a, b) => a.path.split('/').length - b.path.split('/').length);
  for (const c of changes) ctx.applier.apply(c);

  const rows = ctx.index.allNodes(ctx.projectId);
  ctx.tree.replaceRoot(
    buildTree(
      rows.filter((r) => r.type !== 'folder' && r.content_hash).map((r) => ({ path: r.path, oid: r.content_hash! })),
      rows.filter((r) => r.type === 'folder').map((r) => r.path),
    ),
  );
}
