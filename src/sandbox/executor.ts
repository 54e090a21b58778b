import type { Principal } from '../auth/principal.ts';
import type { ChangeBus } from '../events/changeBus.ts';
import type { ContentStore } from '../content/contentStore.ts';
import { DomainError, invalidField } from '../errors/domainError.ts';
import type { Logger } from '../logging/logger.ts';
import type { ContentAccess, ContentGrant } from '../policies/contentAccess.ts';
import type { WriteTimeGrants } from '../policies/writeTimeGrant.ts';
import { runLimits, type EndpointLimits } from './limits.ts';
import type { RunLimits, RunResult, SandboxRuntime } from './runtime/runtime.ts';
import { Semaphore } from './semaphore.ts';
import { WarmSandboxes, type WarmSandbox, type WarmSandboxesOptions } from './warmSandboxes.ts';
import type { WorkspacePool } from './workspace/workspacePool.ts';
import { writeBack, type WriteBackResult } from './writeBack.ts';
import { layOverlay, readDraftChanges, type DraftChanges, type OverlayEntry } from './draftOverlay.ts';

export interface ExecRequest {
  /** The caller's grant on the project; `read_write` needs a content:write grant. */
  grant: ContentGrant;
  /** The subtree the command works on ('' = the whole project). */
  scope: string;
  mode: 'read' | 'read_write';
  command: string;
  stdin?: string;
  timeoutS: number;
  limits: Required<EndpointLimits>;
}

export interface ExecResult extends Omit<WriteBackResult, 'version'> {
  stdout: string;
  stderr: string;
  exit_code: number;
  duration_ms: number;
  truncated: RunResult['truncated'];
  timed_out: boolean;
  /** The project version of the write-back commit, or null when nothing was written. */
  version: number | null;
  runtime: SandboxRuntime['name'];
  /**
   * Where the time went, ms: materializing the folder, the command, comparing and writing back;
   * `warm`: the command ran in a sandbox made before it came (the folder and the sandbox's
   * processes were ready: materialize is ~0 and run is only the command's own time).
   */
  timings: { materialize_ms: number; run_ms: number; write_back_ms: number; warm: boolean };
}

/** A command over a subtree with a draft laid over it (an agent's workspace): nothing is written back. */
export interface DraftExecRequest extends ExecRequest {
  /** The draft's paths inside `scope`, laid over the live content before the command runs. */
  overlay: readonly OverlayEntry[];
}

export interface DraftRunResult extends Pick<ExecResult, 'stdout' | 'stderr' | 'exit_code' | 'duration_ms' | 'truncated' | 'timed_out' | 'runtime' | 'timings'> {
  /** The project version whose content the folder was made from (the draft lay over it). */
  baseVersion: number;
  /** What the folder holds after the command compared with that live content, with the bytes; null for a read run. */
  folder: DraftChanges | null;
}

export interface ExecutorDeps {
  content: ContentStore;
  /** Commits from anywhere make a project's warm sandboxes stale. */
  bus: Pick<ChangeBus, 'subscribe'>;
  access: ContentAccess;
  /** The policy asked again when a command's changes are written: the principal as it stands then. */
  writeTimeGrants: Pick<WriteTimeGrants, 'require'>;
  /**
   * What a principal acts through, read as it stands at write time and re-applied (an agent's
   * access: see src/agents/tools/reachNow.ts); undefined for a principal that acts as itself.
   */
  narrowAtWrite?: (acting: Principal) => Promise<((current: Principal) => Principal | null) | undefined>;
  /** Chooses the runtime at start-up (probing bubblewrap is asynchronous). */
  selectRuntime: () => Promise<SandboxRuntime>;
  pool: WorkspacePool;
  logger: Logger;
  /** Commands running at once; more wait their turn. */
  maxConcurrent: number;
  /** Commands waiting at once; past it a command is refused (429). */
  maxQueued: number;
  /** Sandboxes made ahead of the next command (bounds, idle expiry); `false`: every command runs cold. */
  warm?: WarmSandboxesOptions | false;
}

/**
 * The one sandbox runtime of the service: sandbox endpoints, the `shell` tool and agents' bash
 * tools all run commands here. A command runs over the subtree at the project's current version
 * in a fresh (or pristine, reused) workspace; what it changed comes back as ONE commit through
 * the content store, attributed to the grant's actor.
 */
