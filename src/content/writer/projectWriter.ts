import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { rename, rm, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import { writeTurn } from '../../db/writeTurn.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../errors/contentErrors.ts';
import type { PackFiles } from '../git/packWriter.ts';
import { NOTES_REF } from '../git/notes.ts';
import { MAIN_REF, readRef, rollForwardMain, type RefUpdate } from '../git/refs.ts';
import type { Repo, RepoRegistry } from '../git/repo.ts';
import { rebuildIndex, reconcile, type ReconcileDeps } from '../history/reconcile.ts';
import type { IndexStore } from '../indexStore.ts';
import { isLargeCommit } from '../largeCommit.ts';
import { Lru } from '../lru.ts';
import type { PushExpectations } from '../pushExpectations.ts';
import { TimeSlice } from '../timeSlice.ts';
import { EMPTY_BLOB, Tree, WorkTree } from '../tree.ts';
import type { CommitResult, CommittedTip, ReconcileOptions, ReconcileReport, ReindexReport } from '../types.ts';
import { CallRejected, preloadTrees, unchanged, writeBatch, type BatchOutcome, type BuildTarget, type CommitCall } from './commitBuilder.ts';
import { MainLockWait, RefLocked, RefMoved } from './mainRef.ts';
import { repack, repackDue, type RepackTarget } from './repacker.ts';
import { indexingMarker, indexSlicedCommit, writeSlicedCommit } from './slicedCommit.ts';

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
  onCommitted?: (tip: CommittedTip) => void;
  /** Throws unless this process owns the project now (several workers: its lease, src/cluster/); inside each write transaction. */
  fence?: (projectId: string) => void;
  /**
   * Since when (epoch ms) this process is the only writer of the project: every process that wrote
   * it before is gone (a worker that held its lease, an earlier run). Undefined: not known.
   */
  soleWriterSince?: (projectId: string) => number | undefined;
  /**
   * A cluster node: resolves once a quorum of the project's copies holds `main` and the notes as
   * they are now (`previous`: the refs before the step), or throws; no-op where this node is not
   * the project's primary, except for a `write` (a batch mayWrite admitted): one whose node was
   * deposed since throws. Writes are acknowledged and announced only after it resolved.
   */
  replicate?: (projectId: string, repo: Repo, previous: RefTips, o?: { write?: boolean }) => Promise<void>;
  /** A cluster node: throws unless this node writes the project now (checked before each batch, out of the write transaction). */
  mayWrite?: (projectId: string) => Promise<void>;
}

/** The tips of the refs a step moves (main and the notes), by ref name. */
export type RefTips = Record<string, string | null>;

interface Job extends CommitCall {
  resolve: (r: CommitResult) => void;
  reject: (e: unknown) => void;
}

/** Work that needs the project alone (reconcile, reindex, repack, rewrite, delete, a planned commit). */
interface Task {
  run: () => Promise<unknown>;
  resolve: (r: never) => void;
  reject: (e: unknown) => void;
}

/** One writer per project; writers of idle projects are dropped beyond the LRU bound. */
export class ProjectWriters {
  private readonly lru: Lru<string, ProjectWriter>;
  private readonly busy = new Map<string, ProjectWriter>();
  private gitMissing = false;

  constructor(private readonly deps: WriterDeps) {
    this.lru = new Lru<string, ProjectWriter>(deps.maxCached);
  }

  /** Projects deleted while this process runs: nothing may recreate their repository. */
  private readonly gone = new Set<string>();

