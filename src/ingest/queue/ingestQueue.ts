import type { Logger } from '../../logging/logger.ts';
import { taskError, TaskFailure } from './taskFailure.ts';
import type { RunControl } from './taskRunner.ts';
import type { TaskStore } from './taskStore.ts';
import type { TaskRecord, TaskResult } from './taskTypes.ts';
import type { IngestTemp } from './tempFiles.ts';
import type { Progress } from '../converters/converter.ts';

export interface IngestQueueDeps {
  store: TaskStore;
  temp: IngestTemp;
  /** Tasks running at once. */
  workers: number;
  execute(task: TaskRecord, run: RunControl): Promise<TaskResult>;
  /**
   * What a task left running by a stop had committed: its result read from its commit (the
   * commit names the task), or null when it made none. Absent: none ever did.
   */
  committed?: (task: TaskRecord) => Promise<TaskResult | null>;
  logger?: Logger;
  /**
   * Several workers (issue 29): whether this process runs the project's tasks (it owns the
   * project, or takes it now). Absent: every project's, as the one process.
   */
  adopt?: (projectId: string) => boolean;
  /**
   * Whether start-up recovers what a stop left (tasks left running are finished from their
   * commit or queued again, temporary files swept): only when no other process can be running
   * tasks. Default true.
   */
  recover?: boolean;
  /** Looks for tasks queued by other processes (and running tasks cancelled there) this often (several workers); absent: never. */
  pollMs?: number;
}

/** The abort reason of tasks stopped because the service stops: they run again after the restart. */
const SHUTDOWN = new Error('the service is stopping');
/** The abort reason of a task stopped to give its worker to another project: it is queued again. */
const PREEMPTED = new Error('a worker was given to another project');
const CANCELLED = { code: 'cancelled', message: 'the task was cancelled' };

interface Running {
  projectId: string;
  controller: AbortController;
  done: Promise<void>;
}

/**
 * The durable queue of ingestion tasks. Tasks live in the metadata store (TaskStore); up to
 * `workers` run at once, taken in submission order with projects taking turns, the project with
 * the fewest running tasks first. No project holds every worker while another waits (see
 * `makeRoom`). A cancelled queued task never runs; a cancelled running task is aborted (its
 * conversion process killed, its fetches ended) and writes nothing: the check right before its
 * commit refuses once the task is aborted, and the cancel answers after the run has recorded its outcome (a
 * task whose commit was already made has succeeded). A task's commit names it (a trailer); after
 * the commit one compare-and-set records success and result together. After a restart, a task
 * left running whose commit is in the project's history succeeds with the result read from it;
 * the others are queued again and start from the beginning (nothing of them was committed).
 */
export class IngestQueue {
  /** By task id, in the order they started. */
  private readonly running = new Map<string, Running>();
  private lastProject: string | null = null;
  private closed = false;
  private poll: NodeJS.Timeout | null = null;
  private readonly finishedListeners = new Set<(task: TaskRecord) => void>();
  private starting: Promise<void> | null = null;
  /** One look at the queue at a time (claims are awaited); a pump asked for meanwhile runs after it. */
  private pumping: Promise<void> | null = null;
  private pumpAgain = false;

  constructor(private readonly d: IngestQueueDeps) {}

  /** Told about every task that ended (succeeded, failed or cancelled), as stored; returns the removal. */
  onFinished(fn: (task: TaskRecord) => void): () => void {
    this.finishedListeners.add(fn);
    return () => this.finishedListeners.delete(fn);
  }

  private async finished(id: string): Promise<void> {
    const task = await this.d.store.find(id);
    if (!task || (task.status !== 'succeeded' && task.status !== 'failed' && task.status !== 'cancelled')) return;
    for (const fn of this.finishedListeners) {
      try {
        fn(task);
      } catch (err) {
        this.d.logger?.warn({ err, task: id }, 'an ingest task listener failed');
      }
    }
  }

  /**
   * Start-up: recover what a stop interrupted, clear temporary files of finished tasks, start
   * working. Among several workers only the first of the box recovers (the others' tasks may be
   * running); each clears its own uploads folder and looks for tasks queued elsewhere every
   * `pollMs`. Submissions wait for `ready()` before they place their files.
   */
  start(): Promise<void> {
    // No request is being read yet: the uploads folders go now, before any await.
    if (this.d.recover !== false) this.d.temp.sweepUploads();
    else this.d.temp.sweepOwnUploads();
    this.starting = (async () => {
      if (this.d.recover !== false) {
        try {
          await this.recover();
          this.d.temp.sweepTasks(await this.d.store.idsWithStatus('queued'));
        } catch (err) {
          // The queue works on; what was not recovered is at the next start.
          this.d.logger?.error({ err }, 'ingestion could not recover the tasks a stop left');
        }
      }
      if (this.closed) return;
      if (this.d.pollMs) {
        this.poll = setInterval(() => {
          this.pump();
          void this.abortCancelledElsewhere();
        }, this.d.pollMs);
        this.poll.unref();
      }
      this.pump();
    })();
    return this.starting;
  }

