import type { Logger } from '../../logging/logger.ts';
import { taskError, TaskFailure } from './taskFailure.ts';
import type { RunControl } from './taskRunner.ts';
import type { TaskStore } from './taskStore.ts';
import type { TaskRecord, TaskResult } from './taskTypes.ts';
import type { IngestTemp } from './tempFiles.ts';

export interface IngestQueueDeps {
  store: TaskStore;
  temp: IngestTemp;
  /** Tasks running at once. */
  workers: number;
  execute(task: TaskRecord, run: RunControl): Promise<TaskResult>;
  logger?: Logger;
  /**
   * Several workers (issue 29): whether this process runs the project's tasks (it owns the
   * project, or takes it now). Absent: every project's, as the one process.
   */
  adopt?: (projectId: string) => boolean;
  /**
   * Whether start-up recovers what a stop left (tasks left running are queued again, temporary
   * files swept): only when no other process can be running tasks. Default true.
   */
  recover?: boolean;
  /** Looks for tasks queued by other processes this often (several workers); absent: never. */
  pollMs?: number;
}

/** The abort reason of tasks stopped because the service stops: they run again after the restart. */
const SHUTDOWN = new Error('the service is stopping');
/** The abort reason of a task stopped to give its worker to another project: it is queued again. */
const PREEMPTED = new Error('a worker was given to another project');

interface Running {
  projectId: string;
  controller: AbortController;
  done: Promise<void>;
}

/**
 * The durable queue of ingestion tasks. Tasks live in SQLite (TaskStore); up to `workers` run at
 * once, taken in submission order with projects taking turns, the project with the fewest
 * running tasks first. No project holds every worker while another waits (see `makeRoom`).
 * A cancelled queued task never
 * runs; a cancelled running task is aborted (its conversion process killed, its fetches ended)
 * and writes nothing: its commit checks the task's status inside the content store's write
 * section, where the cancel's status change and the commit cannot interleave. A task marked
 * succeeded in that same section is durable with its content. After a restart, tasks that were
 * running are queued again and start from the beginning (nothing of them was committed).
 */
export class IngestQueue {
  /** By task id, in the order they started. */
  private readonly running = new Map<string, Running>();
  private lastProject: string | null = null;
  private closed = false;
  private poll: NodeJS.Timeout | null = null;
  private readonly finishedListeners = new Set<(task: TaskRecord) => void>();

  constructor(private readonly d: IngestQueueDeps) {}

  /** Told about every task that ended (succeeded, failed or cancelled), as stored; returns the removal. */
  onFinished(fn: (task: TaskRecord) => void): () => void {
    this.finishedListeners.add(fn);
    return () => this.finishedListeners.delete(fn);
  }

  private finished(id: string): void {
    const task = this.d.store.find(id);
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
   * running); each clears its own uploads folder and looks for tasks queued elsewhere every `pollMs`.
   */
  start(): void {
    if (this.d.recover !== false) {
      const requeued = this.d.store.requeueRunning();
      if (requeued > 0) this.d.logger?.info({ tasks: requeued }, 'ingest tasks interrupted by a stop were queued again');
      this.d.temp.sweep(this.d.store.idsWithStatus('queued'));
    } else this.d.temp.sweepOwnUploads();
    if (this.d.pollMs) {
      this.poll = setInterval(() => this.pump(), this.d.pollMs);
      this.poll.unref();
    }
    this.pump();
  }

  /** New tasks were queued, or a worker is free. */
  pump(): void {
    // Several workers: only projects this process runs; nothing queued costs one read, no write.
    const only = this.d.adopt && !this.closed && this.running.size < this.d.workers ? new Set(this.queuedHere()) : undefined;
    while (!this.closed && this.running.size < this.d.workers && (!only || only.size > 0)) {
      const task = this.d.store.claimNext(this.lastProject, this.perProject(false), only);
      if (!task) break;
      this.lastProject = task.project_id;
      this.run(task);
    }
    if (!this.closed) this.makeRoom();
  }

