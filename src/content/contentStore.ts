import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { ContentReads, type ContentStoreOptions } from './contentReads.ts';
import { assertWritableType } from './encoding.ts';
import { ConflictError, NotFoundError, PayloadTooLargeError, ValidationError } from '../errors/contentErrors.ts';
import { checkTrailers } from './trailers.ts';
import { assertName, checkPlan, expectAbsent, expectInPlace, planMutations, planNodes, renamedPath, type NewNode, type NodePlan, type SeenNode } from './nodeOperations.ts';
import { assertProjectId, isSameOrInside, joinPath, normalizePath, normalizeTargetPath } from './paths.ts';
import type { PreparedMutation } from './mutations.ts';
import { ProjectWriters } from './writer/projectWriter.ts';
import { LARGE_COMMIT } from './largeCommit.ts';
import { TimeSlice } from './timeSlice.ts';
import { PushExpectations, STALE_PUSH_MS } from './pushExpectations.ts';
import { hashObject } from './git/objects.ts';
import type { Repo } from './git/repo.ts';
import { KeyedLock } from '../util/keyedLock.ts';
import { writeBlobStream } from './git/blobStream.ts';
import { purgeHistory } from './purge.ts';
import { projectIds, sweepDeleted } from './projectFolders.ts';
import { assertActor, isoSeconds, prepareMutation } from './prepare.ts';
import type {
  Actor,
  BulkFile,
  CommitOptions,
  CommitResult,
  CommittedTip,
  Mutation,
  NodeInfo,
  NodeRef,
  ReindexReport,
  PushInfo,
  ReconcileOptions,
  ReconcileReport,
  WritableNodeType,
  WriteResult,
} from './types.ts';

export type * from './types.ts';
export type { FolderSnapshot, SnapshotPage } from './folderSnapshots.ts';
export type { TreePage, TreePageOptions } from './treePages.ts';
export { ContentError, NotFoundError, ConflictError, ValidationError, PayloadTooLargeError } from '../errors/contentErrors.ts';
export { decodeContent } from './encoding.ts';
export { PLACEHOLDER, TRASH_DIR } from './paths.ts';
export { newNodeId } from './mutations.ts';
export type { BlobSource } from './git/blobReader.ts';
export type { ContentStoreOptions, NodeBlame, VersionListOptions } from './contentReads.ts';
export type { BlameCommit } from './history/blame.ts';
export type { NewNode, NodePlan } from './nodeOperations.ts';

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

/**
 * What happened to a project besides its commits: deleted, or its index rebuilt or history
 * rewritten (reindex, purge) possibly at the same head. Processes sharing the data folder drop
 * what they hold of it (dropCached); the composition root carries it box-wide on the change bus.
 */
export interface ProjectChange {
  kind: 'project-deleted' | 'project-reset';
  project: string;
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
export class ContentStore extends ContentReads {
  private readonly writers: ProjectWriters;
  private readonly pushes: PushExpectations;
  /** Replication into this copy (follow): one step at a time per project, and the reconcile each started. */
  private readonly following = new KeyedLock();
  private readonly followedIndexing = new Map<string, { again: boolean }>();
  private readonly commitListeners = new Set<(tip: CommittedTip) => void>();
  private readonly projectListeners = new Set<(change: ProjectChange) => void>();
  /** The largest content a node may hold (surfaces that read files from elsewhere check it first). */
  readonly maxContentBytes: number;
  private readonly fsync: boolean;
  private readonly logger: Logger | undefined;
  private readonly db: Db;

