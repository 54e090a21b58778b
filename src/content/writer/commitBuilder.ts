import type { Db } from '../../db/database.ts';
import { CommitApplier } from '../commitApplier.ts';
import { isContentError } from '../../errors/contentErrors.ts';
import { rollbackFolder } from '../folderRollback.ts';
import { serializeCommit, type CommitData } from '../git/commitObject.ts';
import type { ObjectType } from '../git/objects.ts';
import { PackBuilder, type PackFiles } from '../git/packWriter.ts';
import type { RefUpdate } from '../git/refs.ts';
import type { Repo } from '../git/repo.ts';
import type { IndexStore } from '../indexStore.ts';
import { applyMutation, type MutationContext, type PreparedMutation } from '../mutations.ts';
import { parentPath, TRASH_DIR } from '../paths.ts';
import { rollbackProject } from '../projectRollback.ts';
import { formatMessage } from '../trailers.ts';
import { loadTree, NeedsLoad, type Tree, type WorkTree } from '../tree.ts';
import type { Actor, CommitResult, NodeInfo } from '../types.ts';
import { prepareMain } from './mainRef.ts';

/** One call as its commit is built from it (the queue adds how the call is answered). */
export interface CommitCall {
  actor: Actor;
  message?: string;
  mutations: PreparedMutation[];
  /** CommitOptions.guard: a check (and its writes) inside the call's savepoint. */
  guard?: () => void;
  /** Parents after the tip (a merge commit: the git remote's merge of a push to refs/for/main). */
  extraParents?: string[];
  /** CommitOptions.trailers: the caller's own lines in the commit's trailer block. */
  trailers?: readonly string[];
}

/** What commits are built on: the project's repository and index, and the in-memory tree of `head`. */
export interface BuildTarget {
  projectId: string;
  db: Db;
  index: IndexStore;
  repo: Repo;
  work: WorkTree;
  head: string | null;
  /** Throws unless this process still owns the project (several workers: its lease); run in each write transaction. */
  fence?: () => void;
  /** The pack's temporary files, opened before the transaction (writeBatch). */
  packFiles?: PackFiles;
}

export interface BatchOutcome<C> {
  done: [C, CommitResult][];
  failed: [C, unknown][];
  /** Calls not built yet because a tree had to be read first (`toLoad`): the next attempt takes them. */
  deferred: C[];
  toLoad: Tree[];
  /** The tip of main after the batch. */
  head: string | null;
  /** When the batch made commits: main's move to `head`, prepared; published once the transaction committed. */
  mainUpdate: RefUpdate | null;
}

/** The call itself was refused (its guard, or the plan of a large commit): it fails alone with `reason`. */
export class CallRejected extends Error {
  constructor(readonly reason: unknown) {
    super('the call was refused');
  }
}

/** The answer to a call whose mutations changed nothing (no commit was made). */
export function unchanged(): CommitResult {
  return { changed: false, commitId: null, projectVersion: null, nodes: [] };
}

/** Reads the trees the batch will touch, so that the synchronous section rarely meets NeedsLoad. */
export async function preloadTrees(target: BuildTarget, calls: CommitCall[], trees: Tree[]): Promise<void> {
  const { work, repo, index, projectId } = target;
  for (const t of trees) await loadTree(repo, t);
  const dirs = new Set<string>(['']);
  for (const call of calls) {
    for (const m of call.mutations) {
      if (m.op === 'write' || m.op === 'mkdir') dirs.add(parentPath(m.path));
      else if (m.op === 'move') dirs.add(parentPath(m.from)).add(parentPath(m.to));
      else if (m.op === 'remove') dirs.add(parentPath(m.path)).add(TRASH_DIR);
      else if (m.op === 'restore') dirs.add(parentPath(m.trashPath)).add(parentPath(m.to));
      else if (m.op === 'rollbackFolder') {
        const row = index.rowById(m.folderId);
        if (row) dirs.add(parentPath(row.path)).add(row.path).add(TRASH_DIR);
      } else if (m.op === 'rollbackNode') {
        const row = 'id' in m.node ? index.rowById(m.node.id) : index.rowByPath(projectId, m.node.path);
        if (row) dirs.add(parentPath(row.path));
      }
    }
  }
  for (const d of dirs) await work.load(repo, d);
}

/**
 * The synchronous write section (run inside one SQLite transaction): one commit per call, chained
 * on `head`, all objects in ONE pack, then the compare-and-swap of main prepared (RefMoved/
 * RefLocked when it cannot be) and the project's index state. The caller publishes the move of
 * main once the transaction has committed (`mainUpdate`), or releases it when it did not. A call
 * that fails validation or its guard fails alone: its savepoint and tree edits are reverted.
 */