export class SandboxExecutor {
  private readonly slots: Semaphore;
  private selected: SandboxRuntime | null = null;
  /** Warm sandboxes, once the runtime can prepare them. */
  private warm: WarmSandboxes | null = null;
  private unsubscribe: (() => void) | null = null;
  private closing = false;

  constructor(private readonly d: ExecutorDeps) {
    this.slots = new Semaphore(d.maxConcurrent, d.maxQueued);
  }

  /** Chooses the runtime once; the server calls it before it serves requests. */
  async start(): Promise<void> {
    this.selected ??= await this.d.selectRuntime();
    if (this.selected.prepare && this.d.warm !== false && !this.warm) {
      const warm = new WarmSandboxes({ logger: this.d.logger, ...this.d.warm });
      this.warm = warm;
      // A commit from anywhere (an exec, the content API, a git push) makes the project's warm sandboxes stale.
      this.unsubscribe = this.d.bus.subscribe('warm-sandboxes', (e) => warm.retire(e.project, e.commit));
    }
  }

  /** The warm sandboxes (tests look at them), null when the runtime cannot prepare any. */
  get warmSandboxes(): WarmSandboxes | null {
    return this.warm;
  }

  get runtime(): SandboxRuntime {
    if (!this.selected) throw new Error('the sandbox runtime was not started');
    return this.selected;
  }

  /** What every command must pass before it waits for a slot: no NUL byte, the scope granted, write access to write. */
  private check(req: Pick<ExecRequest, 'command' | 'grant' | 'scope' | 'mode'>, writing: string): void {
    // A command is one argument of `sh -c`: an argument cannot hold a NUL byte.
    if (req.command.includes('\0')) throw invalidField('command', 'the command may not contain a NUL byte');
    this.d.access.requirePath(req.grant, req.scope);
    if (req.mode === 'read_write' && req.grant.action !== 'content:write') throw new DomainError('FORBIDDEN', `${writing} needs write access to the content.`);
  }

  async exec(req: ExecRequest): Promise<ExecResult> {
    const { content } = this.d;
    this.check(req, 'Writing back');
    const projectId = req.grant.projectId;
    const release = await this.slots.acquire();
    try {
      const started = performance.now();
      const head = content.head(projectId);
      const commitId = head?.commitId ?? null;
      const limits = runLimits(req.limits, req.timeoutS);
      const readOnly = req.mode === 'read';
      const key = warmKey(projectId, req.scope, commitId, req.mode, limits);
      const at = { projectId, scope: req.scope, commitId, readOnly, limits };
      const warm = this.warm ? await this.warm.take(key) : null;
      const ws = warm?.workspace ?? (await this.d.pool.acquire(projectId, req.scope, commitId, this.runtime.owner, { diskBytes: limits.maxDiskBytes }));
      try {
        const materialized = performance.now();
        const request = { command: req.command, stdin: req.stdin };
        const run = warm
          ? await warm.run.start({ ...request, timeoutMs: limits.timeoutMs })
          : await this.runtime.run({ ...request, workDir: ws.dir, readOnly, limits });
        const ran = performance.now();
        let written: WriteBackResult = { version: null, changes: [], skipped: [], conflicts: [] };
        if (req.mode === 'read_write') {
          const changes = await ws.changes();
          if (changes.files.length || changes.folders.length || changes.skipped.length) {
            written = await writeBack(content, {
              projectId,
              scope: req.scope,
              dir: ws.dir,
              baseVersion: head?.projectVersion ?? 0,
              changes,
              actor: req.grant.actor,
              message: `exec: ${shortened(req.command)}`,
              maxContentBytes: content.maxContentBytes,
              // A key revoked, a role lowered or a scope narrowed while the command ran writes nothing.
              authorize: async (paths) => {
                const narrow = await this.d.narrowAtWrite?.(req.grant.principal);
                await this.d.writeTimeGrants.require(req.grant.principal, projectId, paths, narrow);
              },
            });
          }
        }
        const done = performance.now();
        return {
          stdout: run.stdout,
          stderr: run.stderr,
          exit_code: run.exitCode,
          duration_ms: Math.round(run.durationMs),
          truncated: run.truncated,
          timed_out: run.timedOut,
          ...written,
          runtime: this.runtime.name,
          timings: { materialize_ms: ms(materialized - started), run_ms: ms(ran - materialized), write_back_ms: ms(done - ran), warm: warm !== null },
        };
      } finally {
        await ws.release();
        this.warmUp(key, at);
      }
    } finally {
      release();
    }
  }

