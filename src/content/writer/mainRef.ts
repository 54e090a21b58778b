import type { Logger } from 'pino';
import { breakMainLock, mainLockAge, type RefUpdate } from '../git/refs.ts';
import type { Repo } from '../git/repo.ts';

/** The ref moved under us (a push): index what arrived and rebuild the batch on the new tip. */
export class RefMoved extends Error {}
/** Another process holds `main.lock` right now. */
export class RefLocked extends Error {}

/** A lock older than this is taken to be abandoned by a crashed process. */
const STALE_LOCK_MS = 30_000;

/** The first step of moveMain (see RefUpdate): throws RefMoved or RefLocked; publish() moves main. */
export function prepareMain(repo: Repo, before: string | null, after: string): RefUpdate {
  const outcome = repo.prepareMain(before, after);
  if (outcome === 'moved') throw new RefMoved();
  if (outcome === 'locked') throw new RefLocked();
  return outcome;
}

/** Moves `main` from `before` to `after` by compare-and-swap; throws RefMoved or RefLocked when it cannot. */
export function moveMain(repo: Repo, before: string | null, after: string): void {
  const outcome = repo.casMain(before, after);
  if (outcome === 'moved') throw new RefMoved();
  if (outcome === 'locked') throw new RefLocked();
}

/**
 * Waits out another process's `main.lock` across the attempts of one batch: a lock older than
 * STALE_LOCK_MS is broken, and after twice that long the batch gives up.
 */
export class MainLockWait {
  private since = 0;

  constructor(
    private readonly repo: Repo,
    private readonly projectId: string,
    private readonly logger: Logger | undefined,
  ) {}

  /** Waits a moment before the next attempt; false once the lock stayed too long (the calls fail with gaveUp()). */
  async wait(): Promise<boolean> {
    this.since ||= Date.now();
    if ((mainLockAge(this.repo.gitdir) ?? 0) > STALE_LOCK_MS) {
      this.logger?.warn({ projectId: this.projectId }, 'removing an abandoned refs/heads/main.lock');
      breakMainLock(this.repo.gitdir);
    } else if (Date.now() - this.since > 2 * STALE_LOCK_MS) {
      return false;
    }
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
    return true;
  }

  gaveUp(): Error {
    return new Error('refs/heads/main stays locked by another process');
  }
}
