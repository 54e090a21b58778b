import type { IndexStore } from './indexStore.ts';

/** One project commit that changed something beneath a folder. */
export interface FolderSnapshot {
  /** The commit id. */
  snapshotId: string;
  projectVersion: number;
  createdAt: string;
  actorType: string;
  actorId: string;
  author: string;
  message: string;
  /** Files (non-folder nodes) beneath the folder after that commit. */
  filesCount: number;
  /** Nodes beneath the folder (before or after) that the commit changed. */
  changedCount: number;
}

export interface SnapshotPage {
  snapshots: FolderSnapshot[];
  total: number;
}

/** node_id, project_version, parent_id, type. */
type Row = [string, number, string | null, string];

/**
 * A folder's snapshot history from the index alone: one pass over the project's version rows in
 * commit order, replaying each node's parent, so "beneath" follows ids (renames and moves of the
 * folder or anything above it change nothing) and files_count is kept incrementally, including
 * whole subtrees that move in or out (or to the trash) with one version of their top folder.
 */
export class FolderSnapshots {
  constructor(private readonly index: IndexStore) {}

  /** Newest first; `before` (a project version) pages back. The folder's own creation is a snapshot (an empty one). */
  list(projectId: string, folderId: string, options: { limit: number; before?: number }): SnapshotPage {
    const found = this.scan(projectId, folderId);
    const all = found.reverse();
    const from = options.before === undefined ? all : all.filter((s) => s.projectVersion < options.before!);
    const page = from.slice(0, options.limit).map((s) => {
      const c = this.index.commitAt(projectId, s.projectVersion);
      return {
        snapshotId: c?.commit_id ?? '',
        projectVersion: s.projectVersion,
        createdAt: c?.created_at ?? '',
        actorType: c?.actor_type ?? '',
        actorId: c?.actor_id ?? '',
        author: c?.author ?? '',
        message: c?.message ?? '',
        filesCount: s.filesCount,
        changedCount: s.changedCount,
      };
    });
    return { snapshots: page, total: all.length };
  }

  /** True when `projectVersion` is one of the folder's snapshots. */
  isSnapshot(projectId: string, folderId: string, projectVersion: number): boolean {
    return this.scan(projectId, folderId).some((s) => s.projectVersion === projectVersion);
  }

  private scan(projectId: string, folderId: string): { projectVersion: number; filesCount: number; changedCount: number }[] {
    const first = this.index.createdAt(projectId, folderId);
    if (first === null) return [];
    const parentOf = new Map<string, string | null>();
    const isFile = new Map<string, boolean>();
    const children = new Map<string, Set<string>>();
    const inside = new Set<string>(); // files beneath the folder now
    const beneath = (id: string): boolean => {
      let p = parentOf.get(id) ?? null;
      for (let hops = 0; p !== null && hops < 10_000; hops++) {
        if (p === folderId) return true;
        p = parentOf.get(p) ?? null;
      }
      return false;
    };
    const refresh = (id: string) => {
      // A node (and, for a folder, everything under it) may have changed sides.
      const stack = [id];
      while (stack.length) {
        const n = stack.pop()!;
        if (isFile.get(n)) {
          if (beneath(n)) inside.add(n);
          else inside.delete(n);
        }
        for (const k of children.get(n) ?? []) stack.push(k);
      }
    };
    const out: { projectVersion: number; filesCount: number; changedCount: number }[] = [];
    // Every row from the start: nodes made before the folder may move into it later with their subtrees.
    const rows: Row[] = this.index.versionParentRows(projectId);
    for (let i = 0; i < rows.length; ) {
      const pv = rows[i][1];
      let j = i;
      while (j < rows.length && rows[j][1] === pv) j++;
      const batch = rows.slice(i, j);
      i = j;
      let changed = 0;
      const wasBeneath = batch.map((r) => r[0] !== folderId && beneath(r[0]));
      let created = false;
      for (const r of batch) {
        if (r[0] === folderId && !parentOf.has(folderId)) created = true;
        const old = parentOf.get(r[0]);
        if (old !== undefined && old !== null) children.get(old)?.delete(r[0]);
        parentOf.set(r[0], r[2]);
        isFile.set(r[0], r[3] !== 'folder');
        if (r[2] !== null) {
          let set = children.get(r[2]);
          if (!set) children.set(r[2], (set = new Set()));
          set.add(r[0]);
        }
      }
      batch.forEach((r, k) => {
        if (r[0] === folderId) return;
        const now = beneath(r[0]);
        if (now || wasBeneath[k]) changed++;
        if (now !== wasBeneath[k] || isFile.get(r[0])) refresh(r[0]);
      });
      if (pv >= first && (changed > 0 || created)) out.push({ projectVersion: pv, filesCount: inside.size, changedCount: changed });
    }
    return out;
  }
}
