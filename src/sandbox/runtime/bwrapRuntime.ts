import { execFile } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute } from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from '../../logging/logger.ts';
import { bwrapArgs, hostLayout, type HostLayout } from './bwrapArgs.ts';
import { detectCgroups, type Cgroups, type RunGroup } from './cgroups.ts';
import { findExecutable } from './findExecutable.ts';
import { enterArgs, inside } from '../workspace/mountNamespace.ts';
import type { PreparedRun, PrepareRequest, RunLimits, RunRequest, RunResult, SandboxRuntime, StartRequest } from './runtime.ts';
import { SpawnedProcess } from './spawnCapped.ts';

/** The unprivileged user a root service runs commands as (nobody/nogroup on Debian). */
export const SANDBOX_UID = 65534;
export const SANDBOX_GID = 65534;

/** The environment of the launcher chain (sh, setpriv, bwrap): bwrap's own /proc/1/environ shows it. */
const LAUNCHER_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };

/**
 * The first process of a run: sets the rlimits with the shell's `ulimit` (no prlimit to exec),
 * joins the run's cgroups, then becomes the sandbox: the same process execs setpriv and bwrap in
 * turn, so a run costs one fork. A limit that cannot be set or a group that cannot be joined
 * stops the run (exit 125) rather than run it unlimited. dash's units: -f and -c count 512-byte
 * blocks, -v KiB, -p processes; without -H/-S both the soft and the hard limit are set.
 */
function launcherScript(r: { fsizeBlocks: number; asKiB?: number; nproc?: number }): string {
  const limits = [`ulimit -f ${r.fsizeBlocks}`, 'ulimit -c 0'];
  if (r.asKiB !== undefined) limits.push(`ulimit -v ${r.asKiB}`);
  if (r.nproc !== undefined) limits.push(`ulimit -p ${r.nproc}`);
  return `${limits.join(' && ')} || exit 125; while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"`;
}

/**
 * What a prepared sandbox runs until its command comes on fd 3: a first line saying whether stdin
 * is given (without it stdin becomes /dev/null, as a cold run's is), then the command to its end,
 * read with the `read` builtin (no process to start; every byte kept, newlines included). It
 * closes fd 3 and evaluates the command in the same shell process, which saves the exec of a new
 * `sh -c` (~3 ms here). The `unset` rides in the evaluated text, so the command sees none of the
 * script's variables; `$0`, the environment and the exit status are those of `sh -c`. The one
 * visible difference: a syntax error is reported as "/bin/sh: 1: eval: Syntax error: …".
 */
const AWAIT_COMMAND =
  'IFS= read -r s <&3; [ "$s" = stdin ] || exec </dev/null; c=; while IFS= read -r l; do c="$c$l\n"; done <&3; exec 3<&-; eval "unset s c l; $c$l"';

/** What a prepared sandbox is sent on fd 3 (see AWAIT_COMMAND). */
const commandMessage = (command: string, stdin: boolean) => `${stdin ? 'stdin' : 'none'}\n${command}`;

export interface BwrapRuntimeOptions {
  /** 'auto' (default): limit memory and processes with cgroups when a writable hierarchy exists; 'off': rlimits only. */
  cgroups?: 'auto' | 'off';
  /** Told about a run's cgroup that could not be removed. */
  logger?: Logger;
}

interface Tools {
  bwrap: string;
  setpriv: string | null;
  /** Enters the mount namespace of a working folder given as a namespace view (see MountNamespace). */
  nsenter: string | null;
}

