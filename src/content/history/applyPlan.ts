import type { CommitApplier } from '../commitApplier.ts';
import type { IndexStore, NodeRow } from '../indexStore.ts';
import { newNodeId } from '../mutations.ts';
import { isTrashPath, parentPath, TRASH_DIR } from '../paths.ts';
import type { NodeChange } from '../trailers.ts';
import { keptType, type DiffPlan } from './treeDiff.ts';

/** Applies a diff plan to the index as one commit's node changes (ids kept by path, new ids for new nodes). */
export function applyPlan(index: IndexStore, projectId: string, applier: CommitApplier, plan: DiffPlan, folderIds = new Map<string, string | null>()): void {
  const folderAt = (p: string) => index.rowAt(projectId, p, true);
  const fileAt = (p: string) => index.rowAt(projectId, p, false);
  const changesFolders = plan.addedFolders.length > 0 || plan.removedFolders.length > 0 || plan.folderMoves.length > 0;
  if (changesFolders) folderIds.clear();
  const parentOf = (p: string): string | null => {
    const dir = parentPath(p);
    if (dir === '' || dir === TRASH_DIR) return null;
    if (changesFolders) return folderAt(dir)?.id ?? null;
    let id = folderIds.get(dir);
    if (id === undefined) folderIds.set(dir, (id = folderAt(dir)?.id ?? null));
    return id;
  };
  const moveOp = (from: string, to: string): NodeChange['op'] =>
    isTrashPath(to) && !isTrashPath(from) ? 'trash' : isTrashPath(from) && !isTrashPath(to) ? 'restore' : 'move';
  const relocate = (row: NodeRow | undefined, from: string, to: string) => {
    if (!row) return;
    applier.apply({
      id: row.id,
      type: row.type,
      op: moveOp(from, to),
      parentId: parentOf(to),
      path: to,
      blobId: row.type === 'folder' ? null : row.content_hash,
      size: row.size,
      fromPath: from,
    });
  };
  for (const p of plan.addedFolders) {
    if (!folderAt(p)) applier.apply({ id: newNodeId(), type: 'folder', op: 'create', parentId: parentOf(p), path: p, blobId: null, size: 0 });
  }
  for (const m of plan.folderMoves) relocate(folderAt(m.from), m.from, m.to);
  for (const m of plan.fileMoves) relocate(fileAt(m.from), m.from, m.to);
  for (const p of plan.removed) {
    const row = fileAt(p);
    if (row) applier.apply({ id: row.id, type: row.type, op: 'delete', parentId: row.parent_id, path: p, blobId: row.content_hash, size: row.size });
  }
  for (const p of plan.removedFolders) {
    const row = folderAt(p);
    if (row) applier.apply({ id: row.id, type: 'folder', op: 'delete', parentId: row.parent_id, path: p, blobId: null, size: 0 });
  }
  for (const [p, f] of [...plan.added, ...plan.modified]) {
    const row = fileAt(p);
    if (row && row.content_hash === f.oid) continue;
    const type = keptType(row, f);
    applier.apply({ id: row?.id ?? newNodeId(), type, op: row ? 'update' : 'create', parentId: parentOf(p), path: p, blobId: f.oid, size: f.size }, row ?? null);
  }
}
