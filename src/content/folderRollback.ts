import type { Database, Statement } from 'better-sqlite3';
import { ConflictError, NotFoundError, ValidationError } from '../errors/contentErrors.ts';
import type { NodeRow, VersionRow } from './indexStore.ts';
import { trashName, type MutationContext } from './mutations.ts';
import { baseName, isSameOrInside, isTrashPath, joinPath, TRASH_DIR } from './paths.ts';
import type { NodeChange } from './trailers.ts';
import { BlobEntry, buildTree, type Entry } from './tree.ts';
import type { NodeType } from './types.ts';

interface Target {
  /** Path relative to the folder. */
  rel: string;
  parentId: string;
  type: NodeType;
  blobId: string | null;
  size: number;
}

const statements = new WeakMap<Database, { upTo: Statement; under: Statement }>();

function queries(db: Database) {
  let q = statements.get(db);
  if (!q) {
    q = {
      // Each node's latest version at or before the target, grouped in SQLite (no row objects for older versions).
      upTo: db.prepare(`SELECT v.* FROM node_versions v JOIN (
          SELECT node_id, MAX(version) AS latest FROM node_versions WHERE project_id = ? AND project_version <= ? GROUP BY node_id
        ) m ON v.node_id = m.node_id AND v.version = m.latest`),
      under: db.prepare(`SELECT * FROM nodes WHERE project_id = ? AND path > ? AND path < ? AND state = ?`),
    };
    statements.set(db, q);
  }
  return q;
}

/**
 * Returns everything beneath a folder to its state after project version `target`, as part of
 * the commit being built; nothing outside the folder changes. From the index alone: each node's
 * latest version at or before `target` tells whether it was beneath the folder then (by parent
 * ids, so renames above do not matter) and with which parent, name, type and blob. Such nodes
 * that differ now get a 'rollback' version (trashed ones come back with their ids and
 * histories); nodes beneath the folder that were not there go to the trash. Nodes that have
 * since moved out to live elsewhere stay where they are. The folder's git subtree and the
 * touched trash entries are rebuilt from the resulting index.
 */
export function rollbackFolder(ctx: MutationContext, folderId: string, target: number): void {
  const folder = ctx.index.rowById(folderId);
  if (!folder || folder.project_id !== ctx.projectId) throw new NotFoundError('folder not found', { id: folderId });
  if (folder.type !== 'folder') throw new ValidationError(`${folder.path} is not a folder`, { id: folderId });
  if (folder.state !== 'active') throw new ConflictError(`${folder.path} is in the trash; restore it first`, { id: folderId });
  if (target >= ctx.projectVersion) throw new NotFoundError(`project version ${target} does not exist`, { project_version: target });
  const q = queries(ctx.index.db);
  const at = new Map<string, VersionRow>();
  for (const v of q.upTo.all(ctx.projectId, target) as VersionRow[]) at.set(v.node_id, v);
  if (!at.has(folderId)) throw new ValidationError('the folder did not exist at that snapshot', { project_version: target });
  const nodes = new Map<string, NodeRow>();
  for (const n of ctx.index.allNodes(ctx.projectId)) nodes.set(n.id, n);

  const nowMemo = new Map<string, boolean>();
  const nowBeneath = (id: string): boolean => {
    const known = nowMemo.get(id);
    if (known !== undefined) return known;
    nowMemo.set(id, false); // guards against cycles in corrupt data
    const parent = nodes.get(id)?.parent_id ?? null;
    const r = parent === folderId || (parent !== null && nowBeneath(parent));
    nowMemo.set(id, r);
    return r;
  };
  const thenMemo = new Map<string, Target | null>();
  const resolve = (id: string): Target | null => {
    if (thenMemo.has(id)) return thenMemo.get(id)!;
    thenMemo.set(id, null);
    const v = at.get(id);
    const n = nodes.get(id);
    let t: Target | null = null;
    const livesElsewhere = n !== undefined && n.state === 'active' && !nowBeneath(id);
    if (v && n && v.operation !== 'delete' && v.parent_id !== null && !livesElsewhere) {
      const name = baseName(v.path);
      const parent = v.parent_id === folderId ? '' : resolve(v.parent_id)?.rel;
      if (parent !== undefined) t = { rel: parent === '' ? name : `${parent}/${name}`, parentId: v.parent_id, type: v.type, blobId: v.blob_id, size: v.size };
    }
    thenMemo.set(id, t);
    return t;
  };

  const changes: NodeChange[] = [];
  const leaving: string[] = []; // current paths outside the folder's subtree (trash entries) to clear
  const trashed: string[] = [];
  for (const n of nodes.values()) {
    if (n.id === folderId) continue;
    const t = resolve(n.id);
    if (t) {
      const differs =
        n.parent_id !== t.parentId || n.name !== baseName(t.rel) || n.type !== t.type || (t.type !== 'folder' && n.content_hash !== t.blobId);
      if (!differs) continue;
      const path = joinPath(folder.path, t.rel);
      changes.push({ id: n.id, type: t.type, op: 'rollback', parentId: t.parentId, path, blobId: t.type === 'folder' ? null : t.blobId, size: t.size, ...(n.path !== path ? { fromPath: n.path } : {}) });
      if (!isSameOrInside(n.path, folder.path)) leaving.push(n.path);
    } else if (n.state === 'active' && nowBeneath(n.id)) {
      const parent = n.parent_id === null ? undefined : nodes.get(n.parent_id);
      const goesWithParent = parent !== undefined && parent.id !== folderId && !resolve(parent.id);
      if (goesWithParent) continue;
      const path = joinPath(TRASH_DIR, trashName(n));
      changes.push({ id: n.id, type: n.type, op: 'trash', parentId: null, path, blobId: n.type === 'folder' ? null : n.content_hash, size: n.size, fromPath: n.path });
      trashed.push(path);
    }
  }
  if (changes.length === 0) return;
  // Parents before children, so that the trailers replay in a sensible order.
  const depth = (p: string) => {
    let d = 0;
    for (let i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) d++;
    return d;
  };
  const depths = new Map(changes.map((c) => [c, depth(c.path)]));
  changes.sort((a, b) => depths.get(a)! - depths.get(b)!);
  for (const c of changes) ctx.applier.apply(c);

  // Deepest first, so that an entry is cleared before the trash folder holding it (if any) goes.
  leaving.sort((a, b) => b.length - a.length);
  for (const p of leaving) if (isTrashPath(p)) ctx.tree.remove(p);
  ctx.tree.set(folder.path, subtree(ctx, q.under, folder.path, 'active'));
  for (const p of trashed) {
    const row = ctx.index.rowByPath(ctx.projectId, p)!;
    ctx.tree.set(p, row.type === 'folder' ? subtree(ctx, q.under, p, 'trashed') : new BlobEntry(row.content_hash!));
  }
}

/** The git tree of a folder rebuilt from the index rows beneath it. */
function subtree(ctx: MutationContext, under: Statement, dir: string, state: 'active' | 'trashed'): Entry {
  const rows = under.all(ctx.projectId, dir + '/', dir + '0', state) as NodeRow[];
  const rel = (p: string) => p.slice(dir.length + 1);
  return buildTree(
    rows.filter((r) => r.type !== 'folder' && r.content_hash).map((r) => ({ path: rel(r.path), oid: r.content_hash! })),
    rows.filter((r) => r.type === 'folder').map((r) => rel(r.path)),
  );
}