/**
 * Runs `sh -c <command>` in bubblewrap: no network, no host but /usr and the linker's bits of
 * /etc, a private /tmp, the working folder at /work, as uid 65534 when the service is root (or
 * as the service's own uid in a user namespace when it is not). Limits:
 * - wall time: the process group is SIGKILLed at the timeout (and the cgroup swept); bwrap's
 *   init dies with it (--die-with-parent) and takes every process of the pid namespace along;
 * - memory (RAM + swap) and process count: the run's own cgroup (pooled: one run at a time), or
 *   RLIMIT_AS / RLIMIT_NPROC where no cgroup is writable (RLIMIT_NPROC counts every task of the
 *   uid, so it is set to maxProcesses above the tasks that uid already has: see tasksOfUid);
 * - size of each file written: RLIMIT_FSIZE = maxDiskBytes (the writer gets SIGXFSZ / EFBIG);
 *   /tmp is a tmpfs of maxDiskBytes;
 * - output: the first maxOutputBytes of each stream.
 * `prepare` makes the same sandbox before its command is known; it then waits for the command on
 * fd 3 (see AWAIT_COMMAND), and its limits apply from `start` as they do from a cold `run`.
 */
export class BwrapRuntime implements SandboxRuntime {
  readonly name = 'bwrap' as const;
  /** Parent folders of working folders already found reachable by the sandbox uid. */
  private readonly reachable = new Set<string>();
  /** Prepared sandboxes not started yet (close cancels them). */
  private readonly waiting = new Set<PreparedSandbox>();
  private closed = false;

  private constructor(
    private readonly tools: Tools,
    private readonly layout: HostLayout,
    private readonly cgroups: Cgroups | null,
    readonly owner: { uid: number; gid: number } | null,
    readonly description: string,
    private readonly logger: Logger | undefined,
  ) {}

  /** Finds bwrap and its helpers and the cgroups to use; throws when bwrap cannot be used at all. */
  static async create(options: BwrapRuntimeOptions = {}): Promise<BwrapRuntime> {
    const bwrap = await findExecutable('bwrap');
    if (!bwrap) throw new Error('bubblewrap (bwrap) is not installed');
    const isRoot = process.getuid?.() === 0;
    const setpriv = isRoot ? await findExecutable('setpriv') : null;
    if (isRoot && !setpriv) throw new Error('setpriv (util-linux) is not installed: needed to drop root before bwrap');
    const nsenter = await findExecutable('nsenter');
    const version = await bwrapVersion(bwrap);
    const onError = (err: unknown) => options.logger?.warn({ err }, 'sandbox cgroup could not be removed');
    const probe = options.cgroups === 'off' ? { cgroups: null, reason: 'cgroups switched off' } : await detectCgroups({ onError });
    const who = isRoot
      ? `as uid ${SANDBOX_UID} (setpriv from root; bwrap in a user namespace)`
      : `as the service's uid ${process.getuid?.()} in a user namespace`;
    const limits = probe.cgroups
      ? `memory and process count by ${probe.cgroups.description}`
      : `memory by RLIMIT_AS and process count by RLIMIT_NPROC, per uid (${probe.reason})`;
    const description =
      `bubblewrap ${version}: sh -c with no network, read-only /usr, a private /tmp, the working folder at /work, ` +
      `${who}; ${limits}; file size by RLIMIT_FSIZE; wall time by SIGKILL`;
    const owner = isRoot ? { uid: SANDBOX_UID, gid: SANDBOX_GID } : null;
    return new BwrapRuntime({ bwrap, setpriv, nsenter }, await hostLayout(), probe.cgroups, owner, description, options.logger);
  }

  /** Groups of this runtime still present once the pooled, empty ones are removed (none once every run has finished). */
  async leftoverCgroups(): Promise<string[]> {
    if (!this.cgroups) return [];
    await this.cgroups.drain();
    return this.cgroups.leftovers();
  }

  async run(request: RunRequest): Promise<RunResult> {
    const sandbox = await this.launch(request, { command: request.command, stdin: request.stdin !== undefined });
    return sandbox.start({ command: request.command, stdin: request.stdin, signal: request.signal });
  }

