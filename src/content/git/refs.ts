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
  let renamed = false;
  try {
    if (readRef(gitdir, name) !== expected) return 'moved';
    writeSync(fd, next + '\n');
    if (fsync) fsyncSync(fd);
    closeSync(fd);
    fd = -1;
    renameSync(lock, ref);
    renamed = true;
    if (fsync) fsyncDirs([dirname(ref)]);
    return 'ok';
  } finally {
    if (fd >= 0) closeSync(fd);
    if (!renamed) unlinkSync(lock);
  }
}

/** Age in ms of a lock left on `main`, or null when there is none. */
export function mainLockAge(gitdir: string): number | null {
  try {
    return Date.now() - statSync(join(gitdir, MAIN_REF + '.lock')).mtimeMs;
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
