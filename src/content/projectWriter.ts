import { execFile } from 'node:child_process';
import { rm } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { CommitApplier } from './commitApplier.ts';
import { isContentError, ValidationError } from './errors.ts';
import { serializeCommit } from './git/commitObject.ts';
import type { ObjectType } from './git/objects.ts';
import { PackBuilder } from './git/packWriter.ts';
import { breakMainLock, mainLockAge } from './git/refs.ts';
import type { Repo, RepoRegistry } from './git/repo.ts';
import { rebuildIndex, syncFromGit } from './gitSync.ts';
import type { IndexStore } from './indexStore.ts';
import { Lru } from './lru.ts';
import { applyMutation, type MutationContext, type PreparedMutation } from './mutations.ts';
import { parentPath, TRASH_DIR } from './paths.ts';
import { rollbackFolder } from './folderRollback.ts';
import { rollbackProject } from './projectRollback.ts';
import { formatMessage } from './trailers.ts';
import { EMPTY_BLOB, loadTree, NeedsLoad, Tree, WorkTree } from './tree.ts';
import type { PushExpectations } from './pushExpectations.ts';
import type { Actor, CommitResult, NodeInfo, ReindexReport, SyncOptions, SyncReport } from './types.ts';

export interface WriterDeps {
  db: Db;
  index: IndexStore;
  repos: RepoRegistry;
  logger?: Logger;
  maxBatchCommits: number;
  repackEvery: number;
  maxCached: number;
  gitBinary: string | null;
  /** Pushes accepted by the git remote, not indexed yet (shared by all writers). */
  pushes?: PushExpectations;
  /** Called after new commits of a project are indexed and acknowledged (writes and pushes alike). */
  onCommitted?: (projectId: string) => void;
}

interface Job {
  actor: Actor;
  message?: string;
  mutations: PreparedMutation[];
  resolve: (r: CommitResult) => void;
  reject: (e: unknown) => void;
}

interface Task {
  run: () => Promise<unknown>;
  resolve: (r: never) => void;
  reject: (e: unknown) => void;
}

/** The ref moved under us (a push): index what arrived and rebuild the batch on the new tip. */
class RefMoved extends Error {}
/** Another process holds `main.lock` right now. */
class RefLocked extends Error {}

/** A lock older than this is taken to be abandoned by a crashed process. */
const STALE_LOCK_MS = 30_000;

/** One writer per project; writers of idle projects are dropped beyond the LRU bound. */
export class ProjectWriters {
  private readonly lru: Lru<string, ProjectWriter>;
  private readonly busy = new Map<string, ProjectWriter>();
  private gitMissing = false;

  constructor(private readonly deps: WriterDeps) {
    this.lru = new Lru<string, ProjectWriter>(deps.maxCached);
  }

  get(projectId: string): ProjectWriter {
    let w = this.busy.get(projectId) ?? this.lru.get(projectId);
    if (!w || w.destroyed) {
      w = new ProjectWriter(projectId, this.deps, this);
      this.lru.set(projectId, w);
    }
    return w;
  }

  /** Keeps a writer with queued work reachable even if the LRU evicts it. */
  markBusy(w: ProjectWriter, busy: boolean): void {
    if (busy) this.busy.set(w.projectId, w);
    else if (this.busy.get(w.projectId) === w) this.busy.delete(w.projectId);
  }

  forget(projectId: string): void {
    this.lru.delete(projectId);
  }

  gitAvailable(): boolean {
    return !this.gitMissing && this.deps.gitBinary !== null;
  }

  noteGitMissing(): void {
    if (!this.gitMissing) this.deps.logger?.warn('git is not installed: repositories are not repacked (loose objects accumulate)');
    this.gitMissing = true;
  }

  async close(): Promise<void> {
    await Promise.all([...this.busy.values()].map((w) => w.idle()));
  }
}

/**
 * Serializes and group-commits the writes of one project. Calls queue up while a batch is being
 * written; the next batch takes everything queued: one commit per call chained in order, one
 * compare-and-swap of `main`, one SQLite transaction, then every call is answered. A call that
 * fails validation fails alone (its savepoint and tree edits are reverted).
 */
export class ProjectWriter {
  private readonly queue: (Job | Task)[] = [];
  private running: Promise<void> | null = null;
  /** In-memory tree of the commit `head`; null when it must be (re)loaded. */
  private work: WorkTree | null = null;
  private head: string | null = null;
  private readonly repo: Repo;
  /** Set once the project was deleted: ProjectWriters then hands out a fresh writer. */
  destroyed = false;

