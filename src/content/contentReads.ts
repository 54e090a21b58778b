import { Readable } from 'node:stream';
import type { WriterDeps } from './writer/projectWriter.ts';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { clampLimit } from '../util/limits.ts';
import { BlobCache } from './blobCache.ts';
import { ChildrenCache } from './childrenCache.ts';
import { decodeContent } from './encoding.ts';
import { NotFoundError, ValidationError } from '../errors/contentErrors.ts';
import { trailerValue } from './trailers.ts';
import { FolderSnapshots, type SnapshotPage } from './folderSnapshots.ts';
import { Blamer, type BlameCommit } from './history/blame.ts';
import { BlameWarmer } from './history/blameWarmer.ts';
import { jsonKeyLines } from './history/jsonKeyLines.ts';
import { openLooseBlob, type BlobSource } from './git/blobReader.ts';
import { archiveTarStream, archiveZipStream } from './git/archiveStream.ts';
import { exportTree, type ExportedEntry, type Owner } from './git/exportTree.ts';
import { RepoRegistry } from './git/repo.ts';
import { ChangeIndex, IndexStore } from './indexStore.ts';
import { TRASH_DIR, assertProjectId, isTrashPath, normalizePath } from './paths.ts';
import { parseMessage, type NodeChange } from './trailers.ts';
import { rootNode, treePage, type TreePage, type TreePageOptions } from './treePages.ts';
import type {
  AuditLogEntry,
  ChangeEntry,
  CommitInfo,
  NodeInfo,
  NodeRef,
  ProjectStats,
  ScopeFigures,
  TrashItem,
  TreeNode,
  VersionInfo,
  VersionList,
} from './types.ts';

export interface ContentStoreOptions {
  /** Folder holding `<projectId>.git` bare repositories (the SQLite file lives there too, owned elsewhere). */
  dataDir: string;
  /** Opened with openDatabase(); migration 002 must have run. */
  db: Db;
  /**
   * Several workers (src/cluster/): throws unless this process holds the project's lease; run
   * inside every write transaction, so an owner that lost its lease cannot write. Absent: one
   * process owns everything.
   */
  fence?: (projectId: string) => void;
  /** Since when this process is the project's only writer (WriterDeps.soleWriterSince). */
  soleWriterSince?: WriterDeps['soleWriterSince'];
  /** A cluster node (src/cluster/replication/): a write is acknowledged once a quorum of the project's copies holds it (WriterDeps.replicate). */
  replicate?: WriterDeps['replicate'];
  /** A cluster node: refuses writes of a project another node writes (WriterDeps.mayWrite). */
  mayWrite?: WriterDeps['mayWrite'];
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
  /** Keep the blame of every this many versions of a text node (history/blame.ts); 0 never. Default 100. */
  blameCheckpointEvery?: number;
}

export interface VersionListOptions {
  /** Default 50, at most 1000. */
  limit?: number;
  /** Only versions with a greater number. */
  sinceVersion?: number;
}

/**
 * The read side of the content store (ContentStore extends it): index look-ups, content and
 * blob reads, version lists, audit, the change log. Synchronous except what returns bytes;
 * nothing here takes a project's write lock.
 */
/** Most key paths a JSON blame lists (`keys_truncated` says when there were more). */
const MAX_BLAMED_KEYS = 10_000;

/** One version of a node with the commit that last changed each of its lines. */
export interface NodeBlame {
  node: NodeInfo;
  version: VersionInfo;
  bytes: Buffer;
  /** Entry i: the commit of line i + 1. */
  origins: string[];
  commits: Map<string, BlameCommit>;
  /** JSON: each leaf's pointer and the commit of its line; null for other types or JSON the store did not write as such. */
  keys: { pointer: string; commitId: string }[] | null;
  keysTruncated: boolean;
}

export class ContentReads {
  readonly dataDir: string;
  protected readonly index: IndexStore;
  protected readonly changeIndex: ChangeIndex;
  protected readonly repos: RepoRegistry;
  protected readonly blobs: BlobCache;
  protected readonly snapshots: FolderSnapshots;
  /** Folder listings by id (the hot read of the id surface), valid while the project's head stays. */
  protected readonly children = new ChildrenCache(100_000);
  /** The git program for bulk reads (exportTree); null reads objects one by one. */
  private readonly gitProgram: string | null;
  private readonly blamer: Blamer;
  private readonly blameWarmer: BlameWarmer;

