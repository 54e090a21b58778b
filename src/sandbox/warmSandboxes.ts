import type { Logger } from '../logging/logger.ts';
import type { PreparedRun } from './runtime/runtime.ts';
import type { Workspace } from './workspace/workspace.ts';

/** A sandbox made ahead of its command, over a workspace held for it alone. */
export interface WarmSandbox {
  workspace: Workspace;
  run: PreparedRun;
}

export interface WarmSandboxesOptions {
  /** Warm sandboxes kept in all (each is a few processes, a cgroup and a workspace). Default 8. */
  max?: number;
  /** An unused warm sandbox is cancelled after this long. Default 60 s. */
  idleMs?: number;
  /**
   * A sandbox is made once its key has been quiet this long. Default 20 ms: a command that comes
   * back to back would find the sandbox far from ready (its setup takes ~30 ms) and would wait
   * behind its spawn, which holds the event loop ~10 ms in a service of 200 MiB; it runs cold.
   */
  delayMs?: number;
  logger?: Logger;
}

interface Entry {
  key: string;
  projectId: string;
  commitId: string | null;
  made: Promise<WarmSandbox | null>;
  /** Whether `make` was called (the delay is over). */
  making: boolean;
  /** Ends the delay early (for a dropped entry: nothing is made). */
  go: () => void;
  delay?: NodeJS.Timeout;
  /** Set once made (null: making it failed). */
  value?: WarmSandbox | null;
  addedAt: number;
  timer?: NodeJS.Timeout;
  dropped: boolean;
}

/**
 * At most one warm sandbox per key (project, scope, commit, mode, limits), made in the background
 * and taken by the next command with that key: creating bwrap's namespaces and mounts is most of
 * a short command's time, and it does not need the command. Bounded in number (the oldest goes
 * first), cancelled when unused for `idleMs`, when their commit stops being the project's head,
 * and at close. A cancelled one gives its workspace back to the pool unchanged.
 */
export class WarmSandboxes {
  private readonly entries = new Map<string, Entry>();
  /** Sandboxes being made or cancelled (close waits for them). */
  private readonly pending = new Set<Promise<unknown>>();
  private closed = false;

  constructor(private readonly o: WarmSandboxesOptions = {}) {}

  /** Keys with a warm sandbox made or being made. */
  get size(): number {
    return this.entries.size;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /**
   * Takes the sandbox of `key` (waiting for one being made, which is a matter of a spawn), or null
   * when there is none, its delay is not over (it is not made then), or it ended meanwhile. The
   * caller owns it from here on.
   */
  async take(key: string): Promise<WarmSandbox | null> {
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (!entry.making) {
      this.drop(entry);
      return null;
    }
    this.entries.delete(key);
    clearTimeout(entry.timer);
    const warm = await entry.made;
    if (warm && warm.run.ended) {
      this.dispose(warm);
      return null;
    }
    return warm;
  }

  /**
   * Makes a sandbox for `key` in the background once the key has been quiet for `delayMs`,
   * unless there is one already. `make` owns its workspace until it resolves; it resolves null
   * when the sandbox is no longer wanted (the commit moved on meanwhile).
   */
  add(key: string, where: { projectId: string; commitId: string | null }, make: () => Promise<WarmSandbox | null>): void {
    if (this.closed || this.entries.has(key)) return;
    const max = this.o.max ?? 8;
    while (this.entries.size >= max) {
      const oldest = [...this.entries.values()].sort((a, b) => a.addedAt - b.addedAt)[0]!;
      this.drop(oldest);
    }
    let go!: () => void;
    const delayed = new Promise<void>((resolve) => (go = resolve));
    const entry: Entry = { key, ...where, made: Promise.resolve(null), making: false, go, addedAt: performance.now(), dropped: false };
    entry.delay = setTimeout(go, this.o.delayMs ?? 20);
    entry.made = this.track(
      delayed
        .then(() => {
          if (entry.dropped) return null;
          entry.making = true;
          return make();
        })
        .then(
          (warm) => {
            entry.value = warm;
            if (!warm || entry.dropped) {
              if (warm) this.dispose(warm);
              if (this.entries.get(key) === entry) this.entries.delete(key);
              return null;
            }
            // Not when taken meanwhile: the taker owns it.
            if (this.entries.get(key) === entry) {
              entry.timer = setTimeout(() => this.drop(entry), this.o.idleMs ?? 60_000);
              entry.timer.unref();
            }
            return warm;
          },
          (err: unknown) => {
            entry.value = null;
            if (this.entries.get(key) === entry) this.entries.delete(key);
            this.o.logger?.warn({ err }, 'a warm sandbox could not be made');
            return null;
          },
        ),
    );
    this.entries.set(key, entry);
  }

  /** Cancels the sandboxes of a project made at another commit than `headCommitId`. */
  retire(projectId: string, headCommitId: string | null): void {
    for (const entry of [...this.entries.values()]) if (entry.projectId === projectId && entry.commitId !== headCommitId) this.drop(entry);
  }

  /** Cancels every warm sandbox and waits until they are gone and their workspaces given back. */
  async close(): Promise<void> {
    this.closed = true;
    for (const entry of [...this.entries.values()]) this.drop(entry);
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Waits for sandboxes being made or cancelled (tests). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private drop(entry: Entry): void {
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    clearTimeout(entry.timer);
    if (entry.dropped) return;
    entry.dropped = true;
    clearTimeout(entry.delay);
    entry.go();
    // One still being made is disposed of when it is.
    if (entry.value) this.dispose(entry.value);
  }

  private dispose(warm: WarmSandbox): void {
    void this.track(
      warm.run
        .cancel()
        .then(() => warm.workspace.release())
        .catch((err: unknown) => this.o.logger?.warn({ err }, 'a warm sandbox could not be cancelled')),
    );
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.pending.add(promise);
    const done = () => this.pending.delete(promise);
    promise.then(done, done);
    return promise;
  }
}
