import type { Logger } from 'pino';
import { breakMainLock, mainLockTime, type RefUpdate } from '../git/refs.ts';
import type { Repo } from '../git/repo.ts';

/** The ref moved under us (a push): index what arrived and rebuild the batch on the new tip. */
export class RefMoved extends Error {}
/** Another process holds `main.lock` right now. */
export class RefLocked extends Error {}

/** A lock older than this is taken to be abandoned by a crashed process. */
const STALE_LOCK_MS = 30_000;
/**
 * A lock written before this process became the project's only writer was left by a writer that
 * is gone; it is broken once this old, the time a dying writer's last step (a database commit
 * already sent, a git child's rename) takes to land.
 */
const GONE_WRITER_GRACE_MS = 1_000;

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
 * Waits out another process's `main.lock` across the attempts of one batch. A lock written before
 * this process became the project's only writer (`soleWriterSince`: a worker killed inside its
 * write transaction leaves one naming a commit its index never committed) is broken after
 * GONE_WRITER_GRACE_MS; any lock older than STALE_LOCK_MS is broken; after twice that long the
 * batch gives up.
 */
export class MainLockWait {
  private since = 0;

  constructor(
    private readonly repo: Repo,
    private readonly projectId: string,
    private readonly logger: Logger | undefined,
    private readonly soleWriterSince?: number,
  ) {}

  /** Waits a moment before the next attempt; false once the lock stayed too long (the calls fail with gaveUp()). */
  async wait(): Promise<boolean> {
    const now = Date.now();
    this.since ||= now;
    const written = mainLockTime(this.repo.gitdir);
    if (written !== null && this.soleWriterSince !== undefined && written < this.soleWriterSince && now - written >= GONE_WRITER_GRACE_MS) {
      this.logger?.warn({ projectId: this.projectId }, 'removing the refs/heads/main.lock of a writer that is gone');
      breakMainLock(this.repo.gitdir);
    } else if (written !== null && now - written > STALE_LOCK_MS) {
      this.logger?.warn({ projectId: this.projectId }, 'removing an abandoned refs/heads/main.lock');
      breakMainLock(this.repo.gitdir);
    } else if (now - this.since > 2 * STALE_LOCK_MS) {
      return false;
    }
    await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
    return true;
  }

  gaveUp(): Error {
    return new Error('refs/heads/main stays locked by another process');
  }
}
