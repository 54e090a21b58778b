import { execFile } from 'node:child_process';
import type { Logger } from 'pino';
import type { Db } from '../../db/database.ts';
import { dropExtraBitmaps } from '../git/bitmaps.ts';
import type { Repo } from '../git/repo.ts';
import type { IndexStore } from '../indexStore.ts';

export interface RepackTarget {
  projectId: string;
  db: Db;
  index: IndexStore;
  repo: Repo;
  /** The git binary, null when there is none (then nothing is repacked). */
  git: string | null;
  onGitMissing: () => void;
  logger?: Logger;
}

/** True once `every` commits (0: never) were written since the last repack. */
export function repackDue(target: RepackTarget, every: number): boolean {
  if (every <= 0 || target.git === null) return false;
  const st = target.index.indexState(target.projectId);
  return st !== null && st.commitsSinceRepack >= every;
}

/**
 * `git repack -ad` packs everything reachable into one pack and deletes the loose copies. The
 * caller holds the project (writes wait); readers keep going because a failed read retries with
 * a fresh pack cache. Unreferenced loose objects (blobs of calls in flight) are kept.
 */
export async function repack(target: RepackTarget): Promise<boolean> {
  const { git, repo, index, projectId } = target;
  if (git === null || !repo.exists()) return false;
  try {
    await new Promise<void>((resolve, reject) => {
      execFile(git, ['repack', '-a', '-d', '-q'], { cwd: repo.gitdir }, (err) => (err ? reject(err) : resolve()));
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      target.onGitMissing();
      return false;
    }
    target.logger?.warn({ err: e, projectId }, 'git repack failed');
    return false;
  }
  repo.dropCache();
  dropExtraBitmaps(repo.gitdir);
  const st = index.indexState(projectId);
  if (st) target.db.transaction(() => index.setIndexState(projectId, { ...st, commitsSinceRepack: 0 })).immediate();
  return true;
}