  constructor(options: ContentStoreOptions) {
    this.dataDir = options.dataDir;
    this.index = new IndexStore(options.db);
    this.changeIndex = new ChangeIndex(options.db);
    this.snapshots = new FolderSnapshots(this.index);
    this.repos = new RepoRegistry(options.dataDir, {
      fsync: options.fsync ?? false,
      maxCached: options.maxCachedProjects ?? 64,
      logger: options.logger,
    });
    this.blobs = new BlobCache(options.blobCacheBytes ?? 32 * 1024 * 1024);
    this.gitProgram = options.gitBinary === undefined ? 'git' : options.gitBinary;
    this.blamer = new Blamer({
      index: this.index,
      git: this.gitProgram,
      gitdir: (projectId) => this.repos.get(projectId).gitdir,
      readBlob: (projectId, oid) => this.readBlob(projectId, oid),
      checkpointEvery: options.blameCheckpointEvery ?? 100,
    });
    this.blameWarmer = new BlameWarmer({
      changesBetween: (projectId, after, upTo) => this.changesBetween(projectId, after, upTo),
      blame: (projectId, nodeId, version) => this.blame(projectId, { id: nodeId }, version),
      every: options.blameCheckpointEvery ?? 100,
      logger: options.logger,
    });
  }

  /** The indexed head of `main`: its commit and project version; null before the first commit. */
  head(projectId: string): { commitId: string; projectVersion: number } | null {
    assertProjectId(projectId);
    const state = this.index.indexState(projectId);
    return state?.headCommit ? { commitId: state.headCommit, projectVersion: state.projectVersion } : null;
  }

  /**
   * The latest commit of `main` made at `sinceMs` or after whose trailer block has `line` (a
   * line its writer gave in CommitOptions.trailers), with the node changes it recorded; null when
   * none. Walks back from the head along first parents, and stops at the first commit older than
   * `sinceMs` (less a minute, for clocks of other processes): a caller that crashed between its
   * commit and its own record looks here before doing the work again.
   */
  async findTrailer(projectId: string, line: string, sinceMs: number): Promise<{ commitId: string; projectVersion: number | null; changes: NodeChange[] } | null> {
    const head = this.head(projectId);
    if (!head) return null;
    const repo = this.repos.get(projectId);
    const floor = Math.floor((sinceMs - 60_000) / 1000);
    for (let id: string | undefined = head.commitId; id; ) {
      const commit = await repo.readCommit(id);
      if (commit.time < floor) return null;
      const parsed = parseMessage(commit.message);
      if (parsed?.extra.includes(line)) return { commitId: id, projectVersion: this.index.commitById(projectId, id)?.project_version ?? null, changes: parsed.changes };
      id = commit.parents[0];
    }
    return null;
  }

  /** The lines a writer added to a commit's trailer block (CommitOptions.trailers); none for a commit without them. */
  async commitTrailers(projectId: string, commitId: string): Promise<string[]> {
    assertProjectId(projectId);
    const commit = await this.repos.get(projectId).readCommit(commitId);
    return parseMessage(commit.message)?.extra ?? [];
  }

