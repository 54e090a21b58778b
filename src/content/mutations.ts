import { randomFillSync } from 'node:crypto';
import type { CommitApplier } from './commitApplier.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors/contentErrors.ts';
import type { IndexStore, NodeRow } from './indexStore.ts';
import { baseName, isSameOrInside, joinPath, parentPath, TRASH_DIR } from './paths.ts';
import { BlobEntry, Tree, type WorkTree } from './tree.ts';
import type { ObjectType } from './git/objects.ts';
import type { NodeRef, WritableNodeType } from './types.ts';

/** A mutation after validation of its input: paths normalized, content stored as a blob. */
export type PreparedMutation =
  /** `bytes` absent: the blob was already stored (a streamed upload) under `blobId`. */
  | { op: 'write'; path: string; type: WritableNodeType; bytes?: Buffer; blobId: string; size: number; baseVersion?: number; id?: string }
  | { op: 'mkdir'; path: string }
  | { op: 'move'; from: string; to: string }
  | { op: 'remove'; path: string; permanent: boolean }
  | { op: 'restore'; trashPath: string; to: string }
  | { op: 'rollbackNode'; node: NodeRef; version: number }
  | { op: 'rollbackFolder'; folderId: string; targetVersion: number }
  | { op: 'rollbackProject'; targetVersion: number };

/** What a mutation may use while a commit is being built (inside the project's write section). */
export interface MutationContext {
  projectId: string;
  index: IndexStore;
  tree: WorkTree;
  applier: CommitApplier;
  /** Project version of the commit being built. */
  projectVersion: number;
  /** Stores an object in the batch's pack and returns its id. */
  writeObject: (type: ObjectType, content: Buffer) => string;
}

const ID_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
/** Random bytes drawn in blocks: one randomFillSync per id made a 100,000-file commit spend seconds on ids. */
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

