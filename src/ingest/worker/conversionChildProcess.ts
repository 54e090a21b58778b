import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { setPriority, tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { FromChild, ToChild } from './protocol.ts';

const ENTRY = fileURLToPath(new URL('./conversionChild.mjs', import.meta.url));
/** Environment a child gets: where temporary files go and the time zone, nothing of the service's secrets. */
const PASSED_ENV = ['TMPDIR', 'TMP', 'TEMP', 'TZ', 'LANG'];

/** Conversions are background work: under CPU contention the service's own process comes first. */
const NICENESS = 10;

/**
 * One conversion child process: started with a capped V8 heap and a lower CPU priority,
 * announces `ready` once its code is loaded; keeps the tail of its stderr, where V8 says why it
 * died.
 */
export class ConversionChild {
  readonly process: ChildProcess;
  readonly ready: Promise<void>;
  private stderrTail = '';
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;

  constructor(
    heapMb: number,
    startTimeoutMs: number,
    private readonly onMessage: (child: ConversionChild, m: FromChild) => void,
    private readonly onExit: (child: ConversionChild) => void,
  ) {
    const env: NodeJS.ProcessEnv = {};
    for (const k of PASSED_ENV) if (process.env[k] !== undefined) env[k] = process.env[k];
    this.process = fork(ENTRY, [], {
      execArgv: [`--max-old-space-size=${heapMb}`],
      env,
      cwd: tmpdir(),
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    try {
      if (this.process.pid !== undefined) setPriority(this.process.pid, NICENESS);
    } catch {
      // Not permitted here: it runs at the service's priority.
    }
    // A message sent as the child dies fails here; its 'exit' settles the job.
    this.process.on('error', () => {});
    this.process.stderr!.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-4096);
    });
    this.ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`the conversion process did not start within ${startTimeoutMs} ms`));
        this.kill();
      }, startTimeoutMs);
      this.process.on('message', (m: FromChild) => {
        if (m.type === 'ready') {
          clearTimeout(timer);
          resolve();
        } else this.onMessage(this, m);
      });
      this.process.once('exit', (code, signal) => {
        clearTimeout(timer);
        this.exit = { code, signal };
        reject(new Error(`the conversion process ended before it started: ${this.exitReason()}`));
        this.onExit(this);
      });
    });
    // Awaited by whoever sends the first job; this keeps an early failure from being unhandled.
    this.ready.catch(() => {});
  }

  get exited(): boolean {
    return this.exit !== null;
  }

  send(m: ToChild): void {
    this.process.send(m);
  }

  /** Whether this child keeps the service's process alive: only while it converts. */
  hold(yes: boolean): void {
    const stderr = this.process.stderr as Socket | null;
    if (yes) {
      this.process.ref();
      this.process.channel?.ref();
      stderr?.ref();
    } else {
      this.process.unref();
      this.process.channel?.unref();
      stderr?.unref();
    }
  }

  kill(): void {
    if (!this.exited) this.process.kill('SIGKILL');
  }

  /** Why it ended, for the job's error: out of memory (V8 aborts), a signal, or an exit code. */
  exitReason(): string {
    const { code, signal } = this.exit ?? { code: null, signal: null };
    if (signal === 'SIGABRT' || code === 134 || /heap out of memory|Allocation failed/i.test(this.stderrTail)) return 'it ran out of memory';
    if (signal) return `it was killed by ${signal}`;
    const last = this.stderrTail.trim().split('\n').pop();
    return `it exited with code ${code}${last ? ` (${last.slice(0, 200)})` : ''}`;
  }
}
