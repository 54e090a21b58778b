import { readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { BlobCache } from './blobCache.ts';
import { ChildrenCache } from './childrenCache.ts';
import { assertWritableType, decodeContent, encodeContent } from './encoding.ts';
import { NotFoundError, PayloadTooLargeError, ValidationError } from './errors.ts';
import { FolderSnapshots, type SnapshotPage } from './folderSnapshots.ts';
import { IndexStore } from './indexStore.ts';
import { assertProjectId, normalizePath, normalizeTargetPath } from './paths.ts';
import type { PreparedMutation } from './mutations.ts';
import { ProjectWriters } from './projectWriter.ts';
import { LARGE_COMMIT } from './largeCommit.ts';
import { TimeSlice } from './timeSlice.ts';
import { rootNode, treePage, type TreePage, type TreePageOptions } from './treePages.ts';
import { PushExpectations, STALE_PUSH_MS } from './pushExpectations.ts';
import { hashObject } from './git/objects.ts';
import { openLooseBlob, type BlobSource } from './git/blobReader.ts';
import { looseObjectExists, writeBlobStream } from './git/blobStream.ts';
import { RepoRegistry } from './git/repo.ts';
import { purgeHistory, remapPushAudit } from './purge.ts';
import type {
  Actor,
  AuditLogEntry,
  BulkFile,
  CommitOptions,
  CommitResult,
  Mutation,
  NodeInfo,
  NodeRef,
  ProjectStats,
  ReindexReport,
  PushInfo,
  SyncOptions,
  SyncReport,
  TrashItem,
  TreeNode,
  VersionInfo,
  VersionList,
  WritableNodeType,
  WriteResult,
} from './types.ts';

export type * from './types.ts';
export type { FolderSnapshot, SnapshotPage } from './folderSnapshots.ts';
export type { TreePage, TreePageOptions } from './treePages.ts';
export { ContentError, NotFoundError, ConflictError, ValidationError, PayloadTooLargeError } from './errors.ts';
export { decodeContent } from './encoding.ts';
export { PLACEHOLDER, TRASH_DIR } from './paths.ts';
export { newNodeId } from './mutations.ts';
export type { BlobSource } from './git/blobReader.ts';

/** A change of ContentStore.commitPlanned: a write names a stored blob (blobId, size) or carries bytes. */
export type PlannedChange =
  | { op: 'write'; path: string; type: WritableNodeType; blobId?: string; size?: number; bytes?: Buffer }
  | { op: 'mkdir'; path: string }
  | { op: 'move'; from: string; to: string }
  | { op: 'remove'; path: string; permanent?: boolean }
  | { op: 'restore'; trashPath: string; to: string };

export interface PlannedCommit {
  message: string;
  /** Parents after the tip of main. */
  parents: string[];
  changes: PlannedChange[];
}

/** What a purge did (ContentStore.purge). */
export interface PurgeReport {
  path: string;
  /** Tip of main before and after the rewrite. */
  before: string;
  after: string;
  commitsRewritten: number;
  /** Nodes that were at the path at some time: their versions are gone. */
  nodes: string[];
}

export interface ContentStoreOptions {
  /** Folder holding `<projectId>.git` bare repositories (the SQLite file lives there too, owned elsewhere). */
  dataDir: string;
  /** Opened with openDatabase(); migration 002 must have run. */
  db: Db;
  logger?: Logger;
  /** Also fsync objects, the ref and its folders before acknowledging (power-loss durability). Default false. */
  fsync?: boolean;
  /** Largest content of a single node in bytes (PAYLOAD_TOO_LARGE above). Default 10 MiB. */
  maxContentBytes?: number;
  /** Run `git repack -ad` after this many commits to a project; 0 disables. Default 2000. */
  repackEvery?: number;
  /** Projects whose git caches and in-memory trees stay loaded (LRU). Default 64. */
  maxCachedProjects?: number;
  /** Bytes of blob content kept in the shared LRU. Default 32 MiB. */
  blobCacheBytes?: number;
  /** Most commits made in one group-commit batch. Default 512. */
  maxBatchCommits?: number;
  /** Path of the git executable for maintenance; null disables repacking. Default 'git' (looked up on PATH). */
  gitBinary?: string | null;
}

export interface VersionListOptions {
  /** Default 50, at most 1000. */
  limit?: number;
  /** Only versions with a greater number. */
  sinceVersion?: number;
}

/**
 * The git-backed content store. Each project is a bare repository `<dataDir>/<projectId>.git`
 * on branch `main`; a SQLite index (nodes, node_versions, project_commits, content_audit_log,
 * content_index_state) makes reads, version lists and rollbacks independent of history length.
 *
 * Every change goes through `commit()`: a list of mutations applied atomically as exactly one git
 * commit. Commits to one project are serialized and group-committed (the queue is drained in
 * batches: one commit per call, one ref move per batch, one SQLite transaction per batch), and a
 * call resolves only after objects, ref and index are written. Read methods are synchronous index
 * look-ups except those returning content bytes.
 */
export class ContentStore {
  readonly dataDir: string;
  private readonly index: IndexStore;
  private readonly repos: RepoRegistry;
  private readonly blobs: BlobCache;
  private readonly writers: ProjectWriters;
  private readonly pushes: PushExpectations;
  private readonly commitListeners = new Set<(projectId: string) => void>();
  private readonly maxContentBytes: number;
  private readonly snapshots: FolderSnapshots;
  private readonly fsync: boolean;
  private readonly logger: Logger | undefined;
  private readonly db: Db;
  /** Folder listings by id (the hot read of the id surface), valid while the project's head stays. */
  private readonly children = new ChildrenCache(100_000);

  constructor(options: ContentStoreOptions) {
    this.dataDir = options.dataDir;
    this.maxContentBytes = options.maxContentBytes ?? 10 * 1024 * 1024;
    this.fsync = options.fsync ?? false;
    this.logger = options.logger;
    this.db = options.db;
    this.index = new IndexStore(options.db);
    this.pushes = new PushExpectations(options.db);
    this.snapshots = new FolderSnapshots(this.index);
    this.repos = new RepoRegistry(options.dataDir, {
      fsync: options.fsync ?? false,
      maxCached: options.maxCachedProjects ?? 64,
      logger: options.logger,
    });
    this.blobs = new BlobCache(options.blobCacheBytes ?? 32 * 1024 * 1024);
    this.writers = new ProjectWriters({
      db: options.db,
      index: this.index,
      repos: this.repos,
      logger: options.logger,
      maxBatchCommits: options.maxBatchCommits ?? 512,
      repackEvery: options.repackEvery ?? 2000,
      maxCached: options.maxCachedProjects ?? 64,
      gitBinary: options.gitBinary === undefined ? 'git' : options.gitBinary,
      pushes: this.pushes,
      onCommitted: (projectId) => {
        for (const listener of this.commitListeners) listener(projectId);
      },
    });
  }

  /**
   * Calls `listener(projectId)` after every batch of commits is acknowledged and after commits
   * pushed with git are indexed (the live change feed); what changed is in the index (audit
   * entries and project_commits by commit number). Returns the unsubscribe function.
   */
  onCommitted(listener: (projectId: string) => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  // ---------------------------------------------------------------- writes

  /**
   * Applies `mutations` in order as ONE commit on `main`, or not at all: any invalid mutation
   * rejects the whole call with a ContentError and nothing changes. Mutations that change
   * nothing are skipped; when all do, no commit is made and `changed` is false.
   */
  async commit(projectId: string, actor: Actor, mutations: Mutation[], options: CommitOptions = {}): Promise<CommitResult> {
    assertProjectId(projectId);
    assertActor(actor);
    if (!Array.isArray(mutations) || mutations.length === 0) throw new ValidationError('no mutations given');
    let prepared: PreparedMutation[];
    if (mutations.length < LARGE_COMMIT) {
      prepared = mutations.map((m, i) => this.prepare(projectId, m, mutations.length > 1 ? i : undefined));
    } else {
      // Validating and hashing a hundred thousand files takes seconds: let other requests in between.
      const slice = new TimeSlice();
      prepared = [];
      for (let i = 0; i < mutations.length; i++) {
        await slice.tick();
        prepared.push(this.prepare(projectId, mutations[i], i));
      }
    }
    const result = await this.writers.get(projectId).submit({ actor, message: options.message, mutations: prepared, guard: options.guard });
    // Write-through: what was just written is what is most likely read next, and it is in hand.
    if (prepared.length <= 64) for (const m of prepared) if (m.op === 'write' && m.bytes) this.blobs.set(m.blobId, m.bytes);
    return result;
  }

  /** Writes one json/markdown/file node, creating missing parent folders. */
  async write(
    projectId: string,
    actor: Actor,
    input: { path: string; type: WritableNodeType; content: unknown; baseVersion?: number; message?: string },
  ): Promise<WriteResult> {
    const m: Mutation = { op: 'write', path: input.path, type: input.type, content: input.content };
    if (input.baseVersion !== undefined) m.baseVersion = input.baseVersion;
    const r = await this.commit(projectId, actor, [m], { message: input.message });
    return this.nodeResult(projectId, r, normalizePath(input.path));
  }

  /** Creates a folder and its missing parents; an existing folder is `changed: false`. */
  async mkdir(projectId: string, actor: Actor, path: string, options: CommitOptions = {}): Promise<WriteResult> {
    const r = await this.commit(projectId, actor, [{ op: 'mkdir', path }], options);
    return this.nodeResult(projectId, r, normalizePath(path));
  }

  /** Moves or renames a node; a folder keeps the ids and histories of everything inside it. */
  async move(projectId: string, actor: Actor, from: string, to: string, options: CommitOptions = {}): Promise<WriteResult> {
    const r = await this.commit(projectId, actor, [{ op: 'move', from, to }], options);
    return this.nodeResult(projectId, r, normalizePath(to, 'new_path'));
  }

  /**
   * Soft delete (default) moves the node to `.trash/<id>_<name>` keeping id and history; permanent
   * removes it and its history from the tree and the index. Removing a trash path is permanent.
   */
  async remove(
    projectId: string,
    actor: Actor,
    path: string,
    options: CommitOptions & { permanent?: boolean } = {},
  ): Promise<CommitResult> {
    return this.commit(projectId, actor, [{ op: 'remove', path, permanent: options.permanent }], options);
  }

  /** Moves a top-level trash item back to `originalPath` (conflict when taken). */
  async restore(
    projectId: string,
    actor: Actor,
    trashPath: string,
    originalPath: string,
    options: CommitOptions = {},
  ): Promise<WriteResult> {
    const r = await this.commit(projectId, actor, [{ op: 'restore', trashPath, to: originalPath }], options);
    return this.nodeResult(projectId, r, normalizePath(originalPath, 'original_path'));
  }

  /** Writes all files in one commit, all or nothing (a bad entry names its index in `details.index`). */
  async bulkWrite(projectId: string, actor: Actor, files: BulkFile[], options: CommitOptions = {}): Promise<CommitResult> {
    if (!Array.isArray(files) || files.length === 0) throw new ValidationError('files must be a non-empty list');
    return this.commit(
      projectId,
      actor,
      files.map((f) => ({ op: 'write', path: f?.path, type: f?.type, content: f?.content }) as Mutation),
      options,
    );
  }

  /** A new version of a json/markdown/file node with the content (and type) of `version`. */
  async rollbackNode(projectId: string, actor: Actor, node: NodeRef, version: number, options: CommitOptions = {}): Promise<WriteResult> {
    const r = await this.commit(projectId, actor, [{ op: 'revert', node, version }], options);
    const current = this.getNode(projectId, node);
    return { node: current, changed: r.changed, commitId: r.commitId, projectVersion: r.projectVersion };
  }

  /**
   * One commit that returns the tree to its state after project version `targetVersion`: nodes
   * that changed get a new version, nodes created since go to the trash, trashed nodes that were
   * live come back. Permanently deleted nodes cannot come back.
   */
  async rollbackProject(projectId: string, actor: Actor, targetVersion: number, options: CommitOptions = {}): Promise<CommitResult> {
    return this.commit(projectId, actor, [{ op: 'rollbackProject', targetVersion }], options);
  }

  /**
   * One commit returning everything beneath a folder to its state at a snapshot (see
   * folderSnapshots; a snapshot is named by its commit id or its project version): changed nodes
   * get a 'rollback' version, trashed ones come back with ids and histories, nodes created since
   * go to the trash. Nothing outside the folder changes.
   */
  async rollbackFolder(
    projectId: string,
    actor: Actor,
    folderId: string,
    snapshot: { commitId: string } | { projectVersion: number },
    options: CommitOptions = {},
  ): Promise<CommitResult> {
    assertProjectId(projectId);
    let targetVersion: number;
    if ('commitId' in snapshot) {
      if (typeof snapshot.commitId !== 'string' || !/^[0-9a-f]{40}$/.test(snapshot.commitId)) {
        throw new ValidationError('snapshot id must be a commit id (40 hex characters)', { snapshot_id: snapshot.commitId });
      }
      const c = this.index.commitById(projectId, snapshot.commitId);
      if (!c) throw new NotFoundError('no such snapshot', { snapshot_id: snapshot.commitId });
      targetVersion = c.project_version;
    } else {
      targetVersion = snapshot.projectVersion;
    }
    return this.commit(projectId, actor, [{ op: 'rollbackFolder', folderId, targetVersion }], options);
  }

  // ---------------------------------------------------------------- reads (index look-ups)

  /** A folder's snapshots: the commits that changed something beneath it, newest first. */
  folderSnapshots(projectId: string, folderId: string, options: { limit?: number; before?: number } = {}): SnapshotPage {
    const folder = this.getById(projectId, folderId);
    if (folder.type !== 'folder') throw new ValidationError(`${folder.path} is not a folder`, { id: folderId });
    const limit = Math.min(Math.max(Math.trunc(options.limit ?? 50), 1), 1000);
    return this.snapshots.list(projectId, folderId, { limit, before: options.before });
  }

  /** A node by id in whichever project holds it, or null (ids are unique across projects). */
  findById(id: string): NodeInfo | null {
    return typeof id === 'string' && id !== '' ? this.index.nodeByIdAnywhere(id) : null;
  }

  /** Children of a folder by id (the root when null), folders first then by name. */
  listChildrenOf(projectId: string, parentId: string | null): NodeInfo[] {
    assertProjectId(projectId);
    const head = this.index.indexState(projectId)?.headCommit ?? '';
    const cached = this.children.get(projectId, parentId, head);
    if (cached) return cached;
    let nodes: NodeInfo[];
    if (parentId === null) {
      nodes = this.index.children(projectId, null, 'active');
    } else {
      const folder = this.getById(projectId, parentId);
      if (folder.type !== 'folder') throw new ValidationError(`${folder.path} is not a folder`, { id: parentId });
      nodes = this.index.children(projectId, folder.id, folder.state);
    }
    this.children.set(projectId, parentId, head, nodes);
    return nodes;
  }

  /** The node at `path` (active or in the trash), or null. The root has no node. */
  findByPath(projectId: string, path: string): NodeInfo | null {
    assertProjectId(projectId);
    return this.index.nodeByPath(projectId, normalizePath(path));
  }

  /** Like findByPath but NOT_FOUND when missing. */
  getByPath(projectId: string, path: string): NodeInfo {
    const n = this.findByPath(projectId, path);
    if (!n) throw new NotFoundError(`no node at ${path}`, { path });
    return n;
  }

  getById(projectId: string, id: string): NodeInfo {
    assertProjectId(projectId);
    const n = this.index.nodeById(projectId, id);
    if (!n) throw new NotFoundError(`no node ${id}`, { id });
    return n;
  }

  getNode(projectId: string, ref: NodeRef): NodeInfo {
    return 'id' in ref ? this.getById(projectId, ref.id) : this.getByPath(projectId, ref.path);
  }

  /**
   * Children of a folder (root when `path` is empty), folders first then by name. The root hides
   * `.trash`; listing `.trash` itself returns the top-level trash items.
   */
  listChildren(projectId: string, path = ''): NodeInfo[] {
    assertProjectId(projectId);
    const p = normalizePath(path);
    if (p === '') return this.index.children(projectId, null, 'active');
    if (p === '.trash') return this.index.children(projectId, null, 'trashed');
    const folder = this.getByPath(projectId, p);
    if (folder.type !== 'folder') throw new ValidationError(`${p} is not a folder`, { path: p });
    return this.index.children(projectId, folder.id, folder.state);
  }

  /** Nested tree under `path` (root by default); maxDepth -1 = unlimited, 0 = just the node. */
  tree(projectId: string, path = '', maxDepth = -1): TreeNode {
    assertProjectId(projectId);
    return this.index.tree(projectId, normalizePath(path), maxDepth);
  }

  /**
   * One page of the tree under `path` (see treePages.ts): at most `limit` nodes depth first, the
   * cursor to continue, reads spread over event-loop turns. `visibility` limits it to a scope.
   */
  async treePage(projectId: string, path: string, options: TreePageOptions): Promise<TreePage> {
    assertProjectId(projectId);
    if (!Number.isInteger(options.limit) || options.limit < 1) throw new ValidationError('limit must be a positive integer', { field: 'limit' });
    return treePage(this.index, projectId, normalizePath(path), options);
  }

  /** The node at `path`, or the project root (`''`) / the trash folder as a folder without id. */
  statPath(projectId: string, path: string): NodeInfo {
    assertProjectId(projectId);
    return rootNode(this.index, projectId, normalizePath(path));
  }

  /** Current content bytes of a node (NOT_FOUND for folders). */
  async readContent(projectId: string, ref: NodeRef): Promise<{ node: NodeInfo; bytes: Buffer }> {
    const node = this.getNode(projectId, ref);
    if (node.type === 'folder' || !node.contentHash) throw new NotFoundError(`${node.path} is a folder`, { path: node.path });
    return { node, bytes: await this.readBlob(projectId, node.contentHash) };
  }

  /** Current content decoded: parsed JSON, markdown text or bytes. */
  async readValue(projectId: string, ref: NodeRef): Promise<{ node: NodeInfo; value: unknown }> {
    const { node, bytes } = await this.readContent(projectId, ref);
    return { node, value: decodeContent(node.type, bytes) };
  }

  /** Versions newest first. Cost is independent of the project's history length. */
  listVersions(projectId: string, ref: NodeRef, options: VersionListOptions = {}): VersionList {
    const node = this.getNode(projectId, ref);
    const limit = Math.min(Math.max(Math.trunc(options.limit ?? 50), 1), 1000);
    return this.index.versions(node.id, node.version, limit, options.sinceVersion ?? 0);
  }

  getVersion(projectId: string, ref: NodeRef, version: number): VersionInfo {
    const node = this.getNode(projectId, ref);
    const v = this.index.version(node.id, version);
    if (!v) throw new NotFoundError(`version ${version} of ${node.path} does not exist`, { version });
    return v;
  }

  /** The node's version current at project version `projectVersion`; null when it did not exist yet. */
  versionAtProjectVersion(projectId: string, ref: NodeRef, projectVersion: number): VersionInfo | null {
    return this.index.versionAt(this.getNode(projectId, ref).id, projectVersion);
  }

  /** Bytes of one version (an index look-up plus a blob read). */
  async versionContent(projectId: string, ref: NodeRef, version: number): Promise<{ version: VersionInfo; bytes: Buffer }> {
    const v = this.getVersion(projectId, ref, version);
    if (!v.blobId) throw new NotFoundError(`version ${version} is a folder`, { version });
    return { version: v, bytes: await this.readBlob(projectId, v.blobId) };
  }

  /**
   * Stores exactly `size` bytes read from `source` as a blob of the project without holding them
   * in memory (a streamed upload); a `writeBlob` mutation then commits it. Resolves to its id.
   */
  async writeBlobStream(projectId: string, source: Readable, size: number): Promise<string> {
    assertProjectId(projectId);
    this.writers.assertWritable(projectId);
    if (!Number.isSafeInteger(size) || size < 0) throw new ValidationError('size must be a non-negative integer');
    const repo = this.repos.get(projectId);
    repo.ensure();
    return writeBlobStream(repo.gitdir, source, size, this.fsync);
  }

  /** A blob of the project for reading in byte ranges: streamed when loose, else read whole. */
  async openBlob(projectId: string, oid: string): Promise<BlobSource> {
    assertProjectId(projectId);
    const loose = openLooseBlob(this.repos.get(projectId).gitdir, oid);
    if (loose) return loose;
    const bytes = await this.readBlob(projectId, oid);
    return { size: bytes.length, stream: (start, end) => Readable.from([bytes.subarray(start, end + 1)]) };
  }

  listTrash(projectId: string): TrashItem[] {
    assertProjectId(projectId);
    return this.index.trash(projectId);
  }

  /** Every audit entry of the project newest first (pushes too), `before` an entry id for paging. */
  projectAuditLogs(projectId: string, options: { limit?: number; before?: number } = {}): AuditLogEntry[] {
    assertProjectId(projectId);
    const limit = Math.min(Math.max(Math.trunc(options.limit ?? 100), 1), 1000);
    return this.index.auditByProject(projectId, limit, options.before);
  }

  /** Audit entries newest first, by node id or by path (any node ever recorded at that path). */
  auditLogs(projectId: string, ref: NodeRef, options: { limit?: number } = {}): AuditLogEntry[] {
    assertProjectId(projectId);
    const limit = Math.min(Math.max(Math.trunc(options.limit ?? 100), 1), 1000);
    if ('id' in ref) return this.index.auditByNode(projectId, ref.id, limit);
    return this.index.auditByPath(projectId, normalizePath(ref.path), limit);
  }

  /** Figures for a dashboard. */
  stats(projectId: string): ProjectStats {
    assertProjectId(projectId);
    return this.index.stats(projectId);
  }

  /** The project's current commit number (0 before the first commit). */
  projectVersion(projectId: string): number {
    assertProjectId(projectId);
    return this.index.indexState(projectId)?.projectVersion ?? 0;
  }

  // ---------------------------------------------------------------- git reconciliation

  /**
   * Indexes the commits on `main` beyond the last indexed one (commits pushed by other git
   * clients). Commits without cns trailers are indexed by diffing trees with rename detection;
   * commits of a push registered with expectPush get that push's attribution, the others get
   * `options`: actor `actor` (default a `user` named after the commit author), created_at
   * `receivedAt` (default the commit time), author text the commit's when `keepCommitAuthor`.
   */
  async syncFromGit(projectId: string, options: SyncOptions = {}): Promise<SyncReport> {
    assertProjectId(projectId);
    if (options.actor !== undefined) assertActor(options.actor);
    const receivedAt = options.receivedAt === undefined ? undefined : isoSeconds(options.receivedAt);
    return this.writers.get(projectId).sync({ ...options, receivedAt });
  }

  /**
   * Registers a push the git remote accepted (its pre-receive check passed) before main moves:
   * whichever path indexes its commits first (the post-push syncFromGit, an API write that finds
   * main moved, the start-up reconciler) gives the commits up to `after` the pusher as actor,
   * `receivedAt` as created_at and the commit's author as author text, and records the push in
   * the audit log (action 'push', path '', details before/after/commits/ref) in the same
   * transaction. Call forgetPush once the push has ended (a push that did not land). The
   * registration is stored in SQLite before this returns, so it survives a crash of the service
   * and the start-up reconciler still attributes the push.
   */
  expectPush(projectId: string, push: PushInfo): void {
    assertProjectId(projectId);
    assertActor(push.actor);
    const oid = /^[0-9a-f]{40}$/;
    if (!oid.test(push.after) || (push.before !== null && !oid.test(push.before))) throw new ValidationError('push tips must be commit ids');
    if (!Number.isInteger(push.commits) || push.commits < 0) throw new ValidationError('commits must be a non-negative integer');
    this.pushes.expect(projectId, {
      before: push.before,
      after: push.after,
      commits: push.commits,
      actor: { type: push.actor.type, id: push.actor.id, author: push.actor.author },
      receivedAt: isoSeconds(push.receivedAt),
      keepCommitAuthor: push.keepCommitAuthor ?? true,
    });
  }

  /** Drops a registered push that was not indexed (it ended without moving main). */
  forgetPush(projectId: string, after: string): void {
    assertProjectId(projectId);
    this.pushes.forget(projectId, after);
  }

  /**
   * Start-up reconciler: syncFromGit for every repository in the data folder. Pushes registered
   * before a crash are read from the database, so commits that landed before the process died
   * still get the pusher's attribution and audit row. Afterwards registered pushes that never
   * landed (their `after` is not on main's indexed first-parent chain, or the project has no
   * repository) and are older than an hour are dropped, as are any whose commit is already
   * indexed (nothing is left for them to attribute).
   */
  async syncAllProjects(options: SyncOptions = {}): Promise<SyncReport[]> {
    const reports: SyncReport[] = [];
    const projects = this.listProjects();
    for (const id of projects) reports.push(await this.syncFromGit(id, options));
    this.dropStalePushes(new Set(projects));
    return reports;
  }

  /** Drops registered pushes that can no longer apply (see syncAllProjects); runs after every project is synced. */
  private dropStalePushes(projects: Set<string>, now = Date.now()): void {
    for (const p of this.pushes.all()) {
      const indexed = projects.has(p.projectId) && this.index.commitById(p.projectId, p.after) !== undefined;
      const old = !(now - Date.parse(p.registeredAt) <= STALE_PUSH_MS);
      if (!indexed && !old) continue;
      if (!indexed) this.logger?.warn({ projectId: p.projectId, after: p.after, registeredAt: p.registeredAt }, 'dropping a registered push that never landed');
      this.pushes.forget(p.projectId, p.after);
    }
  }

  /** Rebuilds the project's index from git alone and reports differences to the previous index. */
  async reindexProject(projectId: string): Promise<ReindexReport> {
    assertProjectId(projectId);
    const report = await this.writers.get(projectId).reindex();
    // A rebuilt index may differ at the same head commit.
    this.children.clear();
    return report;
  }

  /**
   * One commit planned inside the project's serialized writer against the current tip of main,
   * with `parents` after the tip (the git remote merges a push to refs/for/main this way, so no
   * API write can interleave and the merge cannot starve). `plan(tip)` returns the changes
   * (writes name a blob already in the repository, or carry bytes) or null for nothing to do;
   * it is planned again if main moves before the commit is written.
   */
  async commitPlanned(projectId: string, actor: Actor, plan: (tip: string | null) => Promise<PlannedCommit | null>): Promise<CommitResult | null> {
    assertProjectId(projectId);
    assertActor(actor);
    return this.writers.get(projectId).submitPlanned(async (tip) => {
      const p = await plan(tip);
      if (!p || p.changes.length === 0) return null;
      const mutations: PreparedMutation[] = p.changes.map((c, i) => {
        if (c.op !== 'write') return this.prepare(projectId, c as Mutation, i);
        const path = normalizeTargetPath(c.path);
        assertWritableType(c.type);
        const blobId = c.bytes ? hashObject('blob', c.bytes) : c.blobId;
        const size = c.bytes ? c.bytes.length : (c.size ?? -1);
        if (!blobId || !Number.isSafeInteger(size) || size < 0) throw new ValidationError('a planned write needs bytes or a blob id and size', { path });
        if (size > this.maxContentBytes) throw new PayloadTooLargeError(`content is larger than ${this.maxContentBytes} bytes`, { path, limit: this.maxContentBytes });
        return { op: 'write' as const, path, type: c.type, bytes: c.bytes, blobId, size };
      });
      return { actor, message: p.message, mutations, extraParents: p.parents };
    });
  }

  /**
   * Removes `path` from the project's whole history (see purge.ts): what was ever at the path,
   * and wherever those nodes went, is gone from every commit and from the repository's objects;
   * every other node keeps its id and versions (commit ids change). Clones must be made again:
   * pushes built on the old history are refused. Recorded in the audit log (action 'purge').
   */
  async purge(projectId: string, actor: Actor, path: string): Promise<PurgeReport> {
    assertProjectId(projectId);
    assertActor(actor);
    const target = normalizePath(path);
    if (target === '' || target === '.trash') throw new ValidationError('cannot purge this path', { path });
    const { result } = await this.writers.get(projectId).rewrite(async (repo, gitBinary) => {
      const r = await purgeHistory(repo, gitBinary, target);
      if (r.rewritten === 0) throw new NotFoundError(`nothing was ever at ${target}`, { path: target });
      this.db.transaction(() => {
        remapPushAudit(this.db, projectId, r.renamed);
        this.pushes.forgetProject(projectId);
        const details = { path: target, before: r.before, after: r.after, commits_rewritten: r.rewritten, nodes: r.nodes };
        this.index.insertAudit(projectId, '', '', 'purge', actor, details, new Date().toISOString().replace(/\.\d{3}Z$/, '.000Z'));
      }).immediate();
      return r;
    });
    this.blobs.clear();
    this.children.clear();
    return { path: target, before: result.before, after: result.after, commitsRewritten: result.rewritten, nodes: result.nodes };
  }

  /** Repacks the repository now (system git), under the project's write lock. */
  async repack(projectId: string): Promise<boolean> {
    assertProjectId(projectId);
    return this.writers.get(projectId).repack();
  }

  /** Creates the project's empty bare repository (branch main) so it can be cloned before its first write. */
  async createProject(projectId: string): Promise<void> {
    assertProjectId(projectId);
    this.writers.revive(projectId);
    this.repos.get(projectId).ensure();
  }

  /**
   * Deletes a project's content for good: waits for its queued writes, then removes the
   * repository and every index row (audit log included). Other projects are not affected.
   */
  async deleteProject(projectId: string): Promise<void> {
    assertProjectId(projectId);
    let writer;
    try {
      writer = this.writers.get(projectId);
    } catch (e) {
      if (e instanceof NotFoundError) return; // deleted already
      throw e;
    }
    await writer.destroy();
    this.children.clear();
    this.pushes.forgetProject(projectId);
    await this.sweepDeleted();
  }

  /** Removes leftovers of deletions whose folder could not be removed at the time (see ProjectWriter.destroy). */
  private async sweepDeleted(): Promise<void> {
    let names: string[];
    try {
      names = readdirSync(this.dataDir);
    } catch {
      return;
    }
    for (const n of names) {
      if (!n.startsWith('.deleted-')) continue;
      await rm(join(this.dataDir, n), { recursive: true, force: true, maxRetries: 2 }).catch(() => {});
    }
  }

  /** Project ids that have a repository in the data folder. */
  listProjects(): string[] {
    let names: string[];
    try {
      names = readdirSync(this.dataDir);
    } catch {
      return [];
    }
    return names.filter((n) => n.endsWith('.git') && !n.startsWith('.')).map((n) => n.slice(0, -4)).sort();
  }

  /** Waits for queued writes to finish; the store must not be used afterwards. */
  async close(): Promise<void> {
    await this.writers.close();
    this.blobs.clear();
  }

  // ---------------------------------------------------------------- internals

  private prepare(projectId: string, m: Mutation, index: number | undefined): PreparedMutation {
    const at = (e: unknown): never => {
      if (index !== undefined && e instanceof Error && 'details' in e) {
        (e as { details: Record<string, unknown> }).details.index = index;
      }
      throw e;
    };
    try {
      if (!m || typeof m !== 'object') throw new ValidationError('invalid mutation');
      switch (m.op) {
        case 'write': {
          const path = normalizeTargetPath(m.path);
          assertWritableType(m.type);
          const bytes = encodeContent(m.type, m.content);
          if (bytes.length > this.maxContentBytes) {
            throw new PayloadTooLargeError(`content is larger than ${this.maxContentBytes} bytes`, {
              path,
              limit: this.maxContentBytes,
            });
          }
          if (m.baseVersion !== undefined && (!Number.isInteger(m.baseVersion) || m.baseVersion < 0)) {
            throw new ValidationError('base_version must be a non-negative integer');
          }
          // The id is computed here (outside the project's lock); the blob is stored with its commit.
          return { op: 'write', path, type: m.type, bytes, blobId: hashObject('blob', bytes), size: bytes.length, baseVersion: m.baseVersion };
        }
        case 'writeBlob': {
          const path = normalizeTargetPath(m.path);
          if (typeof m.blobId !== 'string' || !looseObjectExists(this.repos.get(projectId).gitdir, m.blobId)) {
            throw new ValidationError('the blob was not stored by writeBlobStream', { blob_id: m.blobId });
          }
          if (m.id !== undefined && (typeof m.id !== 'string' || !/^[A-Za-z0-9_-]{8,64}$/.test(m.id))) throw new ValidationError('invalid node id', { id: m.id });
          return { op: 'write', path, type: 'file', blobId: m.blobId, size: m.size, baseVersion: m.baseVersion, id: m.id };
        }
        case 'mkdir':
          return { op: 'mkdir', path: normalizeTargetPath(m.path) };
        case 'move':
          return { op: 'move', from: normalizeTargetPath(m.from, 'old_path'), to: normalizeTargetPath(m.to, 'new_path') };
        case 'remove': {
          const path = normalizePath(m.path);
          if (path === '' || path === '.trash') throw new ValidationError('cannot remove this path', { path });
          return { op: 'remove', path, permanent: m.permanent === true };
        }
        case 'restore': {
          const trashPath = normalizePath(m.trashPath, 'trash_path');
          return { op: 'restore', trashPath, to: normalizeTargetPath(m.to, 'original_path') };
        }
        case 'revert':
          assertVersion(m.version);
          return { op: 'revert', node: normalizeRef(m.node), version: m.version };
        case 'rollbackFolder':
          if (typeof m.folderId !== 'string' || m.folderId === '') throw new ValidationError('folder id required');
          assertVersion(m.targetVersion, 'target_version');
          return { op: 'rollbackFolder', folderId: m.folderId, targetVersion: m.targetVersion };
        case 'rollbackProject':
          assertVersion(m.targetVersion, 'target_version');
          return { op: 'rollbackProject', targetVersion: m.targetVersion };
        default:
          throw new ValidationError('unknown mutation', { op: (m as { op?: unknown }).op });
      }
    } catch (e) {
      return at(e);
    }
  }

  private nodeResult(projectId: string, r: CommitResult, path: string): WriteResult {
    const node = r.nodes.find((n) => n.path === path) ?? this.getByPath(projectId, path);
    return { node, changed: r.changed, commitId: r.commitId, projectVersion: r.projectVersion };
  }

  private async readBlob(projectId: string, oid: string): Promise<Buffer> {
    const cached = this.blobs.get(oid);
    if (cached) return cached;
    const bytes = await this.repos.get(projectId).readBlob(oid);
    this.blobs.set(oid, bytes);
    return bytes;
  }
}

function assertActor(actor: Actor): void {
  if (!actor || !['user', 'agent', 'sync'].includes(actor.type) || typeof actor.id !== 'string' || !actor.id) {
    throw new ValidationError('invalid actor');
  }
  if (typeof actor.author !== 'string' || !actor.author) throw new ValidationError('actor needs an author');
}

/** An ISO 8601 time at second precision (what git records, and every other time of the index). */
function isoSeconds(at: string): string {
  const ms = typeof at === 'string' ? Date.parse(at) : NaN;
  if (Number.isNaN(ms)) throw new ValidationError('received_at must be an ISO 8601 time', { received_at: at });
  return new Date(Math.floor(ms / 1000) * 1000).toISOString();
}

function assertVersion(v: unknown, field = 'version'): asserts v is number {
  if (!Number.isInteger(v) || (v as number) < 1) throw new ValidationError(`${field} must be a positive integer`, { [field]: v });
}

function normalizeRef(ref: NodeRef): NodeRef {
  if (ref && typeof ref === 'object' && 'id' in ref && typeof ref.id === 'string') return { id: ref.id };
  if (ref && typeof ref === 'object' && 'path' in ref) return { path: normalizePath(ref.path) };
  throw new ValidationError('node reference needs a path or an id');
}

