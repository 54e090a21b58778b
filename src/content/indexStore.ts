import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/database.ts';
import { FreshCache } from '../db/freshCache.ts';
import { NotFoundError, ValidationError } from '../errors/contentErrors.ts';
import { TRASH_DIR } from './paths.ts';
import type {
  Actor,
  AuditAction,
  ChangeActor,
  ChangeEntry,
  CommitInfo,
  ScopeFigures,
  AuditLogEntry,
  NodeInfo,
  NodeType,
  Operation,
  ProjectStats,
  TrashItem,
  TreeNode,
  VersionInfo,
  VersionList,
} from './types.ts';

/** A row of `nodes` as stored. */
export interface NodeRow {
  id: string;
  project_id: string;
  path: string;
  parent_id: string | null;
  type: NodeType;
  name: string;
  content_hash: string | null;
  size: number;
  mime_type: string | null;
  state: 'active' | 'trashed';
  version: number;
  original_path: string | null;
  deleted_at: string | null;
  deleted_by: string | null;
  created_at: string;
  updated_at: string;
  children_count?: number | null;
}

export interface VersionRow {
  node_id: string;
  version: number;
  project_id: string;
  project_version: number;
  commit_id: string;
  blob_id: string | null;
  type: NodeType;
  path: string;
  parent_id: string | null;
  operation: Operation;
  actor_type: 'user' | 'agent' | 'sync';
  actor_id: string;
  author: string;
  commit_author: string | null;
  message: string | null;
  size: number;
  created_at: string;
}

export interface IndexState {
  headCommit: string | null;
  projectVersion: number;
  commitsSinceRepack: number;
}

const CHILDREN = `CASE WHEN n.type = 'folder' THEN (SELECT COUNT(*) FROM nodes c WHERE c.project_id = n.project_id AND c.parent_id = n.id) END AS children_count`;

/** All SQL of the content index: prepared once, shared by every project. */
export class IndexStore {
  private readonly s: Record<string, Statement>;
  /** nodeByPath (a read of every path-addressed request), kept while the database stays unchanged. */
  private readonly byPath: FreshCache<string, NodeInfo>;

