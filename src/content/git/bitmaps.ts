import { readdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Git uses one reachability bitmap per repository and warns on every clone about the others
 * ("ignoring extra bitmap file"). Two appear when another repack (an admin's `git gc`) ran
 * alongside ours: keep the newest pack's bitmap, drop the rest (bitmaps are only an index).
 * Returns how many were removed.
 */
export function dropExtraBitmaps(gitdir: string): number {
  const dir = join(gitdir, 'objects', 'pack');
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.bitmap'));
  } catch {
    return 0;
  }
  if (names.length <= 1) return 0;
  const age = (n: string) => {
    try {
      return statSync(join(dir, n.replace(/\.bitmap$/, '.pack'))).mtimeMs;
    } catch {
      return -1; // a bitmap without its pack
    }
  };
  const [, ...extra] = names.map((n) => ({ n, t: age(n) })).sort((a, b) => b.t - a.t);
  let removed = 0;
  for (const { n } of extra) {
    try {
      unlinkSync(join(dir, n));
      removed++;
    } catch {
      /* gone already */
    }
  }
  return removed;
}
