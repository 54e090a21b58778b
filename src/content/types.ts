/** Public types of the content store (re-exported by contentStore.ts). */

export type NodeType = 'folder' | 'json' | 'markdown' | 'file';
export type WritableNodeType = Exclude<NodeType, 'folder'>;

/** Who makes a change. `author` is the user's email or `agent:<name>` for connections. */
export interface Actor {
  type: 'user' | 'agent' | 'sync';
  id: string;
  author: string;
  /**
   * The author a pushed git commit names when it is not the actor (`user.email` is whatever the
   * committer configured): shown beside the actor as "authored by", never instead of it.
   */
  commitAuthor?: string;
}

/** What a node version records as its cause. */
export type Operation = 'create' | 'update' | 'move' | 'trash' | 'restore' | 'rollback' | 'delete';

/** A node as the index knows it. Paths are relative to the project root, without leading slash. */
export interface NodeInfo {
  id: string;
  projectId: string;
  path: string;
  name: string;
  /** Null for root children and for top-level trash items. */
  parentId: string | null;
  type: NodeType;
  /** Git blob id for content nodes; the git tree id for folders. */
  contentHash: string | null;
  size: number;
  mimeType: string | null;
  state: 'active' | 'trashed';
  version: number;
  /** Folders only: number of direct children. */
  childrenCount: number | null;
  createdAt: string;
  updatedAt: string;
  /** Trashed top-level items only. */
  originalPath: string | null;
  deletedAt: string | null;
  deletedBy: string | null;
}

/** One entry of a node's history (fields of both spec 2.3 shapes, plus where it came from). */
export interface VersionInfo {
  nodeId: string;
  version: number;
  type: NodeType;
  path: string;
  operation: Operation;
  actorType: Actor['type'];
  actorId: string;
  author: string;
  /** Actor.commitAuthor of the commit that made the version (null: none, or the actor itself). */
  commitAuthor: string | null;
  message: string | null;
  size: number;
  /** Blob id of this version's content (null for folders). */
  blobId: string | null;
  commitId: string;
  /** The project's commit number that made this version (a project rollback target). */
  projectVersion: number;
  createdAt: string;
}

export interface VersionList {
  versions: VersionInfo[];
  total: number;
  currentVersion: number;
}

/** A node reference: by path (active or trash path) or by stable id. */
export type NodeRef = { path: string } | { id: string };

/**
 * One change inside a commit. `ContentStore.commit` applies a list of these atomically as one
 * git commit; every named operation is a one- or many-mutation commit.
 */
export type Mutation =
  | {
      op: 'write';
      path: string;
      type: WritableNodeType;
      /** json: object or array; markdown: string; file: Buffer/Uint8Array (or string, stored as UTF-8). */
      content: unknown;
      /** Conflict unless the node is at this version; 0 means "must not exist yet". */
      baseVersion?: number;
    }
  | { op: 'mkdir'; path: string }
  | { op: 'move'; from: string; to: string }
  | { op: 'remove'; path: string; permanent?: boolean }
  | { op: 'restore'; trashPath: string; to: string }
  | { op: 'rollbackNode'; node: NodeRef; version: number }
  /** Everything beneath the folder back to its state after project version `targetVersion`. */
  | { op: 'rollbackFolder'; folderId: string; targetVersion: number }
  /**
   * A `file` node whose blob `writeBlobStream` already stored (a streamed upload). `id` is the id
   * the node gets when it is created (conflict when that id is already in use).
   */
  | { op: 'writeBlob'; path: string; blobId: string; size: number; id?: string; baseVersion?: number }
  | { op: 'rollbackProject'; targetVersion: number };

export interface CommitOptions {
  /** Commit message; generated from the mutations when absent. */
  message?: string;
  /**
   * Runs inside the call's SQLite savepoint, before its mutations, on the index as it is when
   * the commit is built (and again if the batch is rebuilt). Whatever it throws fails this call
   * alone with that error; its own SQLite writes commit or roll back with the call.
   */
  guard?: () => void;
  /**
   * Awaited in the project's serialized section right before the commit is built: after every
   * earlier write of the project, before this one and before any later one. What it throws fails
   * the call and nothing is written. For checks that read the metadata store (which a `guard`,
   * inside the content transaction, cannot await): a background writer's permission asked again
   * at the moment of its write. Such a call is committed alone, not batched with others.
   */
  check?: () => Promise<void>;
  /**
   * Lines added to the commit's trailer block (`Cns-<Key>: <value>`, one line each), naming what
   * the commit did for a caller whose own record lives elsewhere (an ingestion task, a sync's page): a caller
   * that crashed between the commit and its record finds the commit by them (findTrailer,
   * commitTrailer): an ingestion task, a sync's page, an upload, a table's deletion.
   */
  trailers?: string[];
}