  /** Resolves once start-up's recovery is done (at once before start). */
  async ready(): Promise<void> {
    await this.starting?.catch(() => {});
  }

  /**
   * Tasks left running by a stop: finished from their commit when they made one, else queued
   * again. In a cluster, this node's only (TaskStore.running): other nodes' may be going on.
   */
  private async recover(): Promise<void> {
    let requeued = 0;
    for (const task of await this.d.store.running()) {
      const result = (await this.d.committed?.(task)) ?? null;
      if (result) {
        if (await this.d.store.succeed(task.id, result)) {
          this.d.logger?.info({ task: task.id }, 'an ingest task interrupted after its commit succeeded with the result read from the commit');
          await this.finished(task.id);
        }
      } else if (await this.d.store.transition(task.id, 'running', 'queued')) requeued++;
    }
    if (requeued > 0) this.d.logger?.info({ tasks: requeued }, 'ingest tasks interrupted by a stop were queued again');
  }

  /** New tasks were queued, or a worker is free. */
  pump(): void {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.pumpOnce()
      .catch((err: unknown) => this.d.logger?.error({ err }, 'the ingest queue could not take tasks'))
      .finally(() => {
        this.pumping = null;
        if (this.pumpAgain && !this.closed) {
          this.pumpAgain = false;
          this.pump();
        }
      });
  }

  private async pumpOnce(): Promise<void> {
    // Several workers: only projects this process runs; nothing queued costs one read, no write.
    const only = this.d.adopt && !this.closed && this.running.size < this.d.workers ? new Set(await this.queuedHere()) : undefined;
    while (!this.closed && this.running.size < this.d.workers && (!only || only.size > 0)) {
      const task = await this.d.store.claimNext(this.lastProject, this.perProject(false), only);
      if (!task) break;
      if (this.closed) {
        // Stopped while claiming: the task runs after the restart.
        await this.d.store.transition(task.id, 'running', 'queued');
        break;
      }
      this.lastProject = task.project_id;
      this.run(task);
    }
    if (!this.closed) await this.makeRoom();
  }

  /**
   * No project holds every worker while another waits: when every worker is busy and projects
   * with queued tasks have none running, the project holding the most workers (two at least)
   * gives one back for each: its most recently started task is stopped (its conversion
   * process killed) and queued again, to start over later, as after a restart. A project's
   * oldest running task is never stopped, so each keeps making progress; a bomb holding a
   * worker is bounded by the conversion time limit.
   */
  private async makeRoom(): Promise<void> {
    if (this.running.size < this.d.workers) return;
    const queued = await this.queuedHere();
    const holding = this.perProject(true);
    const freeing = this.running.size - [...holding.values()].reduce((a, b) => a + b, 0);
    let waiting = queued.filter((p) => !holding.has(p)).length - freeing;
    while (waiting-- > 0) {
      const [project, held] = [...holding].reduce((a, b) => (b[1] > a[1] ? b : a), ['', 0]);
      if (held < 2) return;
      const victim = [...this.running].reverse().find(([, r]) => r.projectId === project && !r.controller.signal.aborted);
      if (!victim) return;
      const [id, r] = victim;
      this.d.logger?.info({ task: id, project }, 'ingest task queued again: its worker goes to a project that was waiting');
      r.controller.abort(PREEMPTED);
      holding.set(project, held - 1);
    }
  }

  /** Projects with queued tasks that this process runs. */
  private async queuedHere(): Promise<string[]> {
    const queued = await this.d.store.queuedProjects();
    const adopt = this.d.adopt;
    return adopt ? queued.filter((p) => adopt(p)) : queued;
  }

  /** Several workers: a task running here that another process cancelled is stopped (its commit would be refused too). */
  private async abortCancelledElsewhere(): Promise<void> {
    const ids = [...this.running.keys()];
    if (ids.length === 0) return;
    try {
      const statuses = await this.d.store.statusesOf(ids);
      for (const id of ids) {
        const r = this.running.get(id);
        if (r && !r.controller.signal.aborted && statuses.get(id) !== 'running') r.controller.abort(new TaskFailure(CANCELLED.code, CANCELLED.message));
      }
    } catch (err) {
      this.d.logger?.warn({ err }, 'the ingest queue could not read its running tasks');
    }
  }