  /**
   * No project holds every worker while another waits: when every worker is busy and projects
   * with queued tasks have none running, the project holding the most workers (two at least)
   * gives one back for each: its most recently started task is stopped (its conversion
   * process killed) and queued again, to start over later, as after a restart. A project's
   * oldest running task is never stopped, so each keeps making progress; a bomb holding a
   * worker is bounded by the conversion time limit.
   */
  private makeRoom(): void {
    if (this.running.size < this.d.workers) return;
    const holding = this.perProject(true);
    const freeing = this.running.size - [...holding.values()].reduce((a, b) => a + b, 0);
    let waiting = this.queuedHere().filter((p) => !holding.has(p)).length - freeing;
    while (waiting-- > 0) {
      const [project, held] = [...holding].reduce((a, b) => (b[1] > a[1] ? b : a), ['', 0]);
      if (held < 2) return;
      const [id, victim] = [...this.running].reverse().find(([, r]) => r.projectId === project && !r.controller.signal.aborted)!;
      this.d.logger?.info({ task: id, project }, 'ingest task queued again: its worker goes to a project that was waiting');
      victim.controller.abort(PREEMPTED);
      holding.set(project, held - 1);
    }
  }

  /** Projects with queued tasks that this process runs. */
  private queuedHere(): string[] {
    const queued = this.d.store.queuedProjects();
    const adopt = this.d.adopt;
    return adopt ? queued.filter((p) => adopt(p)) : queued;
  }

  /** Running tasks by project; `live`: only those not being stopped. */
  private perProject(live: boolean): Map<string, number> {
    const out = new Map<string, number>();
    for (const r of this.running.values()) if (!live || !r.controller.signal.aborted) out.set(r.projectId, (out.get(r.projectId) ?? 0) + 1);
    return out;
  }

  /**
   * Cancels a queued or running task; false when it had already finished. A running task is
   * aborted; `settled` tells when it has stopped.
   */
  async cancel(id: string): Promise<boolean> {
    if (!this.d.store.transition(id, ['queued', 'running'], 'cancelled', { error: { code: 'cancelled', message: 'the task was cancelled' } })) return false;
    const r = this.running.get(id);
    if (r) r.controller.abort(new TaskFailure('cancelled', 'the task was cancelled'));
    else {
      this.finished(id);
      await this.d.temp.removeTask(id);
    }
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
    const all = [...this.running.values()];
    for (const r of all) r.controller.abort(SHUTDOWN);
    await Promise.all(all.map((r) => r.done));
  }

  private run(task: TaskRecord): void {
    const controller = new AbortController();
    const { signal } = controller;
    let recorded = false;
    const control: RunControl = {
      signal,
      progress: (p) => this.d.store.setProgress(task.id, p),
      claimSuccess: () => {
        if (!this.d.store.transition(task.id, 'running', 'succeeded')) throw new TaskFailure('cancelled', 'the task was cancelled');
      },
      // With the commit, in its transaction: nobody reads the task succeeded without its result.
      recordResult: (result) => {
        this.d.store.setResult(task.id, result);
        recorded = true;
      },
    };
    let requeued = false;
    const done = this.d
      .execute(task, control)
      .then((result) => {
        // A task that wrote nothing never reached claimSuccess: status and result in one statement.
        if (!recorded) this.d.store.succeed(task.id, result);
      })
      .catch((e: unknown) => {
        if (signal.aborted && (signal.reason === SHUTDOWN || signal.reason === PREEMPTED)) requeued = this.d.store.transition(task.id, 'running', 'queued');
        // Cancelled: the cancel set the status.
        else if (signal.aborted) return;
        else {
          const error = taskError(e);
          if (error.code === 'internal') this.d.logger?.error({ err: e, task: task.id }, 'ingest task failed');
          this.d.store.transition(task.id, 'running', 'failed', { error });
        }
      })
      .finally(async () => {
        this.running.delete(task.id);
        if (!requeued) this.finished(task.id);
        // A task queued again keeps its files (its upload) for when it runs again.
        if (!requeued) await this.d.temp.removeTask(task.id);
        this.pump();
      });
    this.running.set(task.id, { projectId: task.project_id, controller, done });
  }
}
