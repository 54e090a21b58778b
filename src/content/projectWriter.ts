import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { rename, rm, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import type { Db } from '../db/database.ts';
import { CommitApplier } from './commitApplier.ts';
import { isLargeCommit, planBulkWrite } from './largeCommit.ts';
import { TimeSlice } from './timeSlice.ts';
import { ConflictError, isContentError, NotFoundError, ValidationError } from './errors.ts';
import { serializeCommit } from './git/commitObject.ts';
import type { ObjectType } from './git/objects.ts';
import { PackBuilder } from './git/packWriter.ts';
import { breakMainLock, mainLockAge } from './git/refs.ts';
import { dropExtraBitmaps } from './git/bitmaps.ts';
import type { Repo, RepoRegistry } from './git/repo.ts';
import { rebuildIndex, reconcile as syncFromGit } from './history/reconcile.ts';
import type { IndexStore } from './indexStore.ts';
import { Lru } from './lru.ts';
import { applyMutation, type MutationContext, type PreparedMutation } from './mutations.ts';
import { parentPath, TRASH_DIR } from './paths.ts';
import { rollbackFolder } from './folderRollback.ts';
import { rollbackProject } from './projectRollback.ts';
import { formatMessage, formatMessageSliced } from './trailers.ts';
import { EMPTY_BLOB, loadTree, NeedsLoad, Tree, WorkTree } from './tree.ts';
import type { PushExpectations } from './pushExpectations.ts';
import type { Actor, CommitResult, NodeInfo, ReconcileOptions as SyncOptions, ReconcileReport as SyncReport, ReindexReport } from './types.ts';

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
  /** CommitOptions.guard: a check (and its writes) inside the call's savepoint. */
  guard?: () => void;
  /** Parents after the tip (a merge commit: the git remote's merge of a push to refs/for/main). */
  extraParents?: string[];
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
/** A call's guard refused it: the call fails alone with `reason`. */
class GuardRejected extends Error {
  constructor(readonly reason: unknown) {
    super('guard rejected the call');
  }
}

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

  submit(job: Omit<Job, 'resolve' | 'reject'>): Promise<CommitResult> {
    if (this.closing) return Promise.reject(this.closingError());
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
      const report = await rebuildIndex(this.syncDeps());
      await unlink(this.indexingMarker()).catch(() => {});
      return report;
    });
  }

  repack(): Promise<boolean> {
    return this.exclusive(() => this.repackLocked());
  }

  /**
   * One call planned against the current tip inside the project's serialized section (the merge
   * of a push to refs/for/main): `plan(tip)` returns it (null: nothing to commit). Should main
   * move before it is written (a direct push), it is planned again on the new tip.
   */
  submitPlanned(plan: (tip: string | null) => Promise<Omit<Job, 'resolve' | 'reject'> | null>): Promise<CommitResult | null> {
    return this.exclusive(async () => {
      for (let attempt = 0; ; attempt++) {
        await this.ready();
        const planned = this.head;
        const job = await plan(planned);
        if (!job) return null;
        const stale = new Error('main moved while the merge was planned');
        let result: CommitResult | null = null;
        let error: unknown = null;
        const guard = () => {
          if ((this.deps.index.indexState(this.projectId)?.headCommit ?? null) !== planned) throw stale;
          job.guard?.();
        };
        await this.runBatch([{ ...job, guard, resolve: (r) => (result = r), reject: (e) => (error = e ?? stale) }]);
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
    return this.exclusive(async () => {
      await this.syncLocked();
      this.work = null;
      this.head = null;
      try {
        const result = await work(this.repo, this.owner.gitAvailable() ? this.deps.gitBinary : null);
        this.repo.dropCache();
        const report = await rebuildIndex(this.syncDeps());
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
      this.deps.db.transaction(() => this.deps.index.deleteProject(this.projectId)).immediate();
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

  /**
   * One call of thousands of writes (a bulk write) as one commit, without holding the event loop:
   * it is planned in memory (index reads only), hashed and written as a pack in time slices, and
   * `main` moves by compare-and-swap; only then is the index written, in short transactions
   * between which other requests run. Until the last of them the project's index state still names
   * the previous head and a marker file names the commit: after a crash in between, ready()
   * rebuilds the project's index from git (git is the source of truth). Other writes of the
   * project wait in the queue meanwhile; readers may see the commit's nodes appear before it is
   * acknowledged.
   */
  private async runLarge(job: Job): Promise<void> {
    let lockedSince = 0;
    for (;;) {
      const slice = new TimeSlice();
      try {
        await this.ready();
        const work = this.work!;
        const before = this.head;
        const st = this.deps.index.indexState(this.projectId);
        const pv = (st?.projectVersion ?? 0) + 1;
        const pack = new PackBuilder();
        work.begin();
        let changes;
        try {
          changes = await planBulkWrite({ projectId: this.projectId, index: this.deps.index, tree: work, repo: this.repo, pack, slice }, job.mutations as never);
        } catch (e) {
          work.revert();
          if (isContentError(e)) {
            job.reject(e);
            return;
          }
          throw e;
        }
        if (changes.length === 0) {
          work.keep();
          job.resolve({ changed: false, commitId: null, projectVersion: null, nodes: [] });
          return;
        }
        const folderHashes: [string, string][] = [];
        const writeObject = (type: ObjectType, content: Buffer) => pack.add(type, content);
        const tree = await work.hashSliced(writeObject, (path, oid) => {
          if (path !== '' && path !== TRASH_DIR) folderHashes.push([path, oid]);
        }, slice);
        const seconds = Math.floor(Date.now() / 1000);
        const message = job.message?.trim() || describe(job.mutations);
        const full = await formatMessageSliced(message, job.actor, changes, () => slice.tick());
        await slice.yield();
        // The header with an empty message ends in the blank line; the message bytes follow.
        const head = serializeCommit({
          tree, parents: [...(before ? [before] : []), ...(job.extraParents ?? [])], authorName: job.actor.author, authorEmail: emailOf(job.actor), time: seconds, message: '',
        });
        const commitId = await pack.addSliced('commit', Buffer.concat([head, full]), slice);
        await slice.yield();
        await this.repo.writePackSliced(pack, slice);
        this.repo.syncObjectDirs();
        await writeFile(this.indexingMarker(), commitId + '\n');
        const cas = this.repo.casMain(before, commitId);
        if (cas !== 'ok') {
          await unlink(this.indexingMarker()).catch(() => {});
          throw cas === 'moved' ? new RefMoved() : new RefLocked();
        }
        work.keep();
        this.head = commitId;
        // main has the commit: the index catches up in short transactions.
        const applier = new CommitApplier(this.deps.index, {
          projectId: this.projectId, projectVersion: pv, actor: job.actor, message, time: new Date(seconds * 1000).toISOString(),
        });
        const { index } = this.deps;
        const projectId = this.projectId;
        const steps = (function* () {
          for (const c of changes) yield () => applier.apply(c);
          for (const [path, oid] of folderHashes) yield () => { index.setFolderHash(projectId, path, oid); };
          const fin = applier.finalizeSteps(commitId);
          for (;;) {
            let done = false;
            yield () => { done = fin.next().done === true; };
            if (done) return;
          }
        })();
        let finished = false;
        while (!finished) {
          this.deps.db.transaction(() => {
            while (!slice.due()) {
              const step = steps.next();
              if (step.done) {
                finished = true;
                this.deps.index.setIndexState(this.projectId, {
                  headCommit: commitId, projectVersion: pv, commitsSinceRepack: (st?.commitsSinceRepack ?? 0) + 1,
                });
                return;
              }
              step.value();
            }
          }).immediate();
          await slice.yield();
        }
        await unlink(this.indexingMarker()).catch(() => {});
        const nodes: NodeInfo[] = [];
        for (const c of changes) {
          await slice.tick();
          const n = this.deps.index.nodeById(this.projectId, c.id);
          if (n) nodes.push(n);
        }
        job.resolve({ changed: true, commitId, projectVersion: pv, nodes });
        this.notify();
        return;
      } catch (e) {
        this.work = null;
        if (e instanceof RefMoved) continue;
        if (e instanceof RefLocked) {
          lockedSince ||= Date.now();
          if ((mainLockAge(this.repo.gitdir) ?? 0) > STALE_LOCK_MS) breakMainLock(this.repo.gitdir);
          else if (Date.now() - lockedSince > 2 * STALE_LOCK_MS) {
            job.reject(new Error('refs/heads/main stays locked by another process'));
            return;
          }
          await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
          continue;
        }
        this.deps.logger?.error({ err: e, projectId: this.projectId }, 'large commit failed');
        job.reject(e);
        return;
      }
    }
  }

  /** Present while a large commit is on main but not fully indexed (see runLarge). */
  private indexingMarker(): string {
    return join(this.repo.gitdir, 'cns-indexing');
  }

  /** A large commit was interrupted while being indexed: rebuild the project's index from git. */
  private async recoverInterruptedIndexing(): Promise<void> {
    if (!existsSync(this.indexingMarker())) return;
    this.deps.logger?.warn({ projectId: this.projectId }, 'a large commit was not fully indexed: rebuilding the index from git');
    this.work = null;
    await rebuildIndex(this.syncDeps());
    await unlink(this.indexingMarker()).catch(() => {});
    this.notify();
  }

  /** Loads the index up to the tip of `main` (pushed commits) and the in-memory tree of that tip. */
  private async ready(): Promise<void> {
    await this.recoverInterruptedIndexing();
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
        } else if (m.op === 'rollbackNode') {
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
        } else if (e instanceof GuardRejected) {
          out.failed.push([job, e.reason]);
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
    if (job.guard) {
      try {
        job.guard();
      } catch (e) {
        throw new GuardRejected(e);
      }
    }
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
        parents: [...(parent ? [parent] : []), ...(job.extraParents ?? [])],
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
    await this.recoverInterruptedIndexing();
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
    dropExtraBitmaps(this.repo.gitdir);
    const st = this.deps.index.indexState(this.projectId);
    if (st) this.deps.db.transaction(() => this.deps.index.setIndexState(this.projectId, { ...st, commitsSinceRepack: 0 })).immediate();
    return true;
  }
}

/** A bulk write big enough for the sliced path (runLarge); calls with a guard keep the batch path. */
function isLargeJob(job: Job): boolean {
  return !job.guard && isLargeCommit(job.mutations);
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
    case 'rollbackNode':
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