  async prepare(request: PrepareRequest): Promise<PreparedRun> {
    const sandbox = await this.launch(request, null);
    this.waiting.add(sandbox);
    void sandbox.settled.then(() => this.waiting.delete(sandbox));
    if (this.closed) await sandbox.cancel();
    return sandbox;
  }

  /** Cancels the prepared sandboxes and removes the pooled cgroups; runs under way finish (their groups go when they do). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.waiting].map((s) => s.cancel()));
    await this.cgroups?.close();
  }

  /** Spawns the launcher chain: with the command in its arguments (`cold`), or waiting for it on fd 3. */
  private async launch(request: PrepareRequest, cold: { command: string; stdin: boolean } | null): Promise<PreparedSandbox> {
    if (!isAbsolute(request.workDir)) throw new Error(`workDir must be an absolute path: ${request.workDir}`);
    if (this.closed && !cold) throw new Error('the sandbox runtime is closed');
    await this.assertReachable(request.workDir);
    const { limits } = request;
    const group = this.cgroups ? await this.cgroups.acquire(limits) : null;
    try {
      const uidShare = group ? 0 : await tasksOfUid(this.owner?.uid ?? process.getuid!());
      const script = launcherScript({
        // Whole blocks only: the cap is never rounded up.
        fsizeBlocks: Math.floor(limits.maxDiskBytes / 512),
        asKiB: group ? undefined : Math.floor(limits.memoryBytes / 1024),
        nproc: group ? undefined : limits.maxProcesses + uidShare,
      });
      const inner = cold ? cold.command : AWAIT_COMMAND;
      const chain = this.launcherChain(request, inner);
      const proc = new SpawnedProcess({
        file: '/bin/sh',
        args: ['-c', script, 'sh', ...(group?.procsFiles ?? []), '--', ...chain],
        env: LAUNCHER_ENV,
        maxOutputBytes: limits.maxOutputBytes,
        killTree: group ? () => group.killAll() : undefined,
        stdinPipe: cold ? cold.stdin : true,
        commandPipe: !cold,
      });
      return new PreparedSandbox(proc, group, limits, !cold);
    } catch (err) {
      void group?.release();
      throw err;
    }
  }

  /**
   * bwrap runs as the sandbox uid and must reach the working folder to bind it: a 0700 folder
   * above it (a data folder, say) makes bwrap fail with a bare "Permission denied". Said here
   * plainly instead, once per parent folder. A folder in a mount namespace is checked as the
   * sandbox sees it there, through the namespace's view.
   */
  private async assertReachable(workDir: string): Promise<void> {
    if (!this.owner) return;
    const ns = inside(workDir);
    const path = ns?.path ?? workDir;
    const parent = dirname(workDir);
    if (this.reachable.has(parent)) return;
    for (let dir = dirname(path); ; dir = dirname(dir)) {
      const st = await stat(ns ? `/proc/${ns.pid}/root${dir}` : dir);
      if ((st.mode & 0o001) === 0 && st.uid !== this.owner.uid) {
        throw new Error(
          `sandbox working folder ${path} is not reachable by uid ${this.owner.uid}: ${dir} has mode ` +
            `${(st.mode & 0o777).toString(8).padStart(4, '0')} (give it o+x, e.g. 0711, or keep working folders elsewhere)`,
        );
      }
      if (dir === dirname(dir)) break;
    }
    this.reachable.add(parent);
  }

  /**
   * setpriv (when root) and bwrap, running `/bin/sh -c <inner>` inside; for a working folder in a
   * mount namespace (the pool's), nsenter first, and bwrap binds the folder by its path there.
   */
  private launcherChain(request: PrepareRequest, inner: string): string[] {
    const chain: string[] = [];
    const ns = inside(request.workDir);
    if (ns) {
      if (!this.tools.nsenter) throw new Error('nsenter (util-linux) is not installed: needed to reach a working folder in a mount namespace');
      chain.push(...enterArgs(this.tools.nsenter, ns.pid));
    }
    if (this.tools.setpriv) {
      chain.push(this.tools.setpriv, `--reuid=${SANDBOX_UID}`, `--regid=${SANDBOX_GID}`, '--clear-groups');
    }
    chain.push(
      this.tools.bwrap,
      ...bwrapArgs(this.layout, {
        workDir: ns?.path ?? request.workDir,
        readOnly: request.readOnly,
        tmpBytes: request.limits.maxDiskBytes,
        command: inner,
      }),
    );
    return chain;
  }
}