  /**
   * Writes the tree of `commitId` at `path` ('' = the root) into the existing folder `destDir`:
   * files with their stored bytes, folders (empty ones too) without their `.cnskeep`, and at the
   * root without `.trash`; returns the entries written. Spawned and streamed (git/exportTree.ts),
   * so the event loop stays free. `owner` (root only): the uid/gid the written entries get.
   * NOT_FOUND when the commit or the folder is not there.
   */
  async exportTree(projectId: string, commitId: string, path: string, destDir: string, options: { owner?: Owner } = {}): Promise<ExportedEntry[]> {
    assertProjectId(projectId);
    if (typeof commitId !== 'string' || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commitId)) {
      throw new ValidationError('commitId must be a full commit id', { field: 'commitId' });
    }
    const owner = options.owner ?? null;
    if (owner && process.getuid?.() !== 0) throw new ValidationError('exporting for another owner needs root', { field: 'owner' });
    const repo = this.repos.get(projectId);
    if (!repo.exists()) throw new NotFoundError(`no project ${projectId}`, { projectId });
    return exportTree(repo, this.gitProgram, commitId, normalizePath(path), destDir, owner);
  }


  /**
   * The folder at `path` ('' = the project) as it was at project version `projectVersion` (the
   * current one when left out), as a tar stream filtered like an export, or a zip, by `git
   * archive` (git/archiveStream.ts):
   * nothing is copied to disk or memory. NOT_FOUND for an unknown version or a path that is not
   * a folder there; a project without commits is an empty archive of its root.
   */
  async archive(projectId: string, path: string, format: 'tar' | 'zip', projectVersion?: number): Promise<{ stream: Readable; projectVersion: number; commitId: string | null }> {
    assertProjectId(projectId);
    const folder = normalizePath(path);
    if (folder === TRASH_DIR || isTrashPath(folder)) throw new ValidationError(`the trash (${TRASH_DIR}) is not archived`, { field: 'path' });
    if (!this.gitProgram) throw new ValidationError('archives need the git program on the server', { field: 'format' });
    const current = this.projectVersion(projectId);
    const version = projectVersion ?? current;
    const repo = this.repos.get(projectId);
    if (version === 0 && folder === '' && current === 0) {
      // No commit yet: an empty archive (a tar's end blocks, a zip's end record alone).
      const empty = format === 'tar' ? Buffer.alloc(1024) : Buffer.from([0x50, 0x4b, 0x05, 0x06, ...Array<number>(18).fill(0)]);
      return { stream: Readable.from([empty]), projectVersion: 0, commitId: null };
    }
    const row = version >= 1 && version <= current ? this.index.commitAt(projectId, version) : undefined;
    if (!row) throw new NotFoundError(`project version ${version} does not exist (the project is at version ${current})`, { version });
    let tree = (await repo.readCommit(row.commit_id)).tree;
    for (const name of folder === '' ? [] : folder.split('/')) {
      const entry = (await repo.readTree(tree)).find((e) => e.name === name);
      if (!entry || entry.mode !== '40000') throw new NotFoundError(`no folder ${folder} at project version ${version}`, { path: folder, version });
      tree = entry.oid;
    }
    const open = format === 'tar' ? archiveTarStream : archiveZipStream;
    return { stream: open(repo.gitdir, this.gitProgram, tree, folder === ''), projectVersion: version, commitId: row.commit_id };
  }

  /** A folder's snapshots: the commits that changed something beneath it, newest first. */
  folderSnapshots(projectId: string, folderId: string, options: { limit?: number; before?: number } = {}): SnapshotPage {
    const folder = this.getById(projectId, folderId);
    if (folder.type !== 'folder') throw new ValidationError(`${folder.path} is not a folder`, { id: folderId });
    const limit = clampLimit(options.limit, 50);
    return this.snapshots.list(projectId, folderId, { limit, before: options.before });
  }

  /** A node by id in whichever project holds it, or null (ids are unique across projects). */
  findById(id: string): NodeInfo | null {
    return typeof id === 'string' && id !== '' ? this.index.nodeByIdAnywhere(id) : null;
  }

  /** The ids from the root down to node `id` (itself included), as `/nodes/by-id-path` takes them; [] when unknown. */
  idPathOf(projectId: string, id: string): string[] {
    assertProjectId(projectId);
    return this.index.ancestorIds(projectId, id);
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
    return { node, bytes: await this.contentOf(node) };
  }

  /**
   * The content bytes of a node the caller has just looked up (NOT_FOUND for folders): what
   * readContent reads, without looking the node up a second time.
   */
  async contentOf(node: NodeInfo): Promise<Buffer> {
    if (node.type === 'folder' || !node.contentHash) throw new NotFoundError(`${node.path} is a folder`, { path: node.path });
    return this.readBlob(node.projectId, node.contentHash);
  }

  /** Current content decoded: parsed JSON, markdown text or bytes. */
  async readValue(projectId: string, ref: NodeRef): Promise<{ node: NodeInfo; value: unknown }> {
    const { node, bytes } = await this.readContent(projectId, ref);
    return { node, value: decodeContent(node.type, bytes) };
  }

  /** Versions newest first. Cost is independent of the project's history length. */
  listVersions(projectId: string, ref: NodeRef, options: VersionListOptions = {}): VersionList {
    const node = this.getNode(projectId, ref);
    const limit = clampLimit(options.limit, 50);
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
   * Who last changed each line of a version (the current one by default) of a text, Markdown or
   * JSON node, and for JSON each leaf's key path: git's blame, cached per version (history/blame.ts).
   * VALIDATION_ERROR for folders, binary content and versions too large to blame.
   */
  async blame(projectId: string, ref: NodeRef, version?: number): Promise<NodeBlame> {
    const node = this.getNode(projectId, ref);
    if (node.type === 'folder') throw new ValidationError(`${node.path} is a folder: blame is for files`, { path: node.path });
    const v = this.getVersion(projectId, { id: node.id }, version ?? node.version);
    if (!v.blobId) throw new ValidationError(`version ${v.version} of ${node.path} is a folder`, { version: v.version });
    const bytes = await this.readBlob(projectId, v.blobId);
    // git's own test for binary content: a NUL in the first 8000 bytes.
    if (bytes.subarray(0, 8000).includes(0)) throw new ValidationError(`${node.path} is binary: blame is for text`, { path: node.path });
    const origins = await this.blamer.origins(projectId, v);
    const commits = this.blamer.commits(projectId, node.id, origins);
    let keys: NodeBlame['keys'] = null;
    let keysTruncated = false;
    if (v.type === 'json') {
      const found = jsonKeyLines(bytes.toString('utf8'), MAX_BLAMED_KEYS);
      if (found) {
        keys = found.keys.map((k) => ({ pointer: k.pointer, commitId: origins.origins[k.line - 1]! }));
        keysTruncated = found.truncated;
      }
    }
    return { node, version: v, bytes, origins: origins.origins, commits, keys, keysTruncated };
  }

  /**
   * The project's `main` reached `seq` (the change bus): text nodes that reached a multiple of
   * the checkpoint interval get their blame kept, in the background (history/blameWarmer.ts).
   */
  warmBlame(projectId: string, seq: number): void {
    this.blameWarmer.committed(projectId, seq);
  }

  /** Blame checkpoints still being made (tests wait for none). */
  get blameCheckpointsPending(): number {
    return this.blameWarmer.pending;
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
    const limit = clampLimit(options.limit, 100);
    return this.index.auditByProject(projectId, limit, options.before);
  }

  /** Audit entries newest first, by node id or by path (any node ever recorded at that path). */
  auditLogs(projectId: string, ref: NodeRef, options: { limit?: number } = {}): AuditLogEntry[] {
    assertProjectId(projectId);
    const limit = clampLimit(options.limit, 100);
    if ('id' in ref) return this.index.auditByNode(projectId, ref.id, limit);
    return this.index.auditByPath(projectId, normalizePath(ref.path), limit);
  }

  /** Figures for a dashboard. */
  stats(projectId: string): ProjectStats {
    assertProjectId(projectId);
    return this.index.stats(projectId);
  }

  /** The project's current commit number (0 before the first commit); the one answer (Changelog.latest delegates here). */
  projectVersion(projectId: string): number {
    assertProjectId(projectId);
    return this.index.indexState(projectId)?.projectVersion ?? 0;
  }

  /** Node changes of the commits after project version `after`, in commit order, at most `limit` (the changelog). */
  changesAfter(projectId: string, after: number, limit: number): ChangeEntry[] {
    return this.changeIndex.after(projectId, after, limit);
  }

  /** Node changes of the commits in (`after`, `upTo`]. */
  changesBetween(projectId: string, after: number, upTo: number): ChangeEntry[] {
    return this.changeIndex.between(projectId, after, upTo);
  }

  /** Up to `limit` commits after project version `after`, oldest first. */
  commitsAfter(projectId: string, after: number, limit: number): CommitInfo[] {
    return this.changeIndex.commits(projectId, after, limit);
  }

  /** The value of the `key:` line a caller put in a commit's trailers (CommitOptions.trailers), read from git; null when it has none. */
  async commitTrailer(projectId: string, commitId: string, key: string): Promise<string | null> {
    return trailerValue((await this.repos.get(projectId).readCommit(commitId)).message, key);
  }

  /** Figures of the subtree at `scope` (a normalized, non-empty path): what lies inside it and the commits that touched it. */
  figuresWithin(projectId: string, scope: string): ScopeFigures {
    return this.changeIndex.figures(projectId, scope);
  }

  protected async readBlob(projectId: string, oid: string): Promise<Buffer> {
    const cached = this.blobs.get(oid);
    if (cached) return cached;
    const bytes = await this.repos.get(projectId).readBlob(oid);
    this.blobs.set(oid, bytes);
    return bytes;
  }
}