  /**
   * Runs a command over the live subtree with a draft laid over it, and answers what the folder
   * then holds against the live content (the caller keeps that as its draft): nothing is written
   * to the content (`read`: the folder, draft included, is mounted read-only and nothing is read
   * back). Always cold: a warm sandbox's folder is the live content alone.
   */
  async execDraft(req: DraftExecRequest): Promise<DraftRunResult> {
    const { content } = this.d;
    this.check(req, 'Changing the draft');
    const projectId = req.grant.projectId;
    const release = await this.slots.acquire();
    try {
      const started = performance.now();
      const head = content.head(projectId);
      const limits = runLimits(req.limits, req.timeoutS);
      const readOnly = req.mode === 'read';
      const ws = await this.d.pool.acquire(projectId, req.scope, head?.commitId ?? null, this.runtime.owner, { diskBytes: limits.maxDiskBytes });
      try {
        await layOverlay(ws.dir, req.scope, req.overlay, this.runtime.owner);
        const materialized = performance.now();
        const run = await this.runtime.run({ command: req.command, stdin: req.stdin, workDir: ws.dir, readOnly, limits });
        const ran = performance.now();
        const folder = readOnly ? null : await readDraftChanges(ws.dir, req.scope, await ws.changes(), content.maxContentBytes);
        const done = performance.now();
        return {
          stdout: run.stdout,
          stderr: run.stderr,
          exit_code: run.exitCode,
          duration_ms: Math.round(run.durationMs),
          truncated: run.truncated,
          timed_out: run.timedOut,
          runtime: this.runtime.name,
          baseVersion: head?.projectVersion ?? 0,
          folder,
          timings: { materialize_ms: ms(materialized - started), run_ms: ms(ran - materialized), write_back_ms: ms(done - ran), warm: false },
        };
      } finally {
        await ws.release();
      }
    } finally {
      release();
    }
  }

  /**
   * After a command that left the commit as it was (nothing written back, nobody else wrote), the
   * next one with the same key will most likely find the same head: a sandbox for it is made in
   * the background once the key has been quiet a moment (WarmSandboxes' delayMs), on a workspace
   * of its own (one released unchanged is handed out again as it is). Not while the command runs:
   * on two cores the sandbox's setup slowed the command by more than it saved the next one
   * (`ls -R | wc -l`: ~30 ms instead of ~18 ms).
   */
  private warmUp(key: string, at: { projectId: string; scope: string; commitId: string | null; readOnly: boolean; limits: RunLimits }): void {
    const warm = this.warm;
    const prepare = this.selected?.prepare?.bind(this.selected);
    if (!warm || !prepare || this.closing) return;
    const { content, pool } = this.d;
    const head = () => content.head(at.projectId)?.commitId ?? null;
    if (head() !== at.commitId) return;
    warm.add(key, at, async (): Promise<WarmSandbox | null> => {
      if (this.closing || head() !== at.commitId) return null;
      const workspace = await pool.acquire(at.projectId, at.scope, at.commitId, this.runtime.owner, { diskBytes: at.limits.maxDiskBytes });
      try {
        return { workspace, run: await prepare({ workDir: workspace.dir, readOnly: at.readOnly, limits: at.limits }) };
      } catch (err) {
        await workspace.release();
        throw err;
      }
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    this.unsubscribe?.();
    await this.warm?.close();
    await this.d.pool.close();
    await this.selected?.close?.();
  }
}

const ms = (n: number) => Math.round(n * 10) / 10;

/** What a warm sandbox must match: everything it was made with (the wall time is set at its start). */
function warmKey(projectId: string, scope: string, commitId: string | null, mode: ExecRequest['mode'], limits: RunLimits): string {
  return JSON.stringify([projectId, scope, commitId, mode, limits.memoryBytes, limits.maxProcesses, limits.maxDiskBytes, limits.maxOutputBytes]);
}

/** The commit message's command: its first line, at most 72 characters. */
export function shortened(command: string): string {
  const line = command.trim().split('\n')[0];
  const more = line.length > 72 || command.trim().includes('\n');
  return (line.length > 72 ? line.slice(0, 71) : line) + (more ? '…' : '');
}
