import { ConversionError, type ConvertInput, type ConvertOutput, type Progress } from '../converters/converter.ts';
import { ConversionChild } from './conversionChildProcess.ts';
import { receivedError, type FromChild } from './protocol.ts';

const MiB = 1024 * 1024;

export interface ConversionPoolOptions {
  /** Conversions that run at once, one child process each (default 2). */
  size?: number;
  /** V8 heap cap of each child, MiB (default 1024): past it the child dies, the job fails 'crashed'. */
  heapMb?: number;
  /** A child whose resident memory is above this after a job is replaced (default 768 MiB). */
  recycleAboveBytes?: number;
  /** A child that does not load within this is broken (default 30 s). */
  startTimeoutMs?: number;
  /** Keep a warm spare child while every slot converts (default true; see `warmSpare`). */
  spare?: boolean;
  /**
   * Wall-clock time one conversion may take from when its child starts it (default 120 s,
   * CNS_INGEST_CONVERSION_TIMEOUT_S): past it the child is killed and the job fails 'timeout'.
   */
  timeoutMs?: number;
}

export interface RunOptions {
  /** Aborting stops the conversion (its process is killed and replaced); `run` rejects with an AbortError. */
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
}

interface Job {
  input: ConvertInput;
  options: RunOptions;
  resolve: (output: ConvertOutput) => void;
  reject: (err: unknown) => void;
  onAbort: () => void;
  child: ConversionChild | null;
  timer: NodeJS.Timeout | null;
  settled: boolean;
}

/** Limits a child reports itself (a PDF's pages, decompressed bytes, a result too large): its process is replaced, as after a timeout. */
const LIMIT_CODES: ReadonlySet<string> = new Set(['too_large', 'too_many_pages']);

/**
 * Runs conversions off the event loop, in child processes, `size` at a time; further jobs wait
 * in order. Processes rather than worker threads: a parser stuck in a loop or a wasm/native
 * crash (segfault, V8 out of heap) ends only that child, and killing it is an immediate,
 * certain cancel; the child's memory (a 50 MiB PDF, the OCR model) is given back when it is
 * replaced. Children start on demand, stay warm between jobs (loading the converters costs
 * ~0.3-1 s), and do not keep the service's process alive while idle. A child that dies fails
 * its job with ConversionError 'crashed' and is replaced by the next job that needs one. A
 * conversion past `timeoutMs`, or one its child stops for a limit (pages, decompressed bytes,
 * result size), has its child killed, and fails once that process has exited.
 */
export class ConversionPool {
  private readonly size: number;
  private readonly heapMb: number;
  private readonly recycleAbove: number;
  private readonly startTimeoutMs: number;
  private readonly timeoutMs: number;
  private spare: boolean;
  private readonly idle: ConversionChild[] = [];
  private readonly running = new Map<ConversionChild, Job>();
  private readonly queue: Job[] = [];
  /** Children alive or starting, idle or not. */
  private live = 0;
  private closed = false;

  constructor(options: ConversionPoolOptions = {}) {
    this.size = Math.max(1, options.size ?? 2);
    this.heapMb = options.heapMb ?? 1024;
    this.recycleAbove = options.recycleAboveBytes ?? 768 * MiB;
    this.startTimeoutMs = options.startTimeoutMs ?? 30_000;
    this.timeoutMs = options.timeoutMs ?? 120_000;
    this.spare = options.spare ?? true;
  }

  run(input: ConvertInput, options: RunOptions = {}): Promise<ConvertOutput> {
    if (this.closed) return Promise.reject(new Error('the conversion pool is closed'));
    if (options.signal?.aborted) return Promise.reject(new AbortError(options.signal.reason));
    return new Promise<ConvertOutput>((resolve, reject) => {
      const job: Job = { input, options, resolve, reject, child: null, timer: null, settled: false, onAbort: () => this.abort(job) };
      options.signal?.addEventListener('abort', job.onAbort, { once: true });
      this.queue.push(job);
      this.dispatch();
    });
  }

  /** For the health answer. */
  stats(): { size: number; busy: number; queued: number } {
    return { size: this.size, busy: this.running.size, queued: this.queue.length };
  }

  /** Rejects waiting and running jobs, ends every child. */
  async close(): Promise<void> {
    this.closed = true;
    const children = [...this.idle, ...this.running.keys()];
    const closedError = () => new Error('the conversion pool is closed');
    for (const job of this.queue.splice(0)) this.settle(job, closedError());
    for (const job of [...this.running.values()]) this.settle(job, closedError());
    await Promise.all(
      children.map((child) => {
        if (child.exited) return undefined;
        const exited = new Promise<void>((resolve) => child.process.once('exit', () => resolve()));
        // Held until it is gone, or an idle (unreferenced) child would let the process end first.
        child.hold(true);
        child.kill();
        return exited;
      }),
    );
    this.idle.length = 0;
  }