  constructor(options: ContentStoreOptions) {
    super(options);
    this.maxContentBytes = options.maxContentBytes ?? 10 * 1024 * 1024;
    this.fsync = options.fsync ?? false;
    this.logger = options.logger;
    this.db = options.db;
    this.pushes = new PushExpectations(options.db);
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
      fence: options.fence,
      soleWriterSince: options.soleWriterSince,
      replicate: options.replicate,
      mayWrite: options.mayWrite,
      onCommitted: (tip) => {
        for (const listener of this.commitListeners) listener(tip);
      },
    });
  }

  /**
   * Calls `listener(tip)` after every batch of commits is acknowledged and after commits pushed
   * with git are indexed; what changed is in the index (audit entries and project_commits by
   * commit number). The composition root publishes it on the change bus (src/events/); nothing
   * else listens here. Returns the unsubscribe function.
   */
  onCommitted(listener: (tip: CommittedTip) => void): () => void {
    this.commitListeners.add(listener);
    return () => this.commitListeners.delete(listener);
  }

  /**
   * Calls `listener(change)` after a project was deleted, reindexed or purged here, once what
   * this process holds of it is already dropped. Returns the unsubscribe function.
   */
  onProjectChanged(listener: (change: ProjectChange) => void): () => void {
    this.projectListeners.add(listener);
    return () => this.projectListeners.delete(listener);
  }

  /**
   * Drops what this process holds of a project another process (or this one: doing it twice is
   * harmless) deleted, reindexed or purged. A project never seen here costs a look-up; other
   * kinds are ignored. Deleted: its writer is refused from now on (a process that is not the
   * owner must never recreate the repository) and reads no longer trust a repository that is
   * gone. Reset: folder listings read at the same head, pack caches and blobs (purged ones must
   * not be served) go.
   */
  dropCached(change: { kind: string; project: string }): void {
    const { kind, project } = change;
    if (kind !== 'project-deleted' && kind !== 'project-reset') return;
    assertProjectId(project);
    this.children.forgetProject(project);
    if (kind === 'project-deleted') {
      this.writers.markGone(project);
      this.repos.cached(project)?.forgetDisk();
      this.repos.forget(project);
    } else {
      this.repos.cached(project)?.dropCache();
      // Keyed by blob id alone: which blobs a purge removed is not known here.
      this.blobs.clear();
    }
  }

  private projectChanged(change: ProjectChange): void {
    this.dropCached(change);
    for (const listener of this.projectListeners) {
      try {
        listener(change);
      } catch (err) {
        // The change is done; telling others about it must not fail it.
        this.logger?.warn({ err, project: change.project, kind: change.kind }, 'a project change listener failed');
      }
    }
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
    if (options.trailers) checkTrailers(options.trailers);
    const call = { actor, message: options.message, mutations: prepared, guard: options.guard, trailers: options.trailers };
    const writer = this.writers.get(projectId);
    const check = options.check;
    const result = check
      ? ((await writer.submitPlanned(async () => {
          await check();
          return call;
        })) as CommitResult)
      : await writer.submit(call);
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

  // ------------------------------------------- node operations (rules checked in the write section)

  /**
   * New content and/or a new name of one node as ONE commit and one version. The node is taken
   * as found now; if a concurrent request trashes, moves or retypes it before this commit is
   * built, the call fails with a conflict (it never writes at a path the node has left).
   */
  async updateNode(
    projectId: string,
    actor: Actor,
    nodeId: string,
    update: { content?: unknown; name?: string; baseVersion?: number; message?: string },
  ): Promise<WriteResult> {
    const node = this.getById(projectId, nodeId);
    if (node.state !== 'active') throw new ConflictError('The node is in the trash; restore it first.', { id: node.id });
    const mutations: Mutation[] = [];
    if (update.content !== undefined) {
      if (node.type === 'folder') throw new ValidationError('Folders have no content.', { field: 'content' });
      const write: Mutation = { op: 'write', path: node.path, type: node.type, content: update.content };
      if (update.baseVersion !== undefined) write.baseVersion = update.baseVersion;
      mutations.push(write);
    }
    let path = node.path;
    if (update.name !== undefined && update.name !== node.name) {
      assertName(update.name);
      path = renamedPath(node.path, update.name);
      mutations.push({ op: 'move', from: node.path, to: path });
    }
    if (mutations.length === 0) return { node, changed: false, commitId: null, projectVersion: null };
    // Content and a new name are one change of one node, recorded as an update (with its old path).
    const described = update.content !== undefined && path !== node.path ? `update ${path} (renamed from ${node.path})` : undefined;
    const r = await this.commit(projectId, actor, mutations, {
      message: update.message ?? described,
      guard: () => expectInPlace(this.index, projectId, node),
    });
    return { node: this.getById(projectId, node.id), changed: r.changed, commitId: r.commitId, projectVersion: r.projectVersion };
  }

  /** Creates a folder that must not exist yet (conflict when anything is at the path when the commit is built). */
  async createFolder(projectId: string, actor: Actor, path: string, options: CommitOptions = {}): Promise<WriteResult> {
    const target = normalizeTargetPath(path);
    return this.mkdir(projectId, actor, target, {
      ...options,
      guard: () => {
        expectAbsent(this.index, projectId, target);
        options.guard?.();
      },
    });
  }

  /**
   * Moves a node into the folder `parentId` (null: the root), keeping its name. A folder cannot
   * go into itself; if the node or the folder moved before the commit is built, a conflict.
   */
  async moveNode(projectId: string, actor: Actor, nodeId: string, parentId: string | null, options: CommitOptions = {}): Promise<WriteResult> {
    const node = this.getById(projectId, nodeId);
    if (node.state !== 'active') throw new ConflictError('The node is in the trash; restore it first.', { id: node.id });
    const parent = parentId === null ? null : this.activeFolder(projectId, parentId, 'new_parent_id');
    if (parent && isSameOrInside(parent.path, node.path)) {
      throw new ValidationError('A folder cannot be moved into itself or one of its descendants.', { field: 'new_parent_id' });
    }
    const to = joinPath(parent?.path ?? '', node.name);
    return this.move(projectId, actor, node.path, to, {
      ...options,
      guard: () => {
        expectInPlace(this.index, projectId, node);
        if (parent) expectInPlace(this.index, projectId, parent, 'target folder');
        options.guard?.();
      },
    });
  }

  /**
   * Resolves a nested create (items naming their folder by `parentTempId`, `parentId` or the
   * default `parentId`) to paths, without writing: callers authorize the paths, then createNodes.
   */
  planNodes(projectId: string, parentId: string | null, items: NewNode[]): NodePlan {
    assertProjectId(projectId);
    return planNodes(projectId, parentId, items, (id, field) => this.activeFolder(projectId, id, field));
  }

  /**
   * Creates every node of a plan in ONE commit, parents before children: all or nothing. Folders
   * and files must not exist yet and the parent folders must still be where the plan found them
   * when the commit is built (conflict otherwise). Answers the nodes in the order of the items.
   */
  async createNodes(projectId: string, actor: Actor, plan: NodePlan, options: CommitOptions = {}): Promise<{ result: CommitResult; nodes: NodeInfo[] }> {
    if (plan.projectId !== projectId) throw new ValidationError('the plan is for another project');
    const result = await this.commit(projectId, actor, planMutations(plan), {
      message: options.message ?? `create ${plan.items.length} nodes`,
      guard: () => {
        checkPlan(this.index, plan);
        options.guard?.();
      },
    }).catch((e: unknown) => {
      // Mutations go parents first: name the item the caller sent, not the mutation.
      const details = (e as { details?: Record<string, unknown> }).details;
      if (details && typeof details.index === 'number') details.index = plan.order[details.index] ?? details.index;
      throw e;
    });
    const byPath = new Map(result.nodes.map((n) => [n.path, n]));
    return { result, nodes: plan.items.map((n) => byPath.get(n.path) ?? this.getByPath(projectId, n.path)) };
  }

  /**
   * Creates those of `files` that do not exist (idempotent: existing files are never
   * overwritten). If one appears between the look-up and the commit, the call fails with a
   * conflict rather than overwrite it.
   */
  async seed(projectId: string, actor: Actor, files: BulkFile[], options: CommitOptions = {}): Promise<CommitResult> {
    assertProjectId(projectId);
    const missing = files.filter((f) => this.index.rowByPath(projectId, normalizeTargetPath(f.path)) === undefined);
    if (missing.length === 0) return { changed: false, commitId: null, projectVersion: null, nodes: [] };
    return this.commit(projectId, actor, missing.map((f) => ({ op: 'write', path: f.path, type: f.type, content: f.content, baseVersion: 0 })), options);
  }

  /** An active folder of the project by id (NOT_FOUND / VALIDATION_ERROR naming `field`). */
  private activeFolder(projectId: string, id: string, field: string): SeenNode {
    const row = this.index.rowById(id);
    if (!row || row.project_id !== projectId) throw new NotFoundError('Parent folder not found.', { id, field });
    if (row.type !== 'folder' || row.state !== 'active') throw new ValidationError(`${field} is not an active folder`, { field, id });
    return { id: row.id, path: row.path, type: row.type };
  }

  /** A new version of a json/markdown/file node with the content (and type) of `version`. */
  async rollbackNode(projectId: string, actor: Actor, node: NodeRef, version: number, options: CommitOptions = {}): Promise<WriteResult> {
    const r = await this.commit(projectId, actor, [{ op: 'rollbackNode', node, version }], options);
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

  // ---------------------------------------------------------------- git reconciliation

  /**
   * Indexes the commits on `main` beyond the last indexed one (commits pushed by other git
   * clients). Commits without cns trailers are indexed by diffing trees with rename detection;
   * commits of a push registered with expectPush get that push's attribution, the others get
   * `options`: actor `actor` (default a `user` named after the commit author), created_at
   * `receivedAt` (default the commit time), and the commit's own author beside the actor
   * (`commitAuthor`) when `keepCommitAuthor` and it differs.
   */
  async reconcile(projectId: string, options: ReconcileOptions = {}): Promise<ReconcileReport> {
    assertProjectId(projectId);
    if (options.actor !== undefined) assertActor(options.actor);
    const receivedAt = options.receivedAt === undefined ? undefined : isoSeconds(options.receivedAt);
    return this.writers.get(projectId).reconcile({ ...options, receivedAt });
  }

  /**
   * Registers a push the git remote accepted (its pre-receive check passed) before main moves:
   * whichever path indexes its commits first (the post-push reconcile, an API write that finds
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
   * Start-up reconciler: reconcile for every repository in the data folder. Pushes registered
   * before a crash are read from the database, so commits that landed before the process died
   * still get the pusher's attribution and audit row. Afterwards registered pushes that never
   * landed (their `after` is not on main's indexed first-parent chain, or the project has no
   * repository) and are older than an hour are dropped, as are any whose commit is already
   * indexed (nothing is left for them to attribute).
   */
  async reconcileAll(options: ReconcileOptions = {}): Promise<ReconcileReport[]> {
    const reports: ReconcileReport[] = [];
    const projects = this.listProjects();
    for (const id of projects) reports.push(await this.reconcile(id, options));
    this.dropStalePushes(new Set(projects));
    return reports;
  }

  /** Drops registered pushes that can no longer apply (see reconcileAll); runs after every project is reconciled. */
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
    this.projectChanged({ kind: 'project-reset', project: projectId });
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
        this.index.remapPushAudit(projectId, r.renamed);
        this.pushes.forgetProject(projectId);
        const details = { path: target, before: r.before, after: r.after, commits_rewritten: r.rewritten, nodes: r.nodes };
        this.index.insertAudit(projectId, '', '', 'purge', actor, details, new Date().toISOString().replace(/\.\d{3}Z$/, '.000Z'));
      }).immediate();
      return r;
    });
    this.projectChanged({ kind: 'project-reset', project: projectId });
    return { path: target, before: result.before, after: result.after, commitsRewritten: result.rewritten, nodes: result.nodes };
  }

  /** Repacks the repository now (system git), under the project's write lock. */
  async repack(projectId: string): Promise<boolean> {
    assertProjectId(projectId);
    return this.writers.get(projectId).repack();
  }

  /**
   * A cluster replica's copy of the project moved by its primary (src/cluster/replication/):
   * `work` gets the repository, one at a time per project (shipments, catch-ups and seals never
   * interleave), and answers as soon as git has the step; the index then follows git as after a
   * push, in one reconcile for however many steps arrived meanwhile, so the primary's write waits
   * for no replica's index. The only way replication touches a repository.
   */
  follow<T>(projectId: string, work: (repo: Repo, gitBinary: string | null) => Promise<T>): Promise<T> {
    assertProjectId(projectId);
    // A project deleted while this process runs stays deleted: a late shipment does not bring it back.
    this.writers.assertWritable(projectId);
    return this.following.run(projectId, async () => {
      const result = await work(this.repos.get(projectId), this.writers.usableGit());
      this.indexFollowed(projectId);
      return result;
    });
  }

  private indexFollowed(projectId: string): void {
    const running = this.followedIndexing.get(projectId);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.followedIndexing.set(projectId, state);
    void (async () => {
      try {
        do {
          state.again = false;
          await this.writers.get(projectId).reconcile({ followed: true });
        } while (state.again);
      } catch (err) {
        this.logger?.warn({ err, projectId }, 'a replica could not index what it received');
      } finally {
        this.followedIndexing.delete(projectId);
      }
    })();
  }

  /** A cluster's planned switchover: `work` runs with the project's writes held (ProjectWriter.hold). */
  holdWrites<T>(projectId: string, work: (repo: Repo) => Promise<T>): Promise<T> {
    assertProjectId(projectId);
    return this.writers.get(projectId).hold(work);
  }

  /** The project's repository here, to read from (a cluster's primary ships it to a new copy). */
  repository(projectId: string): Repo {
    assertProjectId(projectId);
    return this.repos.get(projectId);
  }

  /**
   * Removes this node's copy of a project that lives on elsewhere (a cluster moved the copy away):
   * like deleteProject here, but no other process is told. The copy may come back later through
   * createProject (an empty repository a shipment or a fetch fills).
   */
  async dropCopy(projectId: string): Promise<void> {
    assertProjectId(projectId);
    // A project deleted on its primary is marked gone here already (the bus's project-deleted): its repository still goes.
    this.writers.revive(projectId);
    await this.writers.get(projectId).destroy();
    this.pushes.forgetProject(projectId);
    this.children.forgetProject(projectId);
    await sweepDeleted(this.dataDir);
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
    this.pushes.forgetProject(projectId);
    this.projectChanged({ kind: 'project-deleted', project: projectId });
    await sweepDeleted(this.dataDir);
  }

  /** Project ids that have a repository in the data folder. */
  listProjects(): string[] {
    return projectIds(this.dataDir);
  }

  /** Waits for queued writes to finish; the store must not be used afterwards. */
  async close(): Promise<void> {
    await this.writers.close();
    this.blobs.clear();
  }

  // ---------------------------------------------------------------- internals

  private prepare(projectId: string, m: Mutation, index: number | undefined): PreparedMutation {
    return prepareMutation(m, index, { maxContentBytes: this.maxContentBytes, gitdir: () => this.repos.get(projectId).gitdir });
  }

  private nodeResult(projectId: string, r: CommitResult, path: string): WriteResult {
    const node = r.nodes.find((n) => n.path === path) ?? this.getByPath(projectId, path);
    return { node, changed: r.changed, commitId: r.commitId, projectVersion: r.projectVersion };
  }
}
