import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { Writable } from 'node:stream';
import { CappedOutput } from './outputCapture.ts';

/** Exit code reported for a run killed at its wall-time limit (as coreutils `timeout` does). */
export const EXIT_TIMED_OUT = 124;
/** Exit code reported for a run aborted by the caller: killed by SIGKILL (128 + 9). */
export const EXIT_KILLED = 137;

/** After a kill, how long the pipes may stay open (held by something that escaped it) before they are closed. */
const DRAIN_AFTER_KILL_MS = 2000;

export interface SpawnOptions {
  file: string;
  args: string[];
  /** The whole environment of the spawned process (nothing of the service's is passed on). */
  env: Record<string, string>;
  maxOutputBytes: number;
  /** Extra killing on timeout/abort besides SIGKILL to the process group (e.g. the cgroup's members). */
  killTree?: () => Promise<void>;
  /** stdin: a pipe (written at `begin`), or /dev/null. */
  stdinPipe: boolean;
  /** An extra pipe at fd 3, written and closed at `begin` (a prepared sandbox reads its command there). */
  commandPipe?: boolean;
}

export interface BeginOptions {
  stdin?: string;
  /** Written to fd 3 (when `commandPipe`), which is then closed. */
  command?: string;
  /** Counted from `begin`. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface SpawnCappedOptions extends Omit<SpawnOptions, 'stdinPipe' | 'commandPipe'> {
  stdin?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface SpawnCappedResult {
  stdout: string;
  stderr: string;
  truncated: { stdout: boolean; stderr: boolean };
  exitCode: number;
  timedOut: boolean;
  aborted: boolean;
  /** From `begin` to the end (0 when the process had ended before). */
  durationMs: number;
}

/**
 * One process spawned now and started later: what it prints is captured from the spawn on (the
 * first `maxOutputBytes` of stdout and stderr; the rest is drained and dropped), while the wall
 * time, stdin and the command on fd 3 wait for `begin`. The process is made a group leader
 * (`detached`), so one kill reaches it and whatever it started in the same group.
 */
export class SpawnedProcess {
  /** Resolves once the process has exited and both pipes are drained (or closed after a kill). */
  readonly closed: Promise<void>;
  private readonly child;
  private readonly stdout: CappedOutput;
  private readonly stderr: CappedOutput;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private exited = false;
  private timedOut = false;
  private aborted = false;
  private began: number | null = null;
  private drainTimer: NodeJS.Timeout | undefined;
  private failure: Error | null = null;

  constructor(private readonly o: SpawnOptions) {
    this.stdout = new CappedOutput(o.maxOutputBytes);
    this.stderr = new CappedOutput(o.maxOutputBytes);
    const stdio: ('pipe' | 'ignore')[] = [o.stdinPipe ? 'pipe' : 'ignore', 'pipe', 'pipe'];
    if (o.commandPipe) stdio.push('pipe');
    this.child = spawn(o.file, o.args, { cwd: '/', env: o.env, detached: true, stdio });
    const child = this.child;
    child.stdout!.on('data', (chunk: Buffer) => this.stdout.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => this.stderr.push(chunk));
    // The command may exit without reading its input: EPIPE is not an error of the run.
    child.stdin?.on('error', () => undefined);
    (child.stdio[3] as Writable | undefined)?.on('error', () => undefined);
    // Exited in time: a timeout firing while the pipes drain must not mark the run timed out.
    child.once('exit', () => {
      this.exited = true;
    });
    this.closed = new Promise((resolve) => {
      child.once('error', (err) => {
        this.failure = err;
        clearTimeout(this.drainTimer);
        resolve();
      });
      // 'close' comes after the process exited and both pipes were drained to their end.
      child.once('close', (code, signal) => {
        this.exit = { code, signal };
        clearTimeout(this.drainTimer);
        resolve();
      });
    });
  }

  /** Whether the process ended (before `begin`: a sandbox that could not even start). */
  get ended(): boolean {
    return this.exited || this.closedYet;
  }

  /** Whether `closed` has resolved: the process is gone and its pipes are closed. */
  get closedYet(): boolean {
    return this.exit !== null || this.failure !== null;
  }

  /** Starts the clock and hands over stdin and the command; resolves with the outcome. Once only. */
  async begin(input: BeginOptions): Promise<SpawnCappedResult> {
    if (this.began !== null) throw new Error('this process was started already');
    this.began = performance.now();
    const child = this.child;
    if (child.stdin) child.stdin.end(input.stdin ?? '');
    (child.stdio[3] as Writable | undefined)?.end(input.command ?? '');
    const timer = setTimeout(() => {
      if (this.exited) return this.stopReading();
      this.timedOut = true;
      this.kill();
    }, input.timeoutMs);
    const onAbort = (): void => {
      this.aborted = true;
      this.kill();
    };
    input.signal?.addEventListener('abort', onAbort, { once: true });
    if (input.signal?.aborted) onAbort();
    try {
      await this.closed;
    } finally {
      clearTimeout(timer);
      input.signal?.removeEventListener('abort', onAbort);
    }
    if (this.failure) throw this.failure;
    const { code, signal } = this.exit!;
    const exitCode = this.timedOut ? EXIT_TIMED_OUT : this.aborted ? EXIT_KILLED : (code ?? 128 + (signal ? constants.signals[signal] : 0));
    return {
      stdout: this.stdout.text(),
      stderr: this.stderr.text(),
      truncated: { stdout: this.stdout.truncated, stderr: this.stderr.truncated },
      exitCode,
      timedOut: this.timedOut,
      aborted: this.aborted,
      durationMs: Math.round(performance.now() - this.began),
    };
  }

  /**
   * SIGKILLs the process group (and the extra tree); pipes something escaped with are closed after
   * a grace period. Nothing once the process is gone: its cgroup may serve another run by then.
   */
  kill(): void {
    if (this.closedYet) return;
    if (this.child.pid !== undefined) {
      try {
        process.kill(-this.child.pid, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    }
    this.o.killTree?.().catch(() => undefined);
    // Something outside the killed group that still holds a pipe must not hold the run open.
    this.drainTimer ??= setTimeout(() => this.stopReading(), DRAIN_AFTER_KILL_MS);
  }

  private stopReading(): void {
    this.child.stdout!.destroy();
    this.child.stderr!.destroy();
  }
}

/**
 * Runs one process asynchronously (the event loop keeps serving while it runs), keeps the first
 * `maxOutputBytes` of stdout and stderr, and kills its process group at the timeout or on abort.
 */
export async function spawnCapped(options: SpawnCappedOptions): Promise<SpawnCappedResult> {
  const { stdin, timeoutMs, signal, ...spawnOptions } = options;
  return new SpawnedProcess({ ...spawnOptions, stdinPipe: stdin !== undefined }).begin({ stdin, timeoutMs, signal });
}