  private dispatch(): void {
    while (this.queue.length && this.running.size < this.size && (this.idle.length || this.live < this.size) && !this.closed) {
      this.start(this.queue.shift()!, this.idle.pop() ?? this.spawn());
    }
    this.warmSpare();
  }

  private spawn(): ConversionChild {
    this.live++;
    return new ConversionChild(this.heapMb, this.startTimeoutMs, (c, m) => this.onMessage(c, m), (c) => this.onExit(c));
  }

  /**
   * While every slot converts, one more child is started and kept idle: when a conversion ends
   * or is killed (a cancel, a limit, a task giving its worker to another project), the next job
   * starts at once instead of after a child's start-up (~0.5 s of CPU, seconds on a busy
   * machine, at the children's low priority). Never more than `size + 1` children; none once a
   * spare could not start (the jobs report why children fail).
   */
  private warmSpare(): void {
    if (!this.spare || this.closed || this.running.size < this.size || this.idle.length > 0 || this.live > this.size) return;
    const child = this.spawn();
    child.hold(false);
    this.idle.push(child);
    child.ready.catch(() => (this.spare = false));
  }

  private start(job: Job, child: ConversionChild): void {
    job.child = child;
    this.running.set(child, job);
    child.hold(true);
    child.ready.then(
      () => {
        if (this.running.get(child) !== job) return;
        child.send({ type: 'convert', input: job.input });
        // From the start of the conversion itself: a child's start-up (loading the converters) is not the file's doing.
        job.timer = setTimeout(() => {
          const seconds = Math.round(this.timeoutMs / 100) / 10;
          this.retire(child, job, new ConversionError('timeout', `the conversion took longer than ${seconds} s, the most one conversion may take (CNS_INGEST_CONVERSION_TIMEOUT_S); its process was stopped`));
        }, this.timeoutMs);
      },
      (err: Error) => this.settle(job, new ConversionError('crashed', `the conversion could not start: ${err.message}`)),
    );
  }

  private onMessage(child: ConversionChild, m: FromChild): void {
    const job = this.running.get(child);
    if (!job) return;
    if (m.type === 'progress') job.options.onProgress?.(m.progress);
    else if (m.type === 'done') {
      this.release(child, m.rss > this.recycleAbove);
      this.settle(job, null, m.output);
    } else if (m.type === 'failed') {
      if (m.error.code && LIMIT_CODES.has(m.error.code)) return this.retire(child, job, receivedError(m.error));
      this.release(child, m.fatal === true);
      this.settle(job, receivedError(m.error));
    }
  }

  /**
   * Kills the child running `job` and fails the job once the process has exited: when a
   * conversion is stopped for a limit, nothing of it outlives its failure. The next job may
   * start meanwhile (on an idle child, such as the spare).
   */
  private retire(child: ConversionChild, job: Job, err: Error): void {
    if (this.running.get(child) !== job) return;
    this.running.delete(child);
    job.child = null;
    if (job.timer) clearTimeout(job.timer);
    if (child.exited) this.settle(job, err);
    else {
      child.process.once('exit', () => this.settle(job, err));
      child.kill();
    }
    this.dispatch();
  }

  private onExit(child: ConversionChild): void {
    this.live--;
    const at = this.idle.indexOf(child);
    if (at >= 0) this.idle.splice(at, 1);
    const job = this.running.get(child);
    this.running.delete(child);
    if (job) this.settle(job, new ConversionError('crashed', `the conversion process stopped during the conversion: ${child.exitReason()}`));
    this.dispatch();
  }

  /** Back to idle after a job, or ended (memory grown too much) and replaced on demand. */
  private release(child: ConversionChild, recycle: boolean): void {
    this.running.delete(child);
    child.hold(false);
    if (recycle || this.closed) child.kill();
    else this.idle.push(child);
    this.dispatch();
  }

  private abort(job: Job): void {
    const queued = this.queue.indexOf(job);
    if (queued >= 0) this.queue.splice(queued, 1);
    const child = job.child;
    if (child && this.running.get(child) === job) {
      // The only way to stop a parser mid-document: kill the process; its exit frees the slot.
      this.running.delete(child);
      child.kill();
    }
    this.settle(job, new AbortError(job.options.signal?.reason));
  }

  private settle(job: Job, err: unknown, output?: ConvertOutput): void {
    if (job.settled) return;
    job.settled = true;
    if (job.timer) clearTimeout(job.timer);
    job.options.signal?.removeEventListener('abort', job.onAbort);
    if (job.child && this.running.get(job.child) === job) {
      this.running.delete(job.child);
      job.child.kill();
    }
    job.child = null;
    if (err) job.reject(err);
    else job.resolve(output!);
  }
}

/** What `run` rejects with when its signal aborts: like Node's own (name 'AbortError', code 'ABORT_ERR'), the signal's reason as `cause`. */
export class AbortError extends Error {
  readonly code = 'ABORT_ERR';

  constructor(cause?: unknown) {
    super('the conversion was cancelled', { cause });
    this.name = 'AbortError';
  }
}