export function writeBatch<C extends CommitCall>(target: BuildTarget, calls: C[]): BatchOutcome<C> {
  target.fence?.();
  const { index, work } = target;
  const st = index.indexState(target.projectId);
  let pv = st?.projectVersion ?? 0;
  const start = pv;
  let head = target.head;
  const pack = new PackBuilder();
  const out: BatchOutcome<C> = { done: [], failed: [], deferred: [], toLoad: [], head, mainUpdate: null };
  for (const call of calls) {
    if (out.deferred.length > 0) {
      out.deferred.push(call);
      continue;
    }
    work.begin();
    try {
      const result = target.db.transaction(() => writeCommit(target, call, pv + 1, head, pack))();
      work.keep();
      if (result.changed) {
        pv++;
        head = result.commitId;
      }
      out.done.push([call, result]);
    } catch (e) {
      work.revert();
      if (e instanceof NeedsLoad) {
        out.deferred.push(call);
        out.toLoad.push(e.tree);
      } else if (isContentError(e)) {
        out.failed.push([call, e]);
      } else if (e instanceof CallRejected) {
        out.failed.push([call, e.reason]);
      } else {
        throw e;
      }
    }
  }
  if (head !== target.head) {
    target.repo.writePack(pack, target.packFiles);
    target.repo.syncObjectDirs();
    out.mainUpdate = prepareMain(target.repo, target.head, head!);
    try {
      index.setIndexState(target.projectId, {
        headCommit: head,
        projectVersion: pv,
        commitsSinceRepack: (st?.commitsSinceRepack ?? 0) + pv - start,
      });
    } catch (e) {
      out.mainUpdate.release();
      throw e;
    }
  }
  out.head = head;
  return out;
}

/** Builds one commit from one call's mutations (inside a savepoint). */
function writeCommit(target: BuildTarget, call: CommitCall, projectVersion: number, parent: string | null, pack: PackBuilder): CommitResult {
  const { index, projectId, work } = target;
  const seconds = Math.floor(Date.now() / 1000);
  const message = commitMessage(call, pathsOf(index, projectId));
  const applier = new CommitApplier(index, { projectId, projectVersion, actor: call.actor, message, time: isoTime(seconds) });
  const writeObject = (type: ObjectType, content: Buffer) => pack.add(type, content);
  const ctx: MutationContext = { projectId, index, tree: work, applier, projectVersion, writeObject };
  if (call.guard) {
    try {
      call.guard();
    } catch (e) {
      throw new CallRejected(e);
    }
  }
  for (const m of call.mutations) {
    if (m.op === 'rollbackProject') rollbackProject(ctx, m.targetVersion);
    else if (m.op === 'rollbackFolder') rollbackFolder(ctx, m.folderId, m.targetVersion);
    else applyMutation(ctx, m);
  }
  if (applier.size === 0) return unchanged();
  const tree = work.hash(writeObject, (path, oid) => {
    if (isIndexedFolder(path)) index.setFolderHash(projectId, path, oid);
  });
  const changes = applier.changes();
  const commitId = pack.add('commit', serializeCommit(commitHeader(call, tree, parent, seconds, formatMessage(message, call.actor, changes, call.trailers))));
  applier.finalize(commitId);
  const nodes: NodeInfo[] = [];
  for (const c of changes) {
    if (c.op === 'delete') continue;
    const n = index.nodeById(projectId, c.id);
    if (n) nodes.push(n);
  }
  return { changed: true, commitId, projectVersion, nodes };
}

/** Folders whose tree id the index keeps (not the root, not the trash). */
export function isIndexedFolder(path: string): boolean {
  return path !== '' && path !== TRASH_DIR;
}

/** The call's message, or one generated from its mutations (naming nodes by their paths, as people know them). */
export function commitMessage(call: CommitCall, pathOf: (nodeId: string) => string): string {
  return call.message?.trim() || describe(call.mutations, pathOf);
}

/** A node's current path by its id, read before the commit changes anything. */
export function pathsOf(index: IndexStore, projectId: string): (nodeId: string) => string {
  return (nodeId) => index.nodeById(projectId, nodeId)?.path ?? nodeId;
}

export function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

/** The fields of the commit object of `call` on `parent` (the merge parents after it). */
export function commitHeader(call: CommitCall, tree: string, parent: string | null, seconds: number, message: string): CommitData {
  return {
    tree,
    parents: [...(parent ? [parent] : []), ...(call.extraParents ?? [])],
    authorName: call.actor.author,
    authorEmail: emailOf(call.actor),
    time: seconds,
    message,
  };
}

/** Generated commit message, e.g. `write docs/guide.md`. */
function describe(mutations: PreparedMutation[], pathOf: (nodeId: string) => string): string {
  if (mutations.length > 1) {
    if (mutations.every((m) => m.op === 'write')) return `write ${mutations.length} files`;
    return `${mutations.length} changes`;
  }
  const m = mutations[0];
  switch (m.op) {
    case 'write':
      return `write ${m.path}`;
    case 'mkdir':
      return `mkdir ${m.path}`;
    case 'move':
      return `move ${m.from} to ${m.to}`;
    case 'remove':
      return `${m.permanent ? 'delete' : 'trash'} ${m.path}`;
    case 'restore':
      return `restore ${m.trashPath} to ${m.to}`;
    case 'rollbackNode':
      return `rollback ${'id' in m.node ? pathOf(m.node.id) : m.node.path} to version ${m.version}`;
    case 'rollbackFolder':
      return `rollback folder ${pathOf(m.folderId)} to project version ${m.targetVersion}`;
    case 'rollbackProject':
      return `rollback project to version ${m.targetVersion}`;
  }
}

function emailOf(actor: Actor): string {
  if (/^[^\s@<>]+@[^\s@<>]+$/.test(actor.author)) return actor.author;
  return `${actor.type}+${actor.id.replace(/[^A-Za-z0-9._-]/g, '_')}@cns.invalid`;
}
