import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JustBashJob, JustBashJobResult } from './justBashJob.ts';
import type { RunRequest, RunResult, SandboxRuntime } from './runtime.ts';
import { EXIT_KILLED, EXIT_TIMED_OUT } from './spawnCapped.ts';
import { findExecutable } from './findExecutable.ts';
import { enterArgs, inside } from '../workspace/mountNamespace.ts';

const MiB = 1024 * 1024;
/** Warm children kept per heap size (starting one and loading just-bash costs ~0.3-1 s). */
const MAX_IDLE = 2;
/** After the interpreter's own deadline (which keeps the output so far), the child is killed. */
const KILL_GRACE_MS = 200;
/** A child that does not start the job within this is broken. */
const START_TIMEOUT_MS = 30_000;
/** Heap V8 needs besides the command's data (the code of just-bash, tsx). */
const BASE_HEAP_MB = 48;
const ENTRY = fileURLToPath(new URL('./justBashChild.mjs', import.meta.url));

type ChildMessage =
  | { type: 'started' }
  | { type: 'done'; result: JustBashJobResult }
  | { type: 'failed'; message: string };

/**
 * The fallback runtime for hosts without bubblewrap: just-bash, a bash simulated in JavaScript
 * over the real working folder (see justBashJob.ts), in a child Node process (justBashChild.ts
 * says why). Limits: wall time by the interpreter's deadline, then SIGKILL; memory by the
 * child's V8 heap cap (and just-bash's own size limits below it); disk by the bytes a run may
 * write (every write counted); output cut at maxOutputBytes. There are no processes to count
 * and no network at all (no curl, no fetch).
 */
export class JustBashRuntime implements SandboxRuntime {
  readonly name = 'just-bash' as const;
  readonly owner = null;
  readonly description: string;
  /** Idle children by heap size and mount namespace (see `slot`). */
  private readonly idle = new Map<string, ChildProcess[]>();
  private closed = false;
  private nsenter: string | null = null;

  constructor(why?: string) {
    this.description =
      'just-bash (a bash simulated in JavaScript, in a child process of the service)' +
      (why ? `, because ${why}` : '') +
      ': builtin commands only, no processes, no network; the working folder at /work (writes land on disk, ' +
      'no symlinks followed or made, no path outside it); memory by the heap limit, disk by the bytes written, ' +
      'wall time by the interpreter deadline, then SIGKILL';
  }

  async run(request: RunRequest): Promise<RunResult> {
    if (!isAbsolute(request.workDir)) throw new Error(`workDir must be an absolute path: ${request.workDir}`);
    if (request.signal?.aborted) return killed(0, '');
    const { limits } = request;
    const heapMb = BASE_HEAP_MB + Math.ceil(limits.memoryBytes / MiB);
    // A working folder in a mount namespace (the pool's): the child runs in that namespace and
    // opens the folder by its path there (just-bash resolves its root with realpath, which a
    // view through /proc/<pid>/root would lead out of the namespace).
    const ns = inside(request.workDir);
    if (ns) this.nsenter ??= await findExecutable('nsenter');
    if (ns && !this.nsenter) throw new Error('nsenter (util-linux) is not installed: needed to reach a working folder in a mount namespace');
    const slot = { heapMb, nsPid: ns?.pid ?? null };
    const job: JustBashJob = {
      command: request.command,
      stdin: request.stdin,
      workDir: ns?.path ?? request.workDir,
      readOnly: request.readOnly,
      limits: { ...limits },
    };
    const warm = this.idle.get(slotKey(slot))?.pop();
    if (warm) {
      // A warm child may have died while idle (its exit not yet seen): then a fresh one takes the job.
      const outcome = await this.attempt(warm, true, slot, job, request);
      if (outcome !== 'lost') return outcome;
    }
    return (await this.attempt(this.spawnChild(slot), false, slot, job, request)) as RunResult;
  }

