import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { Logger } from '../logging/logger.ts';
import { ReaderCache, answerQuery, type Ops, type QueryReply, type QueryRequest } from './queryOps.ts';

interface Thread {
  worker: Worker;
  ready: Promise<void>;
  pending: Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>;
}

/**
 * Runs search queries in worker threads, each with its own read-only connection per index
 * (`SearchReader`): a query that ranks tens of thousands of chunks holds a worker, not the event
 * loop, and concurrent queries use every core. A request goes to the thread with the fewest in
 * flight; a new thread starts (up to `size`) when all are busy. If threads cannot start at all,
 * queries are answered on the event loop instead, as before there were threads.
 */
export class QueryPool {
  private readonly threads: Thread[] = [];
  private nextId = 1;
  private inline: ReaderCache | null = null;
  private closed = false;

  constructor(
    private readonly size = Math.max(1, Math.min(4, availableParallelism())),
    private readonly logger?: Logger,
  ) {}

  run<K extends keyof Ops>(file: string, op: K, ...args: Ops[K]['args']): Promise<Ops[K]['result']> {
    if (this.closed) return Promise.reject(new Error('the search query pool is closed'));
    const request = { id: this.nextId++, file, op, args } as QueryRequest;
    if (this.inline) {
      try {
        return Promise.resolve(answerQuery(this.inline, request) as Ops[K]['result']);
      } catch (err) {
        return Promise.reject(err as Error);
      }
    }
    // A thread that could not start hands its requests back, to be answered on the event loop.
    return this.send(this.pick(), request).catch((err: Error) => (err instanceof RetryInline ? this.run(file, op, ...args) : Promise.reject(err))) as Promise<Ops[K]['result']>;
  }

  /** Closes every thread's connection to an index file (its tool was deleted, or it is rebuilt). */
  async forget(file: string): Promise<void> {
    this.inline?.forget(file);
    await Promise.all(
      // A thread that stops meanwhile has nothing left open.
      this.threads.map((t) => this.send(t, { id: this.nextId++, file, op: 'forget', args: [] }).catch(() => undefined)),
    );
  }

  private send(thread: Thread, request: QueryRequest): Promise<unknown> {
    return new Promise((resolve, reject) => {
      thread.pending.set(request.id, { resolve, reject });
      thread.worker.postMessage(request);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.inline?.closeAll();
    await Promise.all(this.threads.splice(0).map((t) => t.worker.terminate()));
  }

  private pick(): Thread {
    let best: Thread | undefined;
    for (const t of this.threads) if (!best || t.pending.size < best.pending.size) best = t;
    if (best && (best.pending.size === 0 || this.threads.length >= this.size)) return best;
    return this.spawn();
  }

  private spawn(): Thread {
    const worker = new Worker(new URL('./queryWorker.mjs', import.meta.url));
    worker.unref();
    const pending: Thread['pending'] = new Map();
    let started = false;
    const ready = new Promise<void>((resolve, reject) => {
      worker.once('error', reject);
      worker.on('message', (m: QueryReply | { ready: true }) => {
        if ('ready' in m) {
          started = true;
          return resolve();
        }
        const p = pending.get(m.id);
        pending.delete(m.id);
        if (m.ok) p?.resolve(m.result);
        else p?.reject(new Error(m.error));
      });
    });
    ready.catch(() => undefined);
    const thread: Thread = { worker, ready, pending };
    const fail = (err: Error) => {
      const i = this.threads.indexOf(thread);
      if (i >= 0) this.threads.splice(i, 1);
      if (!started && !this.closed) {
        // The thread could not even load: answer on the event loop from now on, including what it was given.
        this.logger?.warn({ error: err.message }, 'search query threads cannot start; queries run on the event loop');
        this.inline ??= new ReaderCache();
      }
      for (const p of pending.values()) p.reject(started ? new Error(`a search query thread stopped: ${err.message}`) : new RetryInline());
      pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`exit code ${code}`)));
    this.threads.push(thread);
    return thread;
  }
}

class RetryInline extends Error {}
