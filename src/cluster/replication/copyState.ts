import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export type CopyRole = 'primary' | 'replica';

/**
 * What a copy of a project knows of the cluster, kept beside its git data so that it follows the
 * copy: the highest epoch it accepted or was sealed at (it refuses anything older), its role, and
 * the epoch its `main` was last written under (a failover prefers the copy whose history is of the
 * latest epoch: an old primary's unacknowledged tail can be as long as an acknowledged history).
 * A copy without the file is at epoch 0, a replica.
 */
export interface CopyState {
  epoch: number;
  role: CopyRole;
  tipEpoch: number;
}

const FILE = 'cns-copy.json';

export function readCopyState(gitdir: string): CopyState {
  try {
    const s = JSON.parse(readFileSync(join(gitdir, FILE), 'utf8')) as Partial<CopyState>;
    if (Number.isSafeInteger(s.epoch) && (s.role === 'primary' || s.role === 'replica')) return { epoch: s.epoch!, role: s.role, tipEpoch: Number.isSafeInteger(s.tipEpoch) ? s.tipEpoch! : 0 };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  return { epoch: 0, role: 'replica', tipEpoch: 0 };
}

/** Written to a temporary file and renamed (fsynced when the store is durable): the epoch never goes back after a crash. */
export function writeCopyState(gitdir: string, state: CopyState, fsync: boolean): void {
  const tmp = join(gitdir, `${FILE}.tmp-${process.pid}`);
  const fd = openSync(tmp, 'w', 0o644);
  try {
    writeSync(fd, JSON.stringify(state));
    if (fsync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, join(gitdir, FILE));
}

/** The epoch the copy's `main` was last written under: a primary writes under its own epoch. */
export const tipEpochOf = (s: CopyState): number => (s.role === 'primary' ? s.epoch : s.tipEpoch);