  private attempt(child: ChildProcess, reused: boolean, slot: Slot, job: JustBashJob, request: RunRequest): Promise<RunResult | 'lost'> {
    const { limits } = job;
    holdsProcess(child, true);
    return new Promise<RunResult | 'lost'>((resolve, reject) => {
      let started: number | null = null;
      let hardStop: NodeJS.Timeout | undefined;
      const startTimer = setTimeout(() => settle(new Error('just-bash child did not start the command'), false), START_TIMEOUT_MS);
      const elapsed = (): number => (started === null ? 0 : Math.round(performance.now() - started));

      const onMessage = (m: ChildMessage): void => {
        if (m.type === 'started') {
          started = performance.now();
          clearTimeout(startTimer);
          hardStop = setTimeout(
            () => settle({ ...killed(elapsed(), `sandbox: timed out after ${limits.timeoutMs} ms\n`), exitCode: EXIT_TIMED_OUT, timedOut: true }, false),
            limits.timeoutMs + KILL_GRACE_MS,
          );
        } else if (m.type === 'done') {
          settle(m.result, true);
        } else {
          settle(new Error(`just-bash failed: ${m.message}`), false);
        }
      };
      // The child died during the command: V8 aborts a process whose heap is full.
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
        if (started === null && reused) return settle('lost', false);
        const oom = signal === 'SIGABRT' || code === 134 || /heap out of memory/.test(childErrors(child));
        settle(killed(elapsed(), oom ? `sandbox: killed at the memory limit (${limits.memoryBytes} bytes)\n` : `sandbox: just-bash ended (${signal ?? code})\n`), false);
      };
      const onError = (err: Error): void => settle(started === null && reused ? 'lost' : err, false);
      const onAbort = (): void => settle(killed(elapsed(), ''), false);

      const settle = (outcome: RunResult | Error | 'lost', reusable: boolean): void => {
        clearTimeout(startTimer);
        clearTimeout(hardStop);
        child.off('message', onMessage);
        child.off('exit', onExit);
        child.off('error', onError);
        request.signal?.removeEventListener('abort', onAbort);
        if (reusable) this.give(slot, child);
        else child.kill('SIGKILL');
        if (outcome instanceof Error) reject(outcome);
        else resolve(outcome);
      };

      child.on('message', onMessage);
      child.on('exit', onExit);
      child.on('error', onError);
      request.signal?.addEventListener('abort', onAbort, { once: true });
      child.send(job);
    });
  }

  /** Ends the idle children (at shutdown; running ones end with their command). */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.idle.values()].flat();
    this.idle.clear();
    await Promise.all(
      all.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            holdsProcess(c, true);
            c.once('exit', () => resolve());
            c.kill('SIGKILL');
          }),
      ),
    );
  }

  private spawnChild(slot: Slot): ChildProcess {
    const heap = `--max-old-space-size=${slot.heapMb}`;
    const created = fork(ENTRY, [], {
      // In a mount namespace: nsenter execs node there (the IPC channel and the environment pass through).
      ...(slot.nsPid === null ? { execArgv: [heap] } : { execPath: this.nsenter!, execArgv: [...enterArgs(this.nsenter!, slot.nsPid).slice(1), process.execPath, heap] }),
      // Nothing of the service's environment is visible to the child (just-bash gets its own env anyway).
      env: {},
      cwd: '/',
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    // The last bytes the child wrote to stderr: V8 says there when the heap ran out.
    let errors = '';
    created.stderr!.on('data', (chunk: Buffer) => {
      errors = (errors + chunk.toString('utf8')).slice(-4096);
    });
    stderrTails.set(created, () => errors);
    // One that dies while idle is forgotten.
    created.once('exit', () => {
      const list = this.idle.get(slotKey(slot));
      const at = list ? list.indexOf(created) : -1;
      if (at >= 0) list!.splice(at, 1);
    });
    return created;
  }

  private give(slot: Slot, child: ChildProcess): void {
    const key = slotKey(slot);
    const list = this.idle.get(key) ?? [];
    if (this.closed || list.length >= MAX_IDLE) {
      child.kill('SIGKILL');
      return;
    }
    holdsProcess(child, false);
    list.push(child);
    this.idle.set(key, list);
  }
}

/** What a child is made for: its heap cap, and the mount namespace it runs in (null: the service's). */
interface Slot {
  heapMb: number;
  nsPid: number | null;
}

const slotKey = (s: Slot) => `${s.heapMb}:${s.nsPid ?? ''}`;

/** A child at work keeps the service's process alive; an idle one (process, IPC channel, stderr pipe) must not. */
function holdsProcess(child: ChildProcess, hold: boolean): void {
  const stderr = child.stderr as Socket | null;
  if (hold) {
    child.ref();
    child.channel?.ref();
    stderr?.ref();
  } else {
    child.unref();
    child.channel?.unref();
    stderr?.unref();
  }
}

const stderrTails = new WeakMap<ChildProcess, () => string>();

function childErrors(child: ChildProcess): string {
  return stderrTails.get(child)?.() ?? '';
}

function killed(durationMs: number, stderr: string): RunResult {
  return { stdout: '', stderr, exitCode: EXIT_KILLED, truncated: { stdout: false, stderr: false }, timedOut: false, durationMs };
}