  get(projectId: string): ProjectWriter {
    if (this.gone.has(projectId)) throw new NotFoundError('project not found', { project_id: projectId });
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

  markGone(projectId: string): void {
    this.gone.add(projectId);
    this.lru.delete(projectId);
  }

  /** A project created (again) under this id may be written. */
  revive(projectId: string): void {
    this.gone.delete(projectId);
  }

  /** Throws unless the project may take new data (not deleted, not being deleted). */
  assertWritable(projectId: string): void {
    const w = this.get(projectId);
    if (w.closing) throw w.closingError();
  }

  /** The git binary to run, null when there is none (or it turned out to be missing). */
  usableGit(): string | null {
    return this.gitMissing ? null : this.deps.gitBinary;
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
 * compare-and-swap of `main`, one SQLite transaction, then every call is answered (the commits
 * are built in commitBuilder.ts, a large bulk write alone and in time slices in slicedCommit.ts).
 * A call that fails validation fails alone (its savepoint and tree edits are reverted).
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
  /** Set when deletion was asked for: calls queued before it still run, new ones are refused. */
  closing = false;
  private destroying: Promise<void> | null = null;

  constructor(
    readonly projectId: string,
    private readonly deps: WriterDeps,
    private readonly owner: ProjectWriters,
  ) {
    this.repo = deps.repos.get(projectId);
  }

  closingError(): ConflictError {
    return new ConflictError('the project is being deleted', { project_id: this.projectId });
  }

  submit(call: CommitCall): Promise<CommitResult> {
    if (this.closing) return Promise.reject(this.closingError());
    if (call.mutations.some((m) => m.op === 'rollbackProject') && call.mutations.length > 1) {
      return Promise.reject(new ValidationError('a project rollback must be the only mutation of its commit'));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ ...call, resolve, reject });
      this.kick();
    });
  }

  /** Indexes the commits on main beyond the last indexed one (pushed history). */
  reconcile(options: ReconcileOptions = {}): Promise<ReconcileReport> {
    return this.exclusive(() => this.reconcileLocked(options));
  }

  reindex(): Promise<ReindexReport> {
    return this.exclusive(async () => {
      this.work = null;
      const report = await rebuildIndex(this.reconcileDeps());
      await unlink(indexingMarker(this.repo)).catch(() => {});
      return report;
    });
  }

  repack(): Promise<boolean> {
    return this.exclusive(() => repack(this.repackTarget()));
  }

  /**
   * One call planned against the current tip inside the project's serialized section (the merge
   * of a push to refs/for/main): `plan(tip)` returns it (null: nothing to commit). Should main
   * move before it is written (a direct push), it is planned again on the new tip.
   */
  submitPlanned(plan: (tip: string | null) => Promise<CommitCall | null>): Promise<CommitResult | null> {
    return this.exclusive(async () => {
      for (let attempt = 0; ; attempt++) {
        await this.ready();
        const planned = this.head;
        const call = await plan(planned);
        if (!call) return null;
        const stale = new Error('main moved while the merge was planned');
        let result: CommitResult | null = null;
        let error: unknown = null;
        const guard = () => {
          if ((this.deps.index.indexState(this.projectId)?.headCommit ?? null) !== planned) throw stale;
          call.guard?.();
        };
        await this.runBatch([{ ...call, guard, resolve: (r) => (result = r), reject: (e) => (error = e ?? stale) }]);
        if (error === stale && attempt < 5) continue;
        if (error) throw error;
        return result;
      }
    });
  }

  /**
   * Runs a history rewrite (a purge) with the project's writes held: the index is brought up to
   * main first, `work` rewrites the repository, then the index is rebuilt from the new history.
   */
  rewrite<T>(work: (repo: Repo, gitBinary: string | null) => Promise<T>): Promise<{ result: T; report: ReindexReport }> {
    // A rewrite would reach the other copies only as a diverged history whose old tail they keep: refused until it replicates as a command.
    if (this.deps.replicate) return Promise.reject(new ConflictError('Purging history is not available on a node of a cluster in this version: the other copies would keep what it removes.', { project_id: this.projectId }));
    return this.exclusive(async () => {
      await this.reconcileLocked();
      this.work = null;
      this.head = null;
      try {
        const result = await work(this.repo, this.owner.usableGit());
        this.repo.dropCache();
        const report = await rebuildIndex(this.reconcileDeps());
        this.notify();
        return { result, report };
      } finally {
        this.work = null;
        this.head = null;
      }
    });
  }

  /**
   * Deletes the project: calls queued before this one finish (they were accepted), later ones are
   * refused (409 while it runs, 404 after). Then the index rows go in one transaction and the
   * repository leaves its name in one rename (to a dot folder nothing lists), so no reader or
   * `cns reindex` ever sees half a project; the renamed folder is removed last, and if that
   * fails (a process still writing into it) it is only a hidden leftover, swept next time.
   */
  destroy(): Promise<void> {
    if (this.destroying) return this.destroying;
    const run = this.exclusive(async () => {
      this.work = null;
      this.head = null;
      this.deps.db.transaction(() => {
        this.fence();
        this.deps.index.deleteProject(this.projectId);
      }).immediate();
      const gitdir = this.repo.gitdir;
      const doomed = join(dirname(gitdir), `.deleted-${this.projectId}-${randomBytes(4).toString('hex')}`);
      let moved = true;
      try {
        await rename(gitdir, doomed);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        moved = false;
      }
      this.repo.forgetDisk();
      this.deps.repos.forget(this.projectId);
      this.owner.markGone(this.projectId);
      // Only now: while it runs, ProjectWriters keeps handing out this (closing) writer.
      this.destroyed = true;
      if (moved) {
        await rm(doomed, { recursive: true, force: true, maxRetries: 5 }).catch((err: unknown) => {
          this.deps.logger?.warn({ err, projectId: this.projectId, folder: doomed }, 'could not remove the deleted repository yet');
        });
      }
    });
    this.closing = true;
    this.destroying = run.catch((e: unknown) => {
      // The repository could not be moved away: the project stays writable and deletion can be retried.
      this.closing = false;
      this.destroying = null;
      throw e;
    });
    return this.destroying;
  }

  /**
   * Runs `run` between batches, with this writer's repository: every write queued before it is
   * done (acknowledged or refused), and none queued after it starts until it ends. A cluster's
   * planned switchover holds the primary's writes this way while another copy takes over.
   */
  hold<T>(run: (repo: Repo) => Promise<T>): Promise<T> {
    return this.exclusive(() => run(this.repo));
  }

  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private exclusive<T>(run: () => Promise<T>): Promise<T> {
    if (this.closing) return Promise.reject(this.closingError());
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
      if (isLargeJob(first)) {
        this.queue.shift();
        await this.runLarge(first);
        await this.maybeRepack();
        continue;
      }
      const jobs: Job[] = [];
      while (jobs.length < this.deps.maxBatchCommits && this.queue.length > 0 && !('run' in this.queue[0]) && !isLargeJob(this.queue[0])) {
        jobs.push(this.queue.shift() as Job);
      }
      await this.runBatch(jobs);
      await this.maybeRepack();
      // Let requests that arrived meanwhile join the next batch.
      await new Promise((r) => setImmediate(r));
    }
  }

  private async runBatch(jobs: Job[]): Promise<void> {
    // Outside a cluster no await is added: the default path keeps its timing exactly.
    if (this.deps.mayWrite && !(await this.writable(jobs))) return;
    let pending = jobs;
    const lock = new MainLockWait(this.repo, this.projectId, this.deps.logger, this.deps.soleWriterSince?.(this.projectId));
    let toLoad: Tree[] = [];
    while (pending.length > 0) {
      let outcome: BatchOutcome<Job>;
      let prepared: RefUpdate | null = null;
      let files: PackFiles | null = null;
      let previous: RefTips = {};
      try {
        await this.ready();
        previous = this.tips();
        // Created before the database's write lock is taken, so that the lock is held for less.
        files = this.repo.openPackFiles();
        const target = { ...this.target(), packFiles: files };
        await preloadTrees(target, pending, toLoad);
        outcome = await writeTurn(this.deps.db, () => {
          const o = writeBatch(target, pending);
          prepared = o.mainUpdate;
          return o;
        });
        // The index has committed the batch: main moves now, out of the write lock.
        outcome.mainUpdate?.publish();
      } catch (e) {
        (prepared as RefUpdate | null)?.release();
        this.work = null;
        if (e instanceof RefMoved) continue;
        if (e instanceof RefLocked) {
          if (await lock.wait()) continue;
          for (const j of pending) j.reject(lock.gaveUp());
          return;
        }
        this.deps.logger?.error({ err: e, projectId: this.projectId }, 'content batch failed');
        for (const j of pending) j.reject(e);
        return;
      } finally {
        files?.discard();
      }
      const moved = outcome.head !== this.head;
      this.head = outcome.head;
      const replication = moved && this.deps.replicate ? await this.replicated(previous, true) : null;
      for (const [job, result] of outcome.done) if (replication) job.reject(replication);
      else job.resolve(result);
      for (const [job, err] of outcome.failed) job.reject(err);
      if (moved && !replication) this.notify();
      pending = outcome.deferred;
      toLoad = outcome.toLoad;
    }
  }

  /**
   * One call of thousands of writes (a bulk write) as one commit, without holding the event loop
   * (slicedCommit.ts): it is planned in memory, hashed and written as a pack in time slices, and
   * `main` moves by compare-and-swap; only then is the index written, in short transactions
   * between which other requests run. Until the last of them the project's index state still names
   * the previous head and a marker file names the commit: after a crash in between, ready()
   * rebuilds the project's index from git (git is the source of truth). Other writes of the
   * project wait in the queue meanwhile; readers may see the commit's nodes appear before it is
   * acknowledged.
   */
  private async runLarge(job: Job): Promise<void> {
    if (this.deps.mayWrite && !(await this.writable([job]))) return;
    const lock = new MainLockWait(this.repo, this.projectId, this.deps.logger, this.deps.soleWriterSince?.(this.projectId));
    for (;;) {
      const slice = new TimeSlice();
      try {
        await this.ready();
        const previous = this.tips();
        const written = await writeSlicedCommit(this.target(), job, slice);
        if (!written) {
          job.resolve(unchanged());
          return;
        }
        this.head = written.commitId;
        // main has the commit: the index catches up in short transactions.
        const result = await indexSlicedCommit(this.target(), written, slice);
        const replication = this.deps.replicate ? await this.replicated(previous, true) : null;
        if (replication) return job.reject(replication);
        job.resolve(result);
        this.notify();
        return;
      } catch (e) {
        if (e instanceof CallRejected) {
          job.reject(e.reason);
          return;
        }
        this.work = null;
        if (e instanceof RefMoved) continue;
        if (e instanceof RefLocked) {
          if (await lock.wait()) continue;
          job.reject(lock.gaveUp());
          return;
        }
        this.deps.logger?.error({ err: e, projectId: this.projectId }, 'large commit failed');
        job.reject(e);
        return;
      }
    }
  }

  /** A large commit was interrupted while being indexed: rebuild the project's index from git. */
  private async recoverInterruptedIndexing(): Promise<void> {
    if (!existsSync(indexingMarker(this.repo))) return;
    this.deps.logger?.warn({ projectId: this.projectId }, 'a large commit was not fully indexed: rebuilding the index from git');
    this.work = null;
    await rebuildIndex(this.reconcileDeps());
    await unlink(indexingMarker(this.repo)).catch(() => {});
    this.notify();
  }

  /** Loads the index up to the tip of `main` (pushed commits) and the in-memory tree of that tip. */
  private async ready(): Promise<void> {
    await this.recoverInterruptedIndexing();
    const indexed = this.deps.index.indexState(this.projectId)?.headCommit ?? null;
    let tip = this.repo.readMain();
    if (indexed && tip !== indexed && rollForwardMain(this.repo.gitdir, indexed)) {
      // A writer (a worker killed, a crash) committed this batch's index and died before main moved.
      this.deps.logger?.warn({ projectId: this.projectId, commit: indexed }, 'completed a move of main that a stopped writer had prepared');
      tip = indexed;
    }
    if (tip !== indexed) {
      await this.reconcileLocked();
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

  /** What the commit builders work on (after ready()). */
  private target(): BuildTarget {
    return { projectId: this.projectId, db: this.deps.db, index: this.deps.index, repo: this.repo, work: this.work!, head: this.head, fence: () => this.fence() };
  }

  private async reconcileLocked(options: ReconcileOptions = {}): Promise<ReconcileReport> {
    await this.recoverInterruptedIndexing();
    const previous: RefTips = { ...this.tips(), [MAIN_REF]: this.deps.index.indexState(this.projectId)?.headCommit ?? null };
    const report = await reconcile(this.reconcileDeps(), options);
    if (report.indexedCommits > 0) {
      this.work = null;
      // A push (or a repair) moved main: acknowledged like a write, once a quorum holds it.
      const replication = this.deps.replicate ? await this.replicated(previous, options.pushed === true) : null;
      if (replication) throw replication;
      this.notify(options.followed === true);
    }
    return report;
  }

  /** False (the jobs refused) when this node may not write the project now. */
  private async writable(jobs: Job[]): Promise<boolean> {
    if (!this.deps.mayWrite) return true;
    try {
      await this.deps.mayWrite(this.projectId);
      return true;
    } catch (err) {
      for (const j of jobs) j.reject(err);
      return false;
    }
  }

  /** The refs a step moves, as they are now. */
  private tips(): RefTips {
    return { [MAIN_REF]: this.repo.readMain(), [NOTES_REF]: this.repo.exists() ? readRef(this.repo.gitdir, NOTES_REF) : null };
  }

  /** Null once a quorum of copies holds the step (or outside a cluster); the error to answer otherwise. `write`: a batch admitted by mayWrite. */
  private async replicated(previous: RefTips, write = false): Promise<unknown> {
    if (!this.deps.replicate) return null;
    try {
      await this.deps.replicate(this.projectId, this.repo, previous, { write });
      return null;
    } catch (err) {
      return err;
    }
  }

  private fence(): void {
    this.deps.fence?.(this.projectId);
  }

  /** A listener's failure must not fail writes that are already done. */
  private notify(followed = false): void {
    try {
      const state = this.deps.index.indexState(this.projectId);
      this.deps.onCommitted?.({ projectId: this.projectId, commitId: state?.headCommit ?? null, projectVersion: state?.projectVersion ?? 0, ...(followed && { followed }) });
    } catch (err) {
      this.deps.logger?.warn({ err, projectId: this.projectId }, 'a commit listener failed');
    }
  }

  private reconcileDeps(): ReconcileDeps {
    return {
      projectId: this.projectId,
      db: this.deps.db,
      index: this.deps.index,
      repo: this.repo,
      logger: this.deps.logger,
      // History is read in bulk with the system git when there is one (isomorphic-git otherwise).
      gitBinary: this.owner.usableGit(),
      onGitMissing: () => this.owner.noteGitMissing(),
      pushes: this.deps.pushes,
      fence: () => this.fence(),
    };
  }

  private repackTarget(): RepackTarget {
    return {
      projectId: this.projectId,
      db: this.deps.db,
      index: this.deps.index,
      repo: this.repo,
      git: this.owner.usableGit(),
      onGitMissing: () => this.owner.noteGitMissing(),
      logger: this.deps.logger,
    };
  }

  /** `git repack -a -d` after `repackEvery` commits, while this writer holds the project. */
  private async maybeRepack(): Promise<void> {
    const target = this.repackTarget();
    if (repackDue(target, this.deps.repackEvery)) await repack(target);
  }
}

/** A bulk write big enough for the sliced path (runLarge); calls with a guard or trailers keep the batch path. */
function isLargeJob(job: Job): boolean {
  return !job.guard && !job.trailers && isLargeCommit(job.mutations);
}
