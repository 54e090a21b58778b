import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** A command's tail that signals it has run (`ready`) and waits until the test lets it finish (`go`). */
export const HOLD = 'touch ready; while [ ! -e go ]; do sleep 0.02; done; rm go ready';

/**
 * The workspace of a command that has signalled `ready` and waits for `go` (polled with a deadline).
 * The pool's root is read once the pool is ready: before, it is the plain path, not the view into
 * the pool's mount namespace where the workspaces are (a first command on a slow start was never seen).
 */
export async function heldWorkspace(pool: { ready: Promise<void>; reachableRoot: string }, deadlineMs = 15_000): Promise<string> {
  const end = Date.now() + deadlineMs;
  await pool.ready;
  const root = pool.reachableRoot;
  for (;;) {
    const found = await findFile(root, 'ready', 8);
    if (found) return found;
    if (Date.now() > end) throw new Error('no command signalled ready before the deadline');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function findFile(dir: string, name: string, depth: number): Promise<string | null> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return null;
  }
  if (entries.some((e) => e.name === name && e.isFile())) return dir;
  if (depth === 0) return null;
  for (const e of entries) {
    // An overlay's layers (rw/upper) hold `ready` too; writing `go` there, behind the overlay's
    // back, is undefined (the command may never see it). Which one readdir lists first varies.
    if (!e.isDirectory() || e.name === 'rw') continue;
    const found = await findFile(join(dir, e.name), name, depth - 1);
    if (found) return found;
  }
  return null;
}