  constructor(
    readonly projectId: string,
    private readonly deps: WriterDeps,
    private readonly owner: ProjectWriters,
  ) {
    this.repo = deps.repos.get(projectId);
  }

  submit(job: Omit<Job, 'resolve' | 'reject'>): Promise<CommitResult> {
    if (job.mutations.some((m) => m.op === 'rollbackProject') && job.mutations.length > 1) {
      return Promise.reject(new ValidationError('a project rollback must be the only mutation of its commit'));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ ...job, resolve, reject });
      this.kick();
    });
  }

  sync(options: SyncOptions = {}): Promise<SyncReport> {
    return this.exclusive(() => this.syncLocked(options));
  }

  reindex(): Promise<ReindexReport> {
    return this.exclusive(async () => {
      this.work = null;
      return rebuildIndex(this.syncDeps());
    });
  }

  repack(): Promise<boolean> {
    return this.exclusive(() => this.repackLocked());
  }

  /** After queued writes: removes the repository and the project's index rows. */
  destroy(): Promise<void> {
    return this.exclusive(async () => {
      this.destroyed = true;
      this.work = null;
      this.head = null;
      this.deps.db.transaction(() => this.deps.index.deleteProject(this.projectId)).immediate();
      await rm(this.repo.gitdir, { recursive: true, force: true });
      this.repo.forgetDisk();
      this.deps.repos.forget(this.projectId);
      this.owner.forget(this.projectId);
    });
  }

  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private exclusive<T>(run: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, resolve: resolve as (r: never) => void, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.running) return;
    this.owner.markBusy(this, true);
    this.running = this.loop().finally(() => {
      this.running = null;
      if (this.queue.length > 0) this.kick();
      else this.owner.markBusy(this, false);
    });
  }

  private async loop(): Promise<void> {
    while (this.queue.length > 0) {
      const first = this.queue[0];
      if ('run' in first) {
        this.queue.shift();
        try {
          first.resolve((await first.run()) as never);
        } catch (e) {
          first.reject(e);
        }
        continue;
      }
      const jobs: Job[] = [];
      while (jobs.length < this.deps.maxBatchCommits && this.queue.length > 0 && !('run' in this.queue[0])) {
        jobs.push(this.queue.shift() as Job);
      }
      await this.runBatch(jobs);
      await this.maybeRepack();
      // Let requests that arrived meanwhile join the next batch.
      await new Promise((r) => setImmediate(r));
    }
  }

  private async runBatch(jobs: Job[]): Promise<void> {
    let pending = jobs;
    let lockedSince = 0;
    let toLoad: Tree[] = [];
    while (pending.length > 0) {
      let outcome: BatchOutcome;
      try {
        await this.ready();
        await this.preload(pending, toLoad);
        outcome = this.deps.db.transaction(() => this.writeBatch(pending)).immediate();
      } catch (e) {
        this.work = null;
        if (e instanceof RefMoved) continue;
        if (e instanceof RefLocked) {
          lockedSince ||= Date.now();
          if ((mainLockAge(this.repo.gitdir) ?? 0) > STALE_LOCK_MS) {
            this.deps.logger?.warn({ projectId: this.projectId }, 'removing an abandoned refs/heads/main.lock');
            breakMainLock(this.repo.gitdir);
          } else if (Date.now() - lockedSince > 2 * STALE_LOCK_MS) {
            for (const j of pending) j.reject(new Error('refs/heads/main stays locked by another process'));
            return;
          }
          await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
          continue;
        }
        this.deps.logger?.error({ err: e, projectId: this.projectId }, 'content batch failed');
        for (const j of pending) j.reject(e);
        return;
      }
      const moved = outcome.head !== this.head;
      this.head = outcome.head;
      for (const [job, result] of outcome.done) job.resolve(result);
      for (const [job, err] of outcome.failed) job.reject(err);
      if (moved) this.notify();
      pending = outcome.deferred;
      toLoad = outcome.toLoad;
    }
  }

  /** Loads the index up to the tip of `main` (pushed commits) and the in-memory tree of that tip. */
  private async ready(): Promise<void> {
    const tip = this.repo.readMain();
    const indexed = this.deps.index.indexState(this.projectId)?.headCommit ?? null;
    if (tip !== indexed) {
      await this.syncLocked();
      this.work = null;
    }
    if (this.work && this.head === tip) return;
    this.repo.ensure();
    // Every empty folder holds the empty placeholder blob: make sure it exists once.
    if (this.repo.writeBlob(Buffer.alloc(0)) !== EMPTY_BLOB) throw new Error('empty blob id mismatch');
    const root = tip ? new Tree((await this.repo.readCommit(tip)).tree, null) : new Tree(null, new Map());
    this.work = new WorkTree(root);
    this.head = tip;
  }

  /** Reads the trees the batch will touch, so that the synchronous section rarely meets NeedsLoad. */
  private async preload(jobs: Job[], trees: Tree[]): Promise<void> {
    const work = this.work!;
    for (const t of trees) await loadTree(this.repo, t);
    const dirs = new Set<string>(['']);
    for (const j of jobs) {
      for (const m of j.mutations) {
        if (m.op === 'write' || m.op === 'mkdir') dirs.add(parentPath(m.path));
        else if (m.op === 'move') dirs.add(parentPath(m.from)).add(parentPath(m.to));
        else if (m.op === 'remove') dirs.add(parentPath(m.path)).add(TRASH_DIR);
        else if (m.op === 'restore') dirs.add(parentPath(m.trashPath)).add(parentPath(m.to));
        else if (m.op === 'rollbackFolder') {
          const row = this.deps.index.rowById(m.folderId);
          if (row) dirs.add(parentPath(row.path)).add(row.path).add(TRASH_DIR);
        } else if (m.op === 'revert') {
          const row = 'id' in m.node ? this.deps.index.rowById(m.node.id) : this.deps.index.rowByPath(this.projectId, m.node.path);
          if (row) dirs.add(parentPath(row.path));
        }
      }
    }
    for (const d of dirs) await work.load(this.repo, d);
  }

  /** The synchronous write section (inside one SQLite transaction). */
  private writeBatch(jobs: Job[]): BatchOutcome {
    const { index } = this.deps;
    const st = index.indexState(this.projectId);
    let pv = st?.projectVersion ?? 0;
    const start = pv;
    let head = this.head;
    const pack = new PackBuilder();
    const out: BatchOutcome = { done: [], failed: [], deferred: [], toLoad: [], head };
    for (const job of jobs) {
      if (out.deferred.length > 0) {
        out.deferred.push(job);
        continue;
      }
      this.work!.begin();
      try {
        const result = this.deps.db.transaction(() => this.writeCommit(job, pv + 1, head, pack))();
        this.work!.keep();
        if (result.changed) {
          pv++;
          head = result.commitId;
        }
        out.done.push([job, result]);
      } catch (e) {
        this.work!.revert();
        if (e instanceof NeedsLoad) {
          out.deferred.push(job);
          out.toLoad.push(e.tree);
        } else if (isContentError(e)) {
          out.failed.push([job, e]);
        } else {
          throw e;
        }
      }
    }
    if (head !== this.head) {
      this.repo.writePack(pack);
      this.repo.syncObjectDirs();
      const cas = this.repo.casMain(this.head, head!);
      if (cas === 'moved') throw new RefMoved();
      if (cas === 'locked') throw new RefLocked();
      index.setIndexState(this.projectId, {
        headCommit: head,
        projectVersion: pv,
        commitsSinceRepack: (st?.commitsSinceRepack ?? 0) + pv - start,
      });
    }
    out.head = head;
    return out;
  }

  /** Builds one commit from one call's mutations (inside a savepoint). */
  private writeCommit(job: Job, projectVersion: number, parent: string | null, pack: PackBuilder): CommitResult {
    const { index } = this.deps;
    const seconds = Math.floor(Date.now() / 1000);
    const message = job.message?.trim() || describe(job.mutations);
    const applier = new CommitApplier(index, {
      projectId: this.projectId,
      projectVersion,
      actor: job.actor,
      message,
      time: new Date(seconds * 1000).toISOString(),
    });
    const writeObject = (type: ObjectType, content: Buffer) => pack.add(type, content);
    const ctx: MutationContext = { projectId: this.projectId, index, tree: this.work!, applier, projectVersion, writeObject };
    for (const m of job.mutations) {
      if (m.op === 'rollbackProject') rollbackProject(ctx, m.targetVersion);
      else if (m.op === 'rollbackFolder') rollbackFolder(ctx, m.folderId, m.targetVersion);
      else applyMutation(ctx, m);
    }
    if (applier.size === 0) return { changed: false, commitId: null, projectVersion: null, nodes: [] };
    const tree = this.work!.hash(
      writeObject,
      (path, oid) => {
        if (path !== '' && path !== TRASH_DIR) index.setFolderHash(this.projectId, path, oid);
      },
    );
    const changes = applier.changes();
    const commitId = pack.add(
      'commit',
      serializeCommit({
        tree,
        parents: parent ? [parent] : [],
        authorName: job.actor.author,
        authorEmail: emailOf(job.actor),
        time: seconds,
        message: formatMessage(message, job.actor, changes),
      }),
    );
    applier.finalize(commitId);
    const nodes: NodeInfo[] = [];
    for (const c of changes) {
      if (c.op === 'delete') continue;
      const n = index.nodeById(this.projectId, c.id);
      if (n) nodes.push(n);
    }
    return { changed: true, commitId, projectVersion, nodes };
  }

  private async syncLocked(options: SyncOptions = {}): Promise<SyncReport> {
    const report = await syncFromGit(this.syncDeps(), options);
    if (report.indexedCommits > 0) {
      this.work = null;
      this.notify();
    }
    return report;
  }

  /** A listener's failure must not fail writes that are already done. */
  private notify(): void {
    try {
      this.deps.onCommitted?.(this.projectId);
    } catch (err) {
      this.deps.logger?.warn({ err, projectId: this.projectId }, 'a commit listener failed');
    }
  }

  private syncDeps() {
    return {
      projectId: this.projectId,
      db: this.deps.db,
      index: this.deps.index,
      repo: this.repo,
      logger: this.deps.logger,
      // History is read in bulk with the system git when there is one (isomorphic-git otherwise).
      gitBinary: this.owner.gitAvailable() ? this.deps.gitBinary : null,
      onGitMissing: () => this.owner.noteGitMissing(),
      pushes: this.deps.pushes,
    };
  }

  private async maybeRepack(): Promise<void> {
    const every = this.deps.repackEvery;
    if (every <= 0 || !this.owner.gitAvailable()) return;
    const st = this.deps.index.indexState(this.projectId);
    if (!st || st.commitsSinceRepack < every) return;
    await this.repackLocked();
  }

  /**
   * `git repack -ad` packs everything reachable into one pack and deletes the loose copies. It runs
   * while this writer holds the project (writes wait); readers keep going because a failed read
   * retries with a fresh pack cache. Unreferenced loose objects (blobs of calls in flight) are kept.
   */
  private async repackLocked(): Promise<boolean> {
    if (!this.owner.gitAvailable() || !this.repo.exists()) return false;
    try {
      await new Promise<void>((resolve, reject) => {
        execFile(this.deps.gitBinary!, ['repack', '-a', '-d', '-q'], { cwd: this.repo.gitdir }, (err) => (err ? reject(err) : resolve()));
      });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
        this.owner.noteGitMissing();
        return false;
      }
      this.deps.logger?.warn({ err: e, projectId: this.projectId }, 'git repack failed');
      return false;
    }
    this.repo.dropCache();
    const st = this.deps.index.indexState(this.projectId);
    if (st) this.deps.db.transaction(() => this.deps.index.setIndexState(this.projectId, { ...st, commitsSinceRepack: 0 })).immediate();
    return true;
  }
}

interface BatchOutcome {
  done: [Job, CommitResult][];
  failed: [Job, unknown][];
  deferred: Job[];
  toLoad: Tree[];
  head: string | null;
}

/** Generated commit message, e.g. `write docs/guide.md`. */
function describe(mutations: PreparedMutation[]): string {
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
    case 'revert':
      return `rollback ${'id' in m.node ? m.node.id : m.node.path} to version ${m.version}`;
    case 'rollbackFolder':
      return `rollback folder ${m.folderId} to project version ${m.targetVersion}`;
    case 'rollbackProject':
      return `rollback project to version ${m.targetVersion}`;
  }
}

function emailOf(actor: Actor): string {
  if (/^[^\s@<>]+@[^\s@<>]+$/.test(actor.author)) return actor.author;
  return `${actor.type}+${actor.id.replace(/[^A-Za-z0-9._-]/g, '_')}@cns.invalid`;
}