export interface CommitResult {
  /** False when every mutation was a no-op: then no commit was made. */
  changed: boolean;
  commitId: string | null;
  projectVersion: number | null;
  /** Final state of each node this commit changed (deleted nodes are absent). */
  nodes: NodeInfo[];
}

export interface WriteResult {
  node: NodeInfo;
  changed: boolean;
  commitId: string | null;
  projectVersion: number | null;
}

export interface BulkFile {
  path: string;
  type: WritableNodeType;
  content: unknown;
}

export interface TreeNode extends NodeInfo {
  /** Absent when max depth was reached, empty for empty folders, null for non-folders. */
  children: TreeNode[] | null;
}

export interface TrashItem {
  id: string;
  trashPath: string;
  originalPath: string | null;
  name: string;
  type: NodeType;
  deletedAt: string | null;
  deletedBy: string | null;
}

/** Audit actions: node operations, and `push` (a whole accepted git push, path '' and no node). */
export type AuditAction = Operation | 'push';

export interface AuditLogEntry {
  id: number;
  action: AuditAction;
  actorType: Actor['type'];
  actorId: string;
  author: string;
  commitAuthor: string | null;
  nodeId: string;
  path: string;
  timestamp: string;
  details: Record<string, unknown>;
}

export interface ProjectStats {
  nodesByType: Record<NodeType, number>;
  trashedCount: number;
  trashBytes: number;
  commitCount: number;
  lastChange: { projectVersion: number; commitId: string; author: string; message: string; at: string } | null;
}

/** Differences between the live index and one rebuilt from git. */
export interface ReindexReport {
  projectId: string;
  commits: number;
  nodes: number;
  versions: number;
  missingNodes: string[];
  extraNodes: string[];
  differences: string[];
}

/** How `reconcile` attributes commits without cns trailers (pushed by a git client). */
export interface ReconcileOptions {
  /** Actor of those versions; default: a `user` named after the commit's author. */
  actor?: Actor;
  /** created_at of those versions (when the push arrived, ISO 8601); default: the commit time. */
  receivedAt?: string;
  /** Keep the commit's author (email, else name) beside the actor as `commitAuthor` when it differs. */
  keepCommitAuthor?: boolean;
  /**
   * A cluster replica indexing what its primary sent (ContentStore.follow): history is read in
   * this process (isomorphic-git), since for the few commits it indexes at a time three git
   * spawns cost more than the reading, and the commits are announced to this process only
   * (CommittedTip.followed): the primary announces them to the others once they are acknowledged.
   */
  followed?: boolean;
  /**
   * Indexing a push this node accepted as the project's writer: acknowledged like a write, so on a
   * cluster node deposed since the push began (a partition, a pause) it throws DeposedError
   * instead of passing for replicated (WriterDeps.replicate's `write`).
   */
  pushed?: boolean;
}

/** A push the git remote accepted (`ContentStore.expectPush`). */
export interface PushInfo {
  /** Tip of main before the push; null when main did not exist. */
  before: string | null;
  /** Tip main moves to. */
  after: string;
  /** New commits the push brings. */
  commits: number;
  /** The credential that pushed. */
  actor: Actor;
  /** When the push arrived (ISO 8601). */
  receivedAt: string;
  /** Default true: the commit's author is kept beside the pusher (`commitAuthor`) when it differs. */
  keepCommitAuthor?: boolean;
}

/** What reconciling a project's index with its git history did. */
export interface ReconcileReport {
  projectId: string;
  indexedCommits: number;
  /** True when the branch was rewritten and the project had to be reindexed from scratch. */
  rebuilt: boolean;
  head: string | null;
}

/** Who made a change, as the index recorded it. */
export type ChangeActor = Actor;

/** One node changed by one commit, as the content index recorded it (its audit entry). */
export interface ChangeEntry {
  projectVersion: number;
  nodeId: string;
  /** Path after the change (`.trash/…` for a trashed node; the last path for a permanent delete). */
  path: string;
  /** Path before a move, trash or restore. */
  oldPath: string | null;
  action: string;
  nodeType: string;
  version: number;
  actor: ChangeActor;
  createdAt: string;
}

/** One project commit as the index recorded it. */
export interface CommitInfo {
  projectVersion: number;
  commitId: string;
  actor: ChangeActor;
  message: string;
  createdAt: string;
}

/** Figures of a subtree (a normalized scope path). */
export interface ScopeFigures {
  nodesByType: Record<NodeType, number>;
  trashedCount: number;
  trashBytes: number;
  /** Commits with a change inside the scope, and the last of them (null: none). */
  commitCount: number;
  lastCommit: number | null;
}

/** Where a project's `main` stands after acknowledged commits (ContentStore.onCommitted). */
export interface CommittedTip {
  projectId: string;
  commitId: string | null;
  projectVersion: number;
  /** Indexed by a cluster replica from its primary's shipment: for this process's own listeners only. */
  followed?: boolean;
}
