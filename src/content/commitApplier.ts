import type { IndexStore, NodeRow, VersionRow } from './indexStore.ts';
import { baseName, isTrashPath, mimeTypeFor } from './paths.ts';
import type { NodeChange } from './trailers.ts';
import type { Actor } from './types.ts';

export interface CommitMeta {
  projectId: string;
  projectVersion: number;
  actor: Actor;
  message: string;
  /** Commit time, ISO 8601 with second precision (what git records). */
  time: string;
}

/**
 * Writes one commit's node changes into the index: node rows, one version per touched node per
 * commit (a node touched twice in one commit keeps one version holding the final state), the
 * project commit row and audit entries. Descendants of a moved folder follow it by parent id.
 */
export class CommitApplier {
  private readonly touched = new Map<string, NodeChange>();
  /** Version rows of this commit, written by finalize() once the commit id is known. */
  private readonly versionRows = new Map<string, VersionRow>();

  constructor(
    private readonly index: IndexStore,
    readonly meta: CommitMeta,
  ) {}

  get size(): number {
    return this.touched.size;
  }

  /** Final change per touched node, in first-touch order (what the trailers record). */
  changes(): NodeChange[] {
    return [...this.touched.values()];
  }

  /** `known`: the node's current row when the caller just read it (null: no such node yet). */
  apply(change: NodeChange, known?: NodeRow | null): void {
    const { meta, index } = this;
    const existing = known === undefined ? index.rowById(change.id) : (known ?? undefined);
    if (existing && existing.project_id !== meta.projectId) throw new Error(`node ${change.id} belongs to another project`);
    const prev = this.touched.get(change.id);
    if (change.op === 'delete') {
      if (existing) {
        for (const d of index.descendants(meta.projectId, change.id)) index.deleteNode(d.id);
        index.deleteNode(change.id);
      }
      this.touched.delete(change.id);
      this.versionRows.delete(change.id);
      this.touched.set(change.id, { ...change, fromPath: undefined, version: existing?.version ?? prev?.version ?? 0 });
      return;
    }
    const version = prev && existing ? existing.version : (existing?.version ?? 0) + 1;
    const state = isTrashPath(change.path) ? 'trashed' : 'active';
    const name = baseName(change.path);
    let trash: Pick<NodeRow, 'original_path' | 'deleted_at' | 'deleted_by'> = {
      original_path: null,
      deleted_at: null,
      deleted_by: null,
    };
    if (change.op === 'trash') {
      trash = { original_path: change.fromPath ?? existing?.path ?? null, deleted_at: meta.time, deleted_by: meta.actor.author };
    } else if (state === 'trashed' && existing) {
      trash = { original_path: existing.original_path, deleted_at: existing.deleted_at, deleted_by: existing.deleted_by };
    }
    index.upsertNode({
      id: change.id,
      project_id: meta.projectId,
      path: change.path,
      parent_id: change.parentId,
      type: change.type,
      name,
      content_hash: change.type === 'folder' ? (existing?.type === 'folder' ? existing.content_hash : null) : change.blobId,
      size: change.size,
      mime_type: mimeTypeFor(change.type, name),
      state,
      version,
      ...trash,
      created_at: existing?.created_at ?? meta.time,
      updated_at: meta.time,
    });
    if (existing?.type === 'folder' && (existing.path !== change.path || existing.state !== state)) {
      this.moveDescendants(change.id, change.path, state);
    }
    this.versionRows.set(change.id, {
      node_id: change.id,
      version,
      project_id: meta.projectId,
      project_version: meta.projectVersion,
      commit_id: '',
      blob_id: change.type === 'folder' ? null : change.blobId,
      type: change.type,
      path: change.path,
      parent_id: change.parentId,
      operation: mergedOp(prev?.op, change.op),
      actor_type: meta.actor.type,
      actor_id: meta.actor.id,
      author: meta.actor.author,
      commit_author: meta.actor.commitAuthor ?? null,
      message: meta.message,
      size: change.size,
      created_at: meta.time,
    });
    // The path the node had before this commit: the first change that moved it says so.
    const fromPath = prev ? (prev.op === 'create' ? undefined : (prev.fromPath ?? change.fromPath)) : change.fromPath;
    this.touched.set(change.id, {
      ...change,
      op: mergedOp(prev?.op, change.op),
      fromPath: fromPath === change.path ? undefined : fromPath,
      version,
    });
  }

  /** Writes the version rows (now that the commit id is known), the commit row and the audit entries. */
  finalize(commitId: string): void {
    for (const _ of this.finalizeSteps(commitId));
  }

  /** finalize() one row at a time, so that a very large commit can be written in several transactions. */
  *finalizeSteps(commitId: string): Generator<void> {
    const { meta, index } = this;
    for (const row of this.versionRows.values()) {
      index.putVersion({ ...row, commit_id: commitId });
      yield;
    }
    index.insertCommit(meta.projectId, meta.projectVersion, commitId, meta.actor, meta.message, meta.time);
    for (const c of this.touched.values()) {
      const details: Record<string, unknown> = {
        version: c.version,
        type: c.type,
        commit_id: commitId,
        project_version: meta.projectVersion,
      };
      if (c.fromPath !== undefined) {
        details.old_path = c.fromPath;
        details.new_path = c.path;
      }
      if (meta.message) details.message = meta.message;
      index.insertAudit(meta.projectId, c.id, c.path, c.op, meta.actor, details, meta.time);
      yield;
    }
  }

  /** Recomputes paths (and trash state) of everything below a folder from parent ids and names. */
  private moveDescendants(folderId: string, folderPath: string, state: 'active' | 'trashed'): void {
    const rows = this.index.descendants(this.meta.projectId, folderId);
    const kids = new Map<string, { id: string; name: string }[]>();
    for (const r of rows) {
      const list = kids.get(r.parent_id) ?? [];
      list.push(r);
      kids.set(r.parent_id, list);
    }
    const walk = (id: string, path: string) => {
      for (const k of kids.get(id) ?? []) {
        const p = `${path}/${k.name}`;
        this.index.setPathState(k.id, p, state);
        walk(k.id, p);
      }
    };
    walk(folderId, folderPath);
  }
}

/**
 * The operation recorded for a node changed twice in one commit: a creation stays a creation,
 * and new content plus a rename (PUT /nodes/{id} with name and content) is an update (its
 * old path is recorded as for a move); otherwise the last change names it.
 */
function mergedOp<T extends string>(prev: T | undefined, next: T): T {
  if (prev === 'create') return prev;
  if (prev === 'update' && next === 'move') return prev;
  return next;
}