/**
 * One launched sandbox: started once (its result), or cancelled. Its cgroup goes back to the pool
 * when its processes are gone and, once started, after the run's OOM check: a group handed to
 * the next run before it would lose (or lend) the kill.
 */
class PreparedSandbox implements PreparedRun {
  /** Resolves once the processes are gone and the cgroup is released. */
  readonly settled: Promise<void>;
  private started = false;
  private cancelled = false;
  private checked!: () => void;
  private readonly check = new Promise<void>((resolve) => (this.checked = resolve));

  constructor(
    private readonly proc: SpawnedProcess,
    private readonly group: RunGroup | null,
    private readonly limits: RunLimits,
    /** Whether the command is still to come on fd 3 (a cold run has it in its arguments already). */
    private readonly awaiting: boolean,
  ) {
    this.settled = proc.closed.then(() => (this.started ? this.check : undefined)).then(() => group?.release());
  }

  get ended(): boolean {
    return this.proc.ended;
  }

  async start(request: StartRequest): Promise<RunResult> {
    if (this.started) throw new Error('this sandbox was started already');
    if (this.cancelled) throw new Error('this sandbox was cancelled');
    this.started = true;
    // A sandbox that ended before its start gave its group back already: no OOM check of it then.
    const group = this.proc.closedYet ? null : this.group;
    const { limits } = this;
    try {
      const result = await this.proc.begin({
        stdin: request.stdin,
        command: this.awaiting ? commandMessage(request.command, request.stdin !== undefined) : undefined,
        timeoutMs: request.timeoutMs ?? limits.timeoutMs,
        signal: request.signal,
      });
      let stderr = result.stderr;
      // Said even when the script went on after the killed process: "Killed" alone does not say why.
      if (group && !result.timedOut && (await group.oomKilled())) {
        stderr += `${stderr === '' || stderr.endsWith('\n') ? '' : '\n'}sandbox: killed at the memory limit (${limits.memoryBytes} bytes)\n`;
      }
      return {
        stdout: result.stdout,
        stderr,
        exitCode: result.exitCode,
        truncated: result.truncated,
        timedOut: result.timedOut,
        durationMs: result.durationMs,
      };
    } finally {
      this.checked();
    }
  }

  async cancel(): Promise<void> {
    this.cancelled = true;
    this.proc.kill();
    await this.settled;
  }
}

/**
 * Tasks (threads) now running as `uid`. RLIMIT_NPROC counts every task of the run's real uid: the
 * other sandboxes' (all root-started runs share uid 65534) and, without root, the service's own
 * threads. Adding them makes the limit "this run may add maxProcesses", so concurrent runs do not
 * starve each other of forks (a small race between counting and starting is accepted).
 */
export async function tasksOfUid(uid: number): Promise<number> {
  const pids = (await readdir('/proc').catch(() => [] as string[])).filter((name) => /^\d+$/.test(name));
  const counts = await Promise.all(
    pids.map(async (pid) => {
      const owner = await stat(`/proc/${pid}`).catch(() => null);
      if (owner?.uid !== uid) return 0;
      const m = /^Threads:\s+(\d+)$/m.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''));
      return m ? Number(m[1]) : 1;
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}

async function bwrapVersion(bwrap: string): Promise<string> {
  const { stdout } = await promisify(execFile)(bwrap, ['--version'], { timeout: 5000 });
  return stdout.trim().replace(/^bubblewrap\s+/, '');
}