  constructor(readonly db: Db) {
    this.byPath = new FreshCache(db, 20_000);
    const p = (sql: string) => db.prepare(sql);
    this.s = {
      byPath: p(`SELECT n.*, ${CHILDREN} FROM nodes n WHERE n.project_id = ? AND n.path = ? LIMIT 1`),
      rawByPath: p(`SELECT * FROM nodes WHERE project_id = ? AND path = ? LIMIT 1`),
      allByPath: p(`SELECT * FROM nodes WHERE project_id = ? AND path = ?`),
      byId: p(`SELECT n.*, ${CHILDREN} FROM nodes n WHERE n.id = ? AND n.project_id = ?`),
      rawById: p(`SELECT * FROM nodes WHERE id = ?`),
      anyById: p(`SELECT n.*, ${CHILDREN} FROM nodes n WHERE n.id = ?`),
      childrenRoot: p(`SELECT n.*, ${CHILDREN} FROM nodes n WHERE n.project_id = ? AND n.parent_id IS NULL AND n.state = ?
        ORDER BY n.type <> 'folder', n.name`),
      children: p(`SELECT n.*, ${CHILDREN} FROM nodes n WHERE n.project_id = ? AND n.parent_id = ? AND n.state = ?
        ORDER BY n.type <> 'folder', n.name`),
      under: p(`SELECT n.*, ${CHILDREN} FROM nodes n WHERE n.project_id = ? AND n.path > ? AND n.path < ? AND n.state = ?`),
      allActive: p(`SELECT n.*, ${CHILDREN} FROM nodes n WHERE n.project_id = ? AND n.state = 'active'`),
      allNodes: p(`SELECT * FROM nodes WHERE project_id = ?`),
      descendants: p(`WITH RECURSIVE sub(id, parent_id, name, type) AS (
          SELECT id, parent_id, name, type FROM nodes WHERE project_id = @project AND parent_id = @folder
          UNION ALL SELECT n.id, n.parent_id, n.name, n.type FROM nodes n JOIN sub ON n.project_id = @project AND n.parent_id = sub.id)
        SELECT * FROM sub`),
      ancestors: p(`WITH RECURSIVE up(id, parent_id, depth) AS (
          SELECT id, parent_id, 0 FROM nodes WHERE project_id = @project AND id = @id
          UNION ALL SELECT n.id, n.parent_id, up.depth + 1 FROM nodes n JOIN up ON n.project_id = @project AND n.id = up.parent_id)
        SELECT id FROM up ORDER BY depth DESC`),
      insertNode: p(`INSERT INTO nodes (id, project_id, path, parent_id, type, name, content_hash, size, mime_type, state,
          version, original_path, deleted_at, deleted_by, created_at, updated_at)
        VALUES (@id, @project_id, @path, @parent_id, @type, @name, @content_hash, @size, @mime_type, @state,
          @version, @original_path, @deleted_at, @deleted_by, @created_at, @updated_at)
        ON CONFLICT(id) DO UPDATE SET path = excluded.path, parent_id = excluded.parent_id, type = excluded.type,
          name = excluded.name, content_hash = excluded.content_hash, size = excluded.size, mime_type = excluded.mime_type,
          state = excluded.state, version = excluded.version, original_path = excluded.original_path,
          deleted_at = excluded.deleted_at, deleted_by = excluded.deleted_by, updated_at = excluded.updated_at`),
      setPathState: p(`UPDATE nodes SET path = ?, state = ? WHERE id = ?`),
      deleteNode: p(`DELETE FROM nodes WHERE id = ?`),
      deleteVersions: p(`DELETE FROM node_versions WHERE node_id = ?`),
      folderHash: p(`UPDATE nodes SET content_hash = ? WHERE project_id = ? AND path = ? AND type = 'folder'`),
      insertVersion: p(`INSERT OR REPLACE INTO node_versions (node_id, version, project_id, project_version, commit_id, blob_id,
          type, path, parent_id, operation, actor_type, actor_id, author, commit_author, message, size, created_at)
        VALUES (@node_id, @version, @project_id, @project_version, @commit_id, @blob_id, @type, @path, @parent_id,
          @operation, @actor_type, @actor_id, @author, @commit_author, @message, @size, @created_at)`),
      version: p(`SELECT * FROM node_versions WHERE node_id = ? AND version = ?`),
      versionCommits: p(`SELECT version, commit_id FROM node_versions WHERE node_id = ?`),
      versionsBetween: p(`SELECT * FROM node_versions WHERE node_id = ? AND version > ? AND version <= ? ORDER BY version`),
      blameCheckpoint: p(`SELECT version, commit_id, path, origins FROM blame_checkpoints WHERE node_id = ? AND version <= ? ORDER BY version DESC LIMIT 1`),
      putBlameCheckpoint: p(`INSERT OR REPLACE INTO blame_checkpoints (node_id, version, project_id, commit_id, path, origins) VALUES (?, ?, ?, ?, ?, ?)`),
      versionAtPv: p(`SELECT * FROM node_versions WHERE node_id = ? AND project_version <= ? ORDER BY version DESC LIMIT 1`),
      versions: p(`SELECT * FROM node_versions WHERE node_id = ? AND version > ? ORDER BY version DESC LIMIT ?`),
      versionsAt: p(`SELECT v.* FROM node_versions v WHERE v.project_id = ? AND v.project_version <= ?
          AND v.version = (SELECT MAX(w.version) FROM node_versions w WHERE w.node_id = v.node_id AND w.project_version <= ?)`),
      projectVersions: p(`SELECT * FROM node_versions WHERE project_id = ? ORDER BY node_id, version`),
      insertCommit: p(`INSERT OR REPLACE INTO project_commits (project_id, project_version, commit_id, actor_type, actor_id, author, commit_author, message, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      lastCommit: p(`SELECT * FROM project_commits WHERE project_id = ? ORDER BY project_version DESC LIMIT 1`),
      commitById: p(`SELECT * FROM project_commits WHERE project_id = ? AND commit_id = ?`),
      commitByVersion: p(`SELECT * FROM project_commits WHERE project_id = ? AND project_version = ?`),
      insertAudit: p(`INSERT INTO content_audit_log (project_id, node_id, path, action, actor_type, actor_id, author, commit_author, details, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      auditByNode: p(`SELECT * FROM content_audit_log WHERE node_id = ? AND project_id = ? ORDER BY id DESC LIMIT ?`),
      auditByPath: p(`SELECT * FROM content_audit_log WHERE project_id = ? AND path = ? ORDER BY id DESC LIMIT ?`),
      getState: p(`SELECT * FROM content_index_state WHERE project_id = ?`),
      setState: p(`INSERT INTO content_index_state (project_id, head_commit, project_version, commits_since_repack, updated_at)
        VALUES (?, ?, ?, ?, ?) ON CONFLICT(project_id) DO UPDATE SET head_commit = excluded.head_commit,
          project_version = excluded.project_version, commits_since_repack = excluded.commits_since_repack,
          updated_at = excluded.updated_at`),
      countsByType: p(`SELECT type, COUNT(*) AS n FROM nodes WHERE project_id = ? AND state = 'active' GROUP BY type`),
      trashFigures: p(`SELECT COUNT(*) AS n, COALESCE(SUM(size), 0) AS bytes FROM nodes WHERE project_id = ? AND state = 'trashed'`),
      trash: p(`SELECT * FROM nodes WHERE project_id = ? AND state = 'trashed' AND parent_id IS NULL ORDER BY deleted_at DESC, path`),
    };
  }

  // ------------------------------------------------------------ reads

  nodeByPath(projectId: string, path: string): NodeInfo | null {
    const read = () => {
      const r = this.s.byPath.get(projectId, path) as NodeRow | undefined;
      return r ? toNode(r) : undefined;
    };
    return this.byPath.get(`${projectId}\0${path}`, read) ?? null;
  }

  /** The raw row (no children count: the write path looks folders up often). */
  rowByPath(projectId: string, path: string): NodeRow | undefined {
    return this.s.rawByPath.get(projectId, path) as NodeRow | undefined;
  }

  /** The node at `path` of the wanted kind (paths can be briefly shared while a commit is replayed). */
  rowAt(projectId: string, path: string, folder: boolean): NodeRow | undefined {
    return (this.s.allByPath.all(projectId, path) as NodeRow[]).find((r) => (r.type === 'folder') === folder);
  }

  nodeById(projectId: string, id: string): NodeInfo | null {
    const r = this.s.byId.get(id, projectId) as NodeRow | undefined;
    return r ? toNode(r) : null;
  }

  /** A node by id in whichever project holds it (ids are unique across projects). */
  nodeByIdAnywhere(id: string): NodeInfo | null {
    const r = this.s.anyById.get(id) as NodeRow | undefined;
    return r ? toNode(r) : null;
  }

  rowById(id: string): NodeRow | undefined {
    return this.s.rawById.get(id) as NodeRow | undefined;
  }

  children(projectId: string, parentId: string | null, state: 'active' | 'trashed'): NodeInfo[] {
    const rows = (
      parentId === null ? this.s.childrenRoot.all(projectId, state) : this.s.children.all(projectId, parentId, state)
    ) as NodeRow[];
    return rows.map(toNode);
  }

  tree(projectId: string, path: string, maxDepth: number): TreeNode {
    let rootNode: TreeNode;
    let rows: NodeRow[];
    if (path === '' || path === TRASH_DIR) {
      const state = path === '' ? 'active' : 'trashed';
      rootNode = virtualFolder(projectId, path);
      rows = path === '' ? (this.s.allActive.all(projectId) as NodeRow[]) : (this.s.under.all(projectId, path + '/', path + '0', state) as NodeRow[]);
    } else {
      const r = this.rowByPath(projectId, path);
      if (!r) throw new NotFoundError(`no node at ${path}`, { path });
      rootNode = { ...toNode(r), children: null };
      rows = r.type === 'folder' ? (this.s.under.all(projectId, path + '/', path + '0', r.state) as NodeRow[]) : [];
    }
    if (rootNode.type !== 'folder') return rootNode;
    const depthOf = (p: string) => (p === '' ? 0 : p.split('/').length);
    const base = depthOf(path);
    const byDir = new Map<string, TreeNode[]>();
    for (const r of rows) {
      if (maxDepth >= 0 && depthOf(r.path) - base > maxDepth) continue;
      const dir = r.path.slice(0, Math.max(0, r.path.lastIndexOf('/')));
      const list = byDir.get(dir) ?? [];
      list.push({ ...toNode(r), children: null });
      byDir.set(dir, list);
    }
    const attach = (n: TreeNode, depth: number) => {
      if (n.type !== 'folder') return;
      if (maxDepth >= 0 && depth >= maxDepth) return;
      const kids = byDir.get(n.path) ?? [];
      kids.sort((a, b) => Number(a.type !== 'folder') - Number(b.type !== 'folder') || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      n.children = kids;
      for (const k of kids) attach(k, depth + 1);
    };
    attach(rootNode, 0);
    return rootNode;
  }

  version(nodeId: string, version: number): VersionInfo | null {
    const r = this.s.version.get(nodeId, version) as VersionRow | undefined;
    return r ? toVersion(r) : null;
  }

  /** The commit that made each of the node's versions, by commit id (blame names versions by commit). */
  versionCommits(nodeId: string): Map<string, number> {
    const rows = this.s.versionCommits.all(nodeId) as { version: number; commit_id: string }[];
    return new Map(rows.map((r) => [r.commit_id, r.version]));
  }

  /** The node's versions after `after` up to `upTo`, oldest first. */
  versionsBetween(nodeId: string, after: number, upTo: number): VersionInfo[] {
    return (this.s.versionsBetween.all(nodeId, after, upTo) as VersionRow[]).map(toVersion);
  }

  /** The node's latest blame checkpoint at or before `version` (history/blame.ts). */
  blameCheckpoint(nodeId: string, version: number): { version: number; commitId: string; path: string; origins: string } | null {
    const r = this.s.blameCheckpoint.get(nodeId, version) as { version: number; commit_id: string; path: string; origins: string } | undefined;
    return r ? { version: r.version, commitId: r.commit_id, path: r.path, origins: r.origins } : null;
  }

  putBlameCheckpoint(projectId: string, v: { nodeId: string; version: number; commitId: string; path: string }, origins: string): void {
    this.s.putBlameCheckpoint.run(v.nodeId, v.version, projectId, v.commitId, v.path, origins);
  }

  versionRow(nodeId: string, version: number): VersionRow | undefined {
    return this.s.version.get(nodeId, version) as VersionRow | undefined;
  }

  versions(nodeId: string, currentVersion: number, limit: number, sinceVersion: number): VersionList {
    const rows = this.s.versions.all(nodeId, sinceVersion, limit) as VersionRow[];
    // Versions are contiguous from 1 (never deleted while the node exists): no COUNT needed.
    return { versions: rows.map(toVersion), total: currentVersion, currentVersion };
  }

  /** The node's latest version at or before project version `pv` (null: it did not exist yet). */
  versionAt(nodeId: string, pv: number): VersionInfo | null {
    const r = this.s.versionAtPv.get(nodeId, pv) as VersionRow | undefined;
    return r ? toVersion(r) : null;
  }

  /** Each node's latest version at or before project version `pv` (project rollback). */
  versionsAt(projectId: string, pv: number): VersionRow[] {
    return this.s.versionsAt.all(projectId, pv, pv) as VersionRow[];
  }

  allNodes(projectId: string): NodeRow[] {
    return this.s.allNodes.all(projectId) as NodeRow[];
  }

  allVersions(projectId: string): VersionRow[] {
    return this.s.projectVersions.all(projectId) as VersionRow[];
  }

  descendants(projectId: string, id: string): { id: string; parent_id: string; name: string; type: NodeType }[] {
    return this.s.descendants.all({ folder: id, project: projectId }) as { id: string; parent_id: string; name: string; type: NodeType }[];
  }

  /** The ids from the root down to `id` (itself included), in one recursive query; [] when unknown. */
  ancestorIds(projectId: string, id: string): string[] {
    return (this.s.ancestors.all({ project: projectId, id }) as { id: string }[]).map((r) => r.id);
  }

  trash(projectId: string): TrashItem[] {
    return (this.s.trash.all(projectId) as NodeRow[]).map((r) => ({
      id: r.id,
      trashPath: r.path,
      originalPath: r.original_path,
      name: r.original_path ? r.original_path.slice(r.original_path.lastIndexOf('/') + 1) : r.name,
      type: r.type,
      deletedAt: r.deleted_at,
      deletedBy: r.deleted_by,
    }));
  }

  /** Every audit entry of a project (pushes included, path ''), newest first, below `beforeId`. */
  auditByProject(projectId: string, limit: number, beforeId?: number): AuditLogEntry[] {
    const rows = this.db
      .prepare(`SELECT * FROM content_audit_log WHERE project_id = ? AND id < ? ORDER BY id DESC LIMIT ?`)
      .all(projectId, beforeId ?? Number.MAX_SAFE_INTEGER, limit) as AuditRow[];
    return rows.map(toAudit);
  }

  auditByNode(projectId: string, nodeId: string, limit: number): AuditLogEntry[] {
    return (this.s.auditByNode.all(nodeId, projectId, limit) as AuditRow[]).map(toAudit);
  }

  auditByPath(projectId: string, path: string, limit: number): AuditLogEntry[] {
    return (this.s.auditByPath.all(projectId, path, limit) as AuditRow[]).map(toAudit);
  }

  stats(projectId: string): ProjectStats {
    const nodesByType: Record<NodeType, number> = { folder: 0, json: 0, markdown: 0, file: 0 };
    for (const r of this.s.countsByType.all(projectId) as { type: NodeType; n: number }[]) nodesByType[r.type] = r.n;
    const t = this.s.trashFigures.get(projectId) as { n: number; bytes: number };
    const last = this.s.lastCommit.get(projectId) as CommitRow | undefined;
    return {
      nodesByType,
      trashedCount: t.n,
      trashBytes: t.bytes,
      commitCount: last?.project_version ?? 0,
      lastChange: last
        ? { projectVersion: last.project_version, commitId: last.commit_id, author: last.author, message: last.message, at: last.created_at }
        : null,
    };
  }

  commitById(projectId: string, commitId: string): CommitRow | undefined {
    return this.s.commitById.get(projectId, commitId) as CommitRow | undefined;
  }

  commitAt(projectId: string, pv: number): CommitRow | undefined {
    return this.s.commitByVersion.get(projectId, pv) as CommitRow | undefined;
  }

  indexState(projectId: string): IndexState | null {
    const r = this.s.getState.get(projectId) as
      | { head_commit: string | null; project_version: number; commits_since_repack: number }
      | undefined;
    return r ? { headCommit: r.head_commit, projectVersion: r.project_version, commitsSinceRepack: r.commits_since_repack } : null;
  }

  // ------------------------------------------------------------ writes (called inside transactions)

  upsertNode(row: NodeRow): void {
    const { children_count: _, ...rest } = row;
    this.s.insertNode.run(rest);
  }

  setPathState(id: string, path: string, state: 'active' | 'trashed'): void {
    this.s.setPathState.run(path, state, id);
  }

  deleteNode(id: string): void {
    this.s.deleteNode.run(id);
    this.s.deleteVersions.run(id);
  }

  setFolderHash(projectId: string, path: string, oid: string): void {
    this.s.folderHash.run(oid, projectId, path);
  }

  putVersion(row: VersionRow): void {
    this.s.insertVersion.run(row);
  }

  insertCommit(projectId: string, pv: number, commitId: string, actor: Actor, message: string, at: string): void {
    this.s.insertCommit.run(projectId, pv, commitId, actor.type, actor.id, actor.author, actor.commitAuthor ?? null, message, at);
  }

  /** The push entries of the audit log name commits: after a history rewrite they follow it. */
  remapPushAudit(projectId: string, renamed: Map<string, string>): void {
    const rows = this.db.prepare(`SELECT id, details FROM content_audit_log WHERE project_id = ? AND action = 'push'`).all(projectId) as { id: number; details: string }[];
    const update = this.db.prepare(`UPDATE content_audit_log SET details = ? WHERE id = ?`);
    for (const r of rows) {
      const d = JSON.parse(r.details) as { before?: string | null; after?: string };
      const before = d.before ? (renamed.get(d.before) ?? d.before) : d.before;
      const after = d.after ? (renamed.get(d.after) ?? d.after) : d.after;
      if (before !== d.before || after !== d.after) update.run(JSON.stringify({ ...d, before, after }), r.id);
    }
  }

  /** Every version of the project as raw rows `[node_id, project_version, parent_id, type]` in commit order (folder snapshots). */
  versionParentRows(projectId: string): [string, number, string | null, NodeType][] {
    this.versionParents ??= this.db
      .prepare(`SELECT node_id, project_version, parent_id, type FROM node_versions WHERE project_id = ? ORDER BY project_version`)
      .raw();
    return this.versionParents.all(projectId) as [string, number, string | null, NodeType][];
  }
  private versionParents: Statement | undefined;

  /** The project version that created a node (its first version), or null. */
  createdAt(projectId: string, nodeId: string): number | null {
    this.firstVersion ??= this.db.prepare(`SELECT MIN(project_version) AS pv FROM node_versions WHERE node_id = ? AND project_id = ?`);
    return (this.firstVersion.get(nodeId, projectId) as { pv: number | null }).pv;
  }
  private firstVersion: Statement | undefined;

  /** Whether the audit log records the push whose tip is `after` (a rebuild keeps push rows). */
  pushRecorded(projectId: string, after: string): boolean {
    this.pushRow ??= this.db.prepare(
      `SELECT 1 FROM content_audit_log WHERE project_id = ? AND path = '' AND action = 'push' AND json_extract(details, '$.after') = ? LIMIT 1`,
    );
    return this.pushRow.get(projectId, after) !== undefined;
  }
  private pushRow: Statement | undefined;

  insertAudit(projectId: string, nodeId: string, path: string, action: string, actor: Actor, details: object, at: string): void {
    this.s.insertAudit.run(projectId, nodeId, path, action, actor.type, actor.id, actor.author, actor.commitAuthor ?? null, JSON.stringify(details), at);
  }

  setIndexState(projectId: string, state: IndexState): void {
    this.s.setState.run(projectId, state.headCommit, state.projectVersion, state.commitsSinceRepack, new Date().toISOString());
  }

  /** Removes every row of a deleted project, its audit log included. */
  deleteProject(projectId: string): void {
    this.clearProject(projectId);
    this.db.prepare(`DELETE FROM content_audit_log WHERE project_id = ?`).run(projectId);
  }

  /**
   * Removes every index row of a project that git can rebuild. Audit entries without a node
   * (push summaries recorded by the git remote) are not in git, so they stay.
   */
  clearProject(projectId: string): void {
    for (const t of ['nodes', 'node_versions', 'project_commits', 'content_index_state', 'blame_checkpoints']) {
      this.db.prepare(`DELETE FROM ${t} WHERE project_id = ?`).run(projectId);
    }
    this.db.prepare(`DELETE FROM content_audit_log WHERE project_id = ? AND node_id <> ''`).run(projectId);
  }
}

export interface CommitRow {
  project_id: string;
  project_version: number;
  commit_id: string;
  actor_type: string;
  actor_id: string;
  author: string;
  commit_author: string | null;
  message: string;
  created_at: string;
}

interface AuditRow {
  id: number;
  node_id: string;
  path: string;
  action: AuditAction;
  actor_type: 'user' | 'agent' | 'sync';
  actor_id: string;
  author: string;
  commit_author: string | null;
  details: string;
  created_at: string;
}

export function toNode(r: NodeRow): NodeInfo {
  return {
    id: r.id,
    projectId: r.project_id,
    path: r.path,
    name: r.name,
    parentId: r.parent_id,
    type: r.type,
    contentHash: r.content_hash,
    size: r.size,
    mimeType: r.mime_type,
    state: r.state,
    version: r.version,
    childrenCount: r.type === 'folder' ? (r.children_count ?? 0) : null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    originalPath: r.original_path,
    deletedAt: r.deleted_at,
    deletedBy: r.deleted_by,
  };
}

export function toVersion(r: VersionRow): VersionInfo {
  return {
    nodeId: r.node_id,
    version: r.version,
    type: r.type,
    path: r.path,
    operation: r.operation,
    actorType: r.actor_type,
    actorId: r.actor_id,
    author: r.author,
    commitAuthor: r.commit_author,
    message: r.message,
    size: r.size,
    blobId: r.blob_id,
    commitId: r.commit_id,
    projectVersion: r.project_version,
    createdAt: r.created_at,
  };
}

function toAudit(r: AuditRow): AuditLogEntry {
  return {
    id: r.id,
    action: r.action,
    actorType: r.actor_type,
    actorId: r.actor_id,
    author: r.author,
    commitAuthor: r.commit_author,
    nodeId: r.node_id,
    path: r.path,
    timestamp: r.created_at,
    details: JSON.parse(r.details) as Record<string, unknown>,
  };
}

/** The project root ('') or the trash folder as a node: neither has an index row. */
export function virtualFolder(projectId: string, path: string): TreeNode {
  if (path !== '' && path !== TRASH_DIR) throw new ValidationError('not a virtual folder');
  return {
    id: '',
    projectId,
    path,
    name: path,
    parentId: null,
    type: 'folder',
    contentHash: null,
    size: 0,
    mimeType: null,
    state: path === '' ? 'active' : 'trashed',
    version: 0,
    childrenCount: null,
    createdAt: '',
    updatedAt: '',
    originalPath: null,
    deletedAt: null,
    deletedBy: null,
    children: null,
  };
}

const PV = `json_extract(details, '$.project_version')`;

interface ChangeRow {
  node_id: string;
  path: string;
  action: string;
  actor_type: ChangeActor['type'];
  actor_id: string;
  author: string;
  commit_author: string | null;
  details: string;
  created_at: string;
  pv: number;
}

/**
 * The index read as a change log (the data-sync changelog, the live feed, scoped figures): node
 * changes by project commit number from the audit entries, which keep permanent deletes too;
 * an expression index on the commit number (migration 006) keeps a read proportional to what it
 * returns. Push summaries (node_id '') are not node changes and are skipped. Paths inside a
 * scope `s` are `s` itself and the range [`s/`, `s0`) ('0' follows '/'), so scoped queries walk
 * the (project_id, path) indexes.
 */
export class ChangeIndex {
  private readonly s: Record<string, Statement>;

  constructor(db: Db) {
    const p = (sql: string) => db.prepare(sql);
    const cols = `node_id, path, action, actor_type, actor_id, author, commit_author, details, created_at, ${PV} AS pv`;
    const inRange = (col: string) => `(${col} = @scope OR (${col} >= @lo AND ${col} < @hi))`;
    this.s = {
      after: p(`SELECT ${cols} FROM content_audit_log WHERE project_id = ? AND ${PV} > ? AND node_id <> '' ORDER BY ${PV}, id LIMIT ?`),
      between: p(`SELECT ${cols} FROM content_audit_log WHERE project_id = ? AND ${PV} > ? AND ${PV} <= ? AND node_id <> '' ORDER BY ${PV}, id`),
      commits: p(`SELECT * FROM project_commits WHERE project_id = ? AND project_version > ? ORDER BY project_version LIMIT ?`),
      counts: p(`SELECT type, COUNT(*) AS n FROM nodes WHERE project_id = @project AND state = 'active' AND ${inRange('path')} GROUP BY type`),
      trash: p(
        `SELECT COUNT(*) AS n, COALESCE(SUM(size), 0) AS bytes FROM nodes
         WHERE project_id = @project AND state = 'trashed' AND ${inRange('original_path')}`,
      ),
      // Commits with a change inside the scope: at a path inside it, or trashed from inside it.
      scopedCommits: p(
        `SELECT COUNT(*) AS n, MAX(pv) AS last FROM (
           SELECT ${PV} AS pv FROM content_audit_log WHERE project_id = @project AND node_id <> '' AND ${inRange('path')}
           UNION
           SELECT ${PV} FROM content_audit_log WHERE project_id = @project AND node_id <> '' AND path >= '.trash/' AND path < '.trash0'
             AND ${inRange(`json_extract(details, '$.old_path')`)}
         )`,
      ),
    };
  }

  /** Entries of the commits after `after`, in commit order, at most `limit`. */
  after(projectId: string, after: number, limit: number): ChangeEntry[] {
    return (this.s.after.all(projectId, after, limit) as ChangeRow[]).map(toChange);
  }

  /** Entries of the commits in (`after`, `upTo`]. */
  between(projectId: string, after: number, upTo: number): ChangeEntry[] {
    return (this.s.between.all(projectId, after, upTo) as ChangeRow[]).map(toChange);
  }

  /** Up to `limit` commits after `after`. */
  commits(projectId: string, after: number, limit: number): CommitInfo[] {
    return (this.s.commits.all(projectId, after, limit) as CommitRow[]).map((c) => ({
      projectVersion: c.project_version,
      commitId: c.commit_id,
      actor: actorOf(c.actor_type as ChangeActor['type'], c.actor_id, c.author, c.commit_author),
      message: c.message,
      createdAt: c.created_at,
    }));
  }

  /** Figures of the subtree `scope` (a normalized, non-empty path; the whole project's are IndexStore.stats). */
  figures(projectId: string, scope: string): ScopeFigures {
    const args = { project: projectId, scope, lo: `${scope}/`, hi: `${scope}0` };
    const nodesByType: ScopeFigures['nodesByType'] = { folder: 0, json: 0, markdown: 0, file: 0 };
    for (const r of this.s.counts.all(args) as { type: NodeType; n: number }[]) nodesByType[r.type] = r.n;
    const t = this.s.trash.get(args) as { n: number; bytes: number };
    const c = this.s.scopedCommits.get(args) as { n: number; last: number | null };
    return { nodesByType, trashedCount: t.n, trashBytes: t.bytes, commitCount: c.n, lastCommit: c.last };
  }
}

function toChange(r: ChangeRow): ChangeEntry {
  const d = JSON.parse(r.details) as { version?: number; type?: string; old_path?: string };
  return {
    projectVersion: r.pv,
    nodeId: r.node_id,
    path: r.path,
    oldPath: d.old_path ?? null,
    action: r.action,
    nodeType: d.type ?? 'file',
    version: d.version ?? 0,
    actor: actorOf(r.actor_type, r.actor_id, r.author, r.commit_author),
    createdAt: r.created_at,
  };
}

function actorOf(type: ChangeActor['type'], id: string, author: string, commitAuthor: string | null): ChangeActor {
  return commitAuthor ? { type, id, author, commitAuthor } : { type, id, author };
}