/** Stable opaque node id (`nod_` + 12 base-36 characters, the service's id style, as newId makes them). */
export function newNodeId(): string {
  if (poolAt + 12 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  let out = 'nod_';
  for (let i = 0; i < 12; i++) out += ID_ALPHABET[pool[poolAt++] % 36];
  return out;
}

/**
 * Applies one mutation to the in-memory tree and the index, or throws a ContentError before
 * changing anything observable (the caller reverts the tree and the SQLite savepoint anyway).
 */
export function applyMutation(ctx: MutationContext, m: Exclude<PreparedMutation, { op: 'rollbackProject' | 'rollbackFolder' }>): void {
  switch (m.op) {
    case 'write':
      return write(ctx, m);
    case 'mkdir':
      return mkdir(ctx, m.path);
    case 'move':
      return move(ctx, m.from, m.to);
    case 'remove':
      return remove(ctx, m.path, m.permanent);
    case 'restore':
      return restore(ctx, m.trashPath, m.to);
    case 'rollbackNode':
      return rollbackNode(ctx, m.node, m.version);
  }
}

function write(ctx: MutationContext, m: Extract<PreparedMutation, { op: 'write' }>): void {
  const row = ctx.index.rowByPath(ctx.projectId, m.path);
  if (row) {
    if (row.type === 'folder') throw new ConflictError(`${m.path} is a folder`, { path: m.path });
    if (m.baseVersion !== undefined && row.version !== m.baseVersion) {
      // One wording for every stale base, 0 ("must not exist yet") included: the README shows it.
      throw new ConflictError(`${m.path} is at version ${row.version}, not ${m.baseVersion}`, {
        path: m.path,
        current_version: row.version,
        base_version: m.baseVersion,
      });
    }
    if (row.content_hash === m.blobId && row.type === m.type) return;
    if (m.bytes) ctx.writeObject('blob', m.bytes);
    ctx.tree.set(m.path, new BlobEntry(m.blobId));
    ctx.applier.apply({ id: row.id, type: m.type, op: 'update', parentId: row.parent_id, path: m.path, blobId: m.blobId, size: m.size });
    return;
  }
  if (m.baseVersion !== undefined && m.baseVersion !== 0) {
    throw new ConflictError(`${m.path} does not exist (expected version ${m.baseVersion})`, {
      path: m.path,
      current_version: null,
      base_version: m.baseVersion,
    });
  }
  if (m.id !== undefined && ctx.index.rowById(m.id)) throw new ConflictError(`node id ${m.id} is already in use`, { id: m.id });
  const parentId = ensureFolders(ctx, parentPath(m.path));
  if (m.bytes) ctx.writeObject('blob', m.bytes);
  ctx.tree.set(m.path, new BlobEntry(m.blobId));
  ctx.applier.apply({ id: m.id ?? newNodeId(), type: m.type, op: 'create', parentId, path: m.path, blobId: m.blobId, size: m.size });
}

function mkdir(ctx: MutationContext, path: string): void {
  const row = ctx.index.rowByPath(ctx.projectId, path);
  if (row) {
    if (row.type !== 'folder') throw new ConflictError(`${path} is a file`, { path });
    return;
  }
  ensureFolders(ctx, path);
}

function move(ctx: MutationContext, from: string, to: string): void {
  const row = activeRow(ctx, from);
  if (from === to) return;
  if (isSameOrInside(to, from)) throw new ValidationError('cannot move a folder into itself', { old_path: from, new_path: to });
  if (ctx.index.rowByPath(ctx.projectId, to)) throw new ConflictError(`${to} already exists`, { path: to });
  const parentId = ensureFolders(ctx, parentPath(to));
  relocate(ctx, row, from, to, parentId, 'move');
}

function remove(ctx: MutationContext, path: string, permanent: boolean): void {
  const row = ctx.index.rowByPath(ctx.projectId, path);
  if (!row) throw new NotFoundError(`no node at ${path}`, { path });
  if (permanent || row.state === 'trashed') {
    ctx.tree.remove(path);
    ctx.applier.apply({ ...changeOf(row), op: 'delete', path });
    return;
  }
  relocate(ctx, row, path, joinPath(TRASH_DIR, trashName(row)), null, 'trash');
}

function restore(ctx: MutationContext, trashPath: string, to: string): void {
  const row = ctx.index.rowByPath(ctx.projectId, trashPath);
  if (!row || row.state !== 'trashed') throw new NotFoundError(`no trash item at ${trashPath}`, { trash_path: trashPath });
  if (row.parent_id !== null) {
    throw new ValidationError('only top-level trash items can be restored', { trash_path: trashPath });
  }
  if (ctx.index.rowByPath(ctx.projectId, to)) throw new ConflictError(`${to} already exists`, { path: to });
  const parentId = ensureFolders(ctx, parentPath(to));
  relocate(ctx, row, trashPath, to, parentId, 'restore');
}

function rollbackNode(ctx: MutationContext, ref: NodeRef, version: number): void {
  const row = 'id' in ref ? ctx.index.rowById(ref.id) : ctx.index.rowByPath(ctx.projectId, ref.path);
  if (!row || row.project_id !== ctx.projectId) throw new NotFoundError('node not found', { ...ref });
  if (row.state === 'trashed') throw new ConflictError(`${row.path} is in the trash; restore it first`, { path: row.path });
  if (row.type === 'folder') throw new ValidationError('folders have no content to roll back', { path: row.path });
  const v = ctx.index.versionRow(row.id, version);
  if (!v || !v.blob_id) throw new NotFoundError(`version ${version} of ${row.path} does not exist`, { path: row.path, version });
  if (v.blob_id === row.content_hash && v.type === row.type) return;
  ctx.tree.set(row.path, new BlobEntry(v.blob_id));
  ctx.applier.apply({ ...changeOf(row), type: v.type, op: 'rollback', blobId: v.blob_id, size: v.size });
}

/** Moves a node's tree entry and records the change; its descendants follow by parent id. */
function relocate(
  ctx: MutationContext,
  row: NodeRow,
  from: string,
  to: string,
  parentId: string | null,
  op: 'move' | 'trash' | 'restore',
): void {
  const entry = ctx.tree.remove(from);
  if (!entry) throw new Error(`index and tree disagree about ${from}`);
  ctx.tree.set(to, entry);
  ctx.applier.apply({ ...changeOf(row), op, parentId, path: to, fromPath: from });
}

/** Makes sure every folder of `dir` exists (creating missing ones); returns the id of `dir`. */
function ensureFolders(ctx: MutationContext, dir: string): string | null {
  if (dir === '') return null;
  let parentId: string | null = null;
  let cur = '';
  for (const seg of dir.split('/')) {
    cur = joinPath(cur, seg);
    const row = ctx.index.rowByPath(ctx.projectId, cur);
    if (row) {
      if (row.type !== 'folder') throw new ConflictError(`${cur} is a file, not a folder`, { path: cur });
      parentId = row.id;
      continue;
    }
    const id = newNodeId();
    ctx.tree.set(cur, new Tree(null, new Map()));
    ctx.applier.apply({ id, type: 'folder', op: 'create', parentId, path: cur, blobId: null, size: 0 });
    parentId = id;
  }
  return parentId;
}

function activeRow(ctx: MutationContext, path: string): NodeRow {
  const row = ctx.index.rowByPath(ctx.projectId, path);
  if (!row || row.state !== 'active') throw new NotFoundError(`no node at ${path}`, { path });
  return row;
}

function changeOf(row: NodeRow) {
  return {
    id: row.id,
    type: row.type,
    parentId: row.parent_id,
    path: row.path,
    blobId: row.type === 'folder' ? null : row.content_hash,
    size: row.size,
  };
}

/** Unique within the trash because node ids are; keeps the name (and extension) readable. */
export function trashName(row: { id: string; name: string }): string {
  let name = `${row.id}_${row.name}`;
  while (Buffer.byteLength(name) > 255) name = name.slice(0, -1);
  return name;
}

export { baseName };