  /** Running tasks by project; `live`: only those not being stopped. */
  private perProject(live: boolean): Map<string, number> {
    const out = new Map<string, number>();
    for (const r of this.running.values()) if (!live || !r.controller.signal.aborted) out.set(r.projectId, (out.get(r.projectId) ?? 0) + 1);
    return out;
  }

  /**
   * Cancels a queued or running task; false when it had already finished. A task running here is
   * aborted, and this answers once its run has recorded the outcome: cancelled, or succeeded when
   * its commit was made before the abort.
   */
  async cancel(id: string): Promise<boolean> {
    const r = this.running.get(id);
    if (r) {
      r.controller.abort(new TaskFailure(CANCELLED.code, CANCELLED.message));
      await r.done;
      const status = (await this.d.store.find(id))?.status;
      // Queued again: it had been stopped for a restart or another project before this cancel.
      if (status !== 'queued') return status === 'cancelled';
    }
    if (!(await this.d.store.transition(id, ['queued', 'running'], 'cancelled', { error: CANCELLED }))) return false;
    await this.finished(id);
    await this.d.temp.removeTask(id);
    return true;
  }

  /** Resolves when the task is not running (at once when it is not). */
  async settled(id: string): Promise<void> {
    await this.running.get(id)?.done;
  }

  stats(): { running: number; workers: number } {
    return { running: this.running.size, workers: this.d.workers };
  }

  /** Stops taking tasks; running ones are stopped and queued again, for the next start. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
    await this.starting?.catch(() => {});
    await this.pumping;
    const all = [...this.running.values()];
    for (const r of all) r.controller.abort(SHUTDOWN);
    await Promise.all(all.map((r) => r.done));
  }

  private run(task: TaskRecord): void {
    const controller = new AbortController();
    const { signal } = controller;
    const progress = this.progressWriter(task.id);
    const done = (async () => {
      let requeued = false;
      try {
        const result = await this.d.execute(task, { signal, progress: progress.set });
        await progress.idle();
        await this.succeeded(task, result);
      } catch (e) {
        await progress.idle();
        requeued = await this.stopped(task, signal, e);
      } finally {
        this.running.delete(task.id);
        try {
          if (!requeued) await this.finished(task.id);
          // A task queued again keeps its files (its upload) for when it runs again.
          if (!requeued) await this.d.temp.removeTask(task.id);
        } catch (err) {
          this.d.logger?.warn({ err, task: task.id }, 'an ingest task could not be tidied up');
        }
        this.pump();
      }
    })();
    this.running.set(task.id, { projectId: task.project_id, controller, done });
  }

  /**
   * The task's commit is made (or nothing needed one): success and result in one compare-and-set.
   * When the metadata store fails here the task stays running, and the next start finds its commit.
   */
  private async succeeded(task: TaskRecord, result: TaskResult): Promise<void> {
    try {
      if (!(await this.d.store.succeed(task.id, result))) {
        this.d.logger?.warn({ task: task.id }, 'an ingest task was cancelled elsewhere while its commit was made: its content is written, the task stays cancelled');
      }
    } catch (err) {
      this.d.logger?.error({ err, task: task.id }, "an ingest task's commit is made but its success could not be recorded: the next start records it from the commit");
    }
  }

  /** The run ended without a commit: queued again (stop, preemption), cancelled, or failed. True when queued again. */
  private async stopped(task: TaskRecord, signal: AbortSignal, e: unknown): Promise<boolean> {
    try {
      if (signal.aborted && (signal.reason === SHUTDOWN || signal.reason === PREEMPTED)) return await this.d.store.transition(task.id, 'running', 'queued');
      if (signal.aborted) {
        // Cancelled here, or elsewhere (then the status is already set and this changes nothing).
        await this.d.store.transition(task.id, 'running', 'cancelled', { error: CANCELLED });
        return false;
      }
      const error = taskError(e);
      if (error.code === 'internal') this.d.logger?.error({ err: e, task: task.id }, 'ingest task failed');
      await this.d.store.transition(task.id, 'running', 'failed', { error });
    } catch (err) {
      this.d.logger?.error({ err, task: task.id }, "an ingest task's end could not be recorded");
    }
    return false;
  }

  /** A task's progress, written one at a time and only the latest (a burst of pages costs a write or two). */
  private progressWriter(id: string): { set: (p: Progress) => void; idle: () => Promise<void> } {
    let next: Progress | null = null;
    let writing: Promise<void> | null = null;
    const drain = async () => {
      while (next) {
        const p = next;
        next = null;
        await this.d.store.setProgress(id, p).catch((err: unknown) => this.d.logger?.warn({ err, task: id }, "an ingest task's progress could not be written"));
      }
      writing = null;
    };
    return {
      set: (p) => {
        next = p;
        writing ??= drain();
      },
      idle: async () => {
        await writing;
      },
    };
  }
}
