import { readFile } from 'node:fs/promises';
import type { HostShell } from './hostShell.ts';
import { inside } from './mountNamespace.ts';

/**
 * The mounts of the workspace pool, made with the system `mount`/`umount` programs (Node has no
 * mount call) run by the pool's HostShell. They are made when a folder is made or dropped, never
 * when a pooled folder is handed out again.
 */

export interface TmpfsOptions {
  bytes: number;
  inodes: number;
  /** Mode of its root folder, e.g. 0o755. */
  mode: number;
  owner?: { uid: number; gid: number } | null;
}

/** A tmpfs of at most `bytes` and `inodes`, without set-uid programs or device files. */
export function mountTmpfs(host: HostShell, dir: string, o: TmpfsOptions): Promise<void> {
  const options = [`size=${Math.max(4096, Math.ceil(o.bytes))}`, `nr_inodes=${o.inodes}`, `mode=${o.mode.toString(8).padStart(4, '0')}`, 'nosuid', 'nodev'];
  if (o.owner) options.push(`uid=${o.owner.uid}`, `gid=${o.owner.gid}`);
  return host.run('mount', ['-t', 'tmpfs', '-o', options.join(','), 'tmpfs', dir]);
}

/**
 * An overlay of `upper` over the read-only `lower` at `dir`. Renamed folders are copied rather
 * than redirected and files are copied up whole, so the upper layer holds exactly what changed
 * (folderDiff.ts reads it) and the lower one is never written.
 */
export function mountOverlay(host: HostShell, dir: string, lower: string, upper: string, work: string): Promise<void> {
  for (const p of [lower, upper, work]) {
    if (/[,:\s\\]/.test(p)) return Promise.reject(new Error(`overlay layer path may not contain ',', ':', '\\' or spaces: ${p}`));
  }
  const options = [`lowerdir=${lower}`, `upperdir=${upper}`, `workdir=${work}`, 'redirect_dir=off', 'metacopy=off', 'index=off', 'nosuid', 'nodev'];
  return host.run('mount', ['-t', 'overlay', '-o', options.join(','), 'overlay', dir]);
}

/** Unmounts `targets` in order (inner mounts first); a busy one is detached lazily (it goes when its last user does). */
export async function unmount(host: HostShell, targets: string[]): Promise<void> {
  if (targets.length === 0) return;
  try {
    await host.run('umount', targets);
  } catch {
    for (const t of targets) {
      if ((await mountPointsUnder(t)).includes(t)) await host.run('umount', ['-l', t]);
    }
  }
}

/**
 * Mount points at or beneath `root`, deepest first: from /proc/self/mountinfo, or for a view of a
 * mount namespace (MountNamespace) from its holder's, answered as views too.
 */
export async function mountPointsUnder(root: string): Promise<string[]> {
  const ns = inside(root);
  let info: string;
  try {
    info = await readFile(ns ? `/proc/${ns.pid}/mountinfo` : '/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const under = ns ? ns.path : root;
  const points: string[] = [];
  for (const line of info.split('\n')) {
    const field = line.split(' ')[4];
    if (!field) continue;
    // Spaces, tabs, newlines and backslashes are written as octal escapes.
    const point = field.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    if (point === under || point.startsWith(`${under}/`)) points.push(ns ? `/proc/${ns.pid}/root${point}` : point);
  }
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}
