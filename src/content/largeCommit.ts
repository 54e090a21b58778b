import { ConflictError } from '../errors/contentErrors.ts';
import type { IndexStore } from './indexStore.ts';
import { newNodeId, type PreparedMutation } from './mutations.ts';
import type { PackBuilder } from './git/packWriter.ts';
import type { Repo } from './git/repo.ts';
import { joinPath, parentPath } from './paths.ts';
import type { TimeSlice } from './timeSlice.ts';
import type { NodeChange } from './trailers.ts';
import { BlobEntry, Tree, type WorkTree } from './tree.ts';

/** Calls with at least this many mutations, all writes (a bulk write), take the sliced path. */
export const LARGE_COMMIT = 2000;

type WriteMutation = Extract<PreparedMutation, { op: 'write' }>;

export function isLargeCommit(mutations: PreparedMutation[]): mutations is WriteMutation[] {
  return mutations.length >= LARGE_COMMIT && mutations.every((m) => m.op === 'write');
}

interface Known {
  id: string;
  type: string;
  version: number;
  parentId: string | null;
  blobId: string | null;
}

/**
 * Plans a large bulk write without writing the index: the same rules as mutations.ts `write`
 * (conflicts, missing parent folders, unchanged content skipped), edits the in-memory tree, adds
 * the blobs to the pack and returns every node change with its version (what the trailers and
 * CommitApplier need). Reads the index, yields between slices; throws a ContentError (naming the
 * mutation's index) before anything outside memory changed.
 */
export async function planBulkWrite(
  ctx: { projectId: string; index: IndexStore; tree: WorkTree; repo: Repo; pack: PackBuilder; slice: TimeSlice },
  mutations: WriteMutation[],
): Promise<NodeChange[]> {
  const { projectId, index, tree, pack, slice } = ctx;
  /** Nodes this commit created or changed, by path (the index does not have them yet). */
  const planned = new Map<string, Known>();
  const changes = new Map<string, NodeChange>();
  const lookup = (path: string): Known | undefined => {
    const p = planned.get(path);
    if (p) return p;
    const row = index.rowByPath(projectId, path);
    return row ? { id: row.id, type: row.type, version: row.version, parentId: row.parent_id, blobId: row.content_hash } : undefined;
  };
  const record = (path: string, known: Known, change: NodeChange) => {
    const prev = changes.get(known.id);
    change.version = prev ? prev.version : change.op === 'create' ? 1 : known.version + 1;
    if (prev?.op === 'create') change.op = 'create';
    changes.set(known.id, change);
    planned.set(path, { ...known, version: change.version!, type: change.type, blobId: change.blobId });
  };
  for (let i = 0; i < mutations.length; i++) {
    await slice.tick();
    const m = mutations[i];
    try {
      const dir = parentPath(m.path);
      await tree.load(ctx.repo, dir);
      const row = lookup(m.path);
      if (row) {
        if (row.type === 'folder') throw new ConflictError(`${m.path} is a folder`, { path: m.path });
        if (m.baseVersion !== undefined && row.version !== m.baseVersion) {
          throw new ConflictError(`${m.path} is at version ${row.version}, not ${m.baseVersion}`, { path: m.path, current_version: row.version, base_version: m.baseVersion });
        }
        if (row.blobId === m.blobId && row.type === m.type) continue;
        if (m.bytes) pack.add('blob', m.bytes);
        tree.set(m.path, new BlobEntry(m.blobId));
        record(m.path, row, { id: row.id, type: m.type, op: 'update', parentId: row.parentId, path: m.path, blobId: m.blobId, size: m.size });
        continue;
      }
      if (m.baseVersion !== undefined && m.baseVersion !== 0) {
        throw new ConflictError(`${m.path} does not exist (expected version ${m.baseVersion})`, { path: m.path, current_version: null, base_version: m.baseVersion });
      }
      if (m.id !== undefined && index.rowById(m.id)) throw new ConflictError(`node id ${m.id} is already in use`, { id: m.id });
      // Parent folders, created when missing.
      let parentId: string | null = null;
      let cur = '';
      for (const seg of dir === '' ? [] : dir.split('/')) {
        cur = joinPath(cur, seg);
        const f = lookup(cur);
        if (f) {
          if (f.type !== 'folder') throw new ConflictError(`${cur} is a file, not a folder`, { path: cur });
          parentId = f.id;
          continue;
        }
        const folder: Known = { id: newNodeId(), type: 'folder', version: 0, parentId, blobId: null };
        tree.set(cur, new Tree(null, new Map()));
        record(cur, folder, { id: folder.id, type: 'folder', op: 'create', parentId, path: cur, blobId: null, size: 0 });
        parentId = folder.id;
      }
      if (m.bytes) pack.add('blob', m.bytes);
      tree.set(m.path, new BlobEntry(m.blobId));
      const id = m.id ?? newNodeId();
      record(m.path, { id, type: m.type, version: 0, parentId, blobId: m.blobId }, { id, type: m.type, op: 'create', parentId, path: m.path, blobId: m.blobId, size: m.size });
    } catch (e) {
      if (e instanceof Error && 'details' in e) (e as { details: Record<string, unknown> }).details.index = i;
      throw e;
    }
  }
  return [...changes.values()];
}
