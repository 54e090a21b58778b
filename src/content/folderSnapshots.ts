import type { Statement } from 'better-sqlite3';
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

interface Row {
  node_id: string;
  project_version: number;
  parent_id: string | null;
  type: string;
}

/**
 * A folder's snapshot history from the index alone: one pass over the project's version rows in
 * commit order, replaying each node's parent, so "beneath" follows ids (renames and moves of the
 * folder or anything above it change nothing) and files_count is kept incrementally, including
 * whole subtrees that move in or out (or to the trash) with one version of their top folder.
 */
export class FolderSnapshots {
  private readonly rows: Statement;
  private readonly commits: Statement;
  private readonly created: Statement;

  constructor(index: IndexStore) {
    this.rows = index.db.prepare(
      `SELECT node_id, project_version, parent_id, type FROM node_versions
       WHERE project_id = ? ORDER BY project_version`,
    );
    this.created = index.db.prepare(`SELECT MIN(project_version) AS pv FROM node_versions WHERE node_id = ? AND project_id = ?`);
    this.commits = index.db.prepare(`SELECT * FROM project_commits WHERE project_id = ? AND project_version = ?`);
  }

  /** Newest first; `before` (a project version) pages back. The folder's own creation is a snapshot (an empty one). */
  list(projectId: string, folderId: string, options: { limit: number; before?: number }): SnapshotPage {
    const found = this.scan(projectId, folderId);
    const all = found.reverse();
    const from = options.before === undefined ? all : all.filter((s) => s.projectVersion < options.before!);
    const page = from.slice(0, options.limit).map((s) => {
      const c = this.commits.get(projectId, s.projectVersion) as
        | { commit_id: string; actor_type: string; actor_id: string; author: string; message: string; created_at: string }
        | undefined;
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
    const first = (this.created.get(folderId, projectId) as { pv: number | null }).pv;
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
    const rows = this.rows.all(projectId) as Row[];
    for (let i = 0; i < rows.length; ) {
      const pv = rows[i].project_version;
      let j = i;
      while (j < rows.length && rows[j].project_version === pv) j++;
      const batch = rows.slice(i, j);
      i = j;
      let changed = 0;
      const wasBeneath = batch.map((r) => r.node_id !== folderId && beneath(r.node_id));
      let created = false;
      for (const r of batch) {
        if (r.node_id === folderId && !parentOf.has(folderId)) created = true;
        const old = parentOf.get(r.node_id);
        if (old !== undefined && old !== null) children.get(old)?.delete(r.node_id);
        parentOf.set(r.node_id, r.parent_id);
        isFile.set(r.node_id, r.type !== 'folder');
        if (r.parent_id !== null) {
          let set = children.get(r.parent_id);
          if (!set) children.set(r.parent_id, (set = new Set()));
          set.add(r.node_id);
        }
      }
      batch.forEach((r, k) => {
        if (r.node_id === folderId) return;
        const now = beneath(r.node_id);
        if (now || wasBeneath[k]) changed++;
        if (now !== wasBeneath[k] || isFile.get(r.node_id)) refresh(r.node_id);
      });
      if (pv >= first && (changed > 0 || created)) out.push({ projectVersion: pv, filesCount: inside.size, changedCount: changed });
    }
    return out;
  }
}
