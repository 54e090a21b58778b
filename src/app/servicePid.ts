import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `<data folder>/cns.pid` names the `cns serve` process (one process, or the primary of several
 * workers) while it runs: offline admin commands that rewrite the index (`cns reindex`) refuse
 * to run beside it, as they would be a second writer of the same repositories.
 */
const file = (dataDir: string) => join(dataDir, 'cns.pid');

export function writeServicePid(dataDir: string, pid = process.pid): () => void {
  writeFileSync(file(dataDir), `${pid}\n`);
  return () => {
    if (runningService(dataDir) === pid) rmSync(file(dataDir), { force: true });
  };
}

/** The pid of a live `cns serve` on this data folder, or null. */
export function runningService(dataDir: string): number | null {
  let pid: number;
  try {
    pid = Number(readFileSync(file(dataDir), 'utf8').trim());
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : null;
  }
}
