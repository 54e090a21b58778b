import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { Db } from './database.ts';

export interface CheckpointStats {
  runs: number;
  /** Frames in the WAL and frames copied into the database at the last run. */
  lastLog: number;
  lastCheckpointed: number;
  lastError: string | null;
}

/**
 * Moves SQLite's WAL checkpoints off the event loop. By default the connection that commits
 * past 1,000 WAL pages runs the checkpoint itself, copying pages and syncing files inside that
 * commit: tens to hundreds of milliseconds during a 100,000-file write, each time. Here the
 * service's connection never checkpoints (`wal_autocheckpoint = 0`); a worker thread with its
 * own connection runs PASSIVE checkpoints (they never block readers or the writer) once no
 * commit was seen for `idleMs`, and every `busyEveryMs` while commits keep coming;
 * `journal_size_limit` cuts a WAL file that grew back down. If the worker cannot
 * start, automatic checkpoints are switched back on. `thread: false` (a worker that does not run
 * the box's duties, issue 29) starts none: `running` is false, `now` and `stop` do nothing.
 */
export class Checkpointer {
  private worker: Worker | null;
  private readonly stats: CheckpointStats = { runs: 0, lastLog: 0, lastCheckpointed: 0, lastError: null };
  private readonly waiters: (() => void)[] = [];

  constructor(
    private readonly db: Db,
    file: string,
    options: { fsync?: boolean; pollMs?: number; idleMs?: number; busyEveryMs?: number; logger?: Logger; thread?: boolean } = {},
  ) {
    let worker: Worker | null = null;
    // No thread (another worker of the box runs it): SQLite keeps checkpointing on its own, so the
    // WAL stays bounded whatever happens to that worker.
    if (options.thread === false) {
      this.worker = null;
      return;
    }
    try {
      worker = new Worker(new URL('./checkpointWorker.mjs', import.meta.url), {
        workerData: {
          file,
          fsync: options.fsync === true,
          pollMs: options.pollMs ?? 200,
          idleMs: options.idleMs ?? 250,
          busyEveryMs: options.busyEveryMs ?? 1000,
        },
      });
      worker.unref();
      worker.on('message', (m: { ok: boolean; log?: number; checkpointed?: number; error?: string }) => {
        this.stats.runs++;
        if (m.ok) {
          this.stats.lastLog = m.log ?? 0;
          this.stats.lastCheckpointed = m.checkpointed ?? 0;
          this.stats.lastError = null;
        } else {
          this.stats.lastError = m.error ?? 'checkpoint failed';
        }
        for (const w of this.waiters.splice(0)) w();
      });
      worker.on('error', (err) => {
        options.logger?.warn({ err }, 'WAL checkpointer stopped; SQLite checkpoints automatically again');
        db.pragma('wal_autocheckpoint = 1000');
      });
      db.pragma('wal_autocheckpoint = 0');
    } catch (err) {
      options.logger?.warn({ err }, 'WAL checkpointer unavailable; SQLite checkpoints automatically');
      worker = null;
    }
    this.worker = worker;
  }

  get running(): boolean {
    return this.worker !== null;
  }

  current(): CheckpointStats {
    return { ...this.stats };
  }

  /** Runs a checkpoint now; resolves when it reported. */
  now(): Promise<CheckpointStats> {
    if (!this.worker) return Promise.resolve(this.current());
    return new Promise((resolve) => {
      this.waiters.push(() => resolve(this.current()));
      this.worker!.postMessage('now');
    });
  }

  /** Stops the thread; the service's connection checkpoints on close as usual. */
  async stop(): Promise<void> {
    if (!this.worker) return;
    const worker = this.worker;
    // Referenced while stopping, so that the process waits for the thread to close its connection.
    worker.ref();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => void worker.terminate().then(() => resolve(), () => resolve()), 2000);
      worker.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      worker.postMessage('stop');
    });
    this.worker = null;
    if (this.db.open) this.db.pragma('wal_autocheckpoint = 1000');
  }
}
