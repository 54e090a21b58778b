import { closeSync, mkdirSync, fsyncSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fsyncDirs } from './objects.ts';

export const MAIN_REF = 'refs/heads/main';

/** The id `refs/heads/main` points to (loose ref first, then packed-refs), or null. */
export function readMainRef(gitdir: string): string | null {
  return readRef(gitdir, MAIN_REF);
}

/** The id a ref points to (loose ref first, then packed-refs), or null. */
export function readRef(gitdir: string, name: string): string | null {
  try {
    const v = readFileSync(join(gitdir, name), 'utf8').trim();
    if (/^[0-9a-f]{40}$/.test(v)) return v;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  try {
    for (const line of readFileSync(join(gitdir, 'packed-refs'), 'utf8').split('\n')) {
      if (line.endsWith(' ' + name)) return line.slice(0, 40);
    }
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  return null;
}

export type CasOutcome = 'ok' | 'moved' | 'locked';

/**
 * Compare-and-swap of `main` with git's own lock-file protocol, so that the system git
 * (receive-pack, update-ref) and this store never overwrite each other: create
 * `refs/heads/main.lock` exclusively, check the current value, write the new one into the lock
 * and rename it over the ref. 'locked' means another process holds the lock right now.
 */
export function casMainRef(gitdir: string, expected: string | null, next: string, fsync: boolean): CasOutcome {
  return casRef(gitdir, MAIN_REF, expected, next, fsync);
}

/** casMainRef for any ref under refs/ (the notes ref). */
export function casRef(gitdir: string, name: string, expected: string | null, next: string, fsync: boolean): CasOutcome {
  const lock = RefUpdate.prepare(gitdir, name, expected, next, fsync);
  if (typeof lock === 'string') return lock;
  lock.publish();
  return 'ok';
}

/**
 * A compare-and-swap of a ref in two steps: prepare() takes `<ref>.lock` exclusively, checks the
 * ref and writes the new id into the lock; publish() renames the lock over the ref. Between the
 * two, no git process can move the ref. The content core prepares inside its SQLite transaction
 * and publishes after the commit, so the rename (the costliest file operation of a write) stays
 * out of the database's write lock; a process that dies in between leaves a lock naming the
 * commit its index already has, which the next writer completes (rollForwardMain).
 */
export class RefUpdate {
  private done = false;

  private constructor(
    private readonly ref: string,
    private readonly next: string,
    private readonly fsync: boolean,
  ) {}

  static prepare(gitdir: string, name: string, expected: string | null, next: string, fsync: boolean): RefUpdate | 'moved' | 'locked' {
    const ref = join(gitdir, name);
    const lock = ref + '.lock';
    mkdirSync(dirname(ref), { recursive: true });
    let fd: number;
    try {
      fd = openSync(lock, 'wx', 0o644);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return 'locked';
      throw e;
    }
    let ok = false;
    try {
      if (readRef(gitdir, name) !== expected) return 'moved';
      writeSync(fd, next + '\n');
      if (fsync) fsyncSync(fd);
      ok = true;
    } finally {
      closeSync(fd);
      if (!ok) unlinkSync(lock);
    }
    return new RefUpdate(ref, next, fsync);
  }

  /** Moves the ref (renames the lock over it). */
  publish(): void {
    if (this.done) return;
    try {
      renameSync(this.ref + '.lock', this.ref);
    } catch (e) {
      // Completed meanwhile by rollForwardMain: the ref already names the commit.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || readFileSync(this.ref, 'utf8').trim() !== this.next) throw e;
    }
    this.done = true;
    if (this.fsync) fsyncDirs([dirname(this.ref)]);
  }

  /** Gives the lock up without moving the ref. */
  release(): void {
    if (this.done) return;
    this.done = true;
    try {
      unlinkSync(this.ref + '.lock');
    } catch {
      /* already gone */
    }
  }
}

/**
 * Completes a move of `main` that a writer prepared and could not publish (it died after its
 * index had committed `indexed`): the lock names exactly that commit. A lock with any other
 * content (a push in progress, a partly written lock) is left alone. True when main moved.
 */
export function rollForwardMain(gitdir: string, indexed: string): boolean {
  const lock = join(gitdir, MAIN_REF + '.lock');
  let content: string;
  try {
    content = readFileSync(lock, 'utf8').trim();
  } catch {
    return false;
  }
  if (content !== indexed) return false;
  renameSync(lock, join(gitdir, MAIN_REF));
  return true;
}

/** When the lock on `main` was last written (epoch ms), or null when there is none. */
export function mainLockTime(gitdir: string): number | null {
  try {
    return statSync(join(gitdir, MAIN_REF + '.lock')).mtimeMs;
  } catch {
    return null;
  }
}

/** Removes a lock that its owner abandoned (a crashed process); only called for old locks. */
export function breakMainLock(gitdir: string): void {
  try {
    unlinkSync(join(gitdir, MAIN_REF + '.lock'));
  } catch {
    /* already gone */
  }
}
