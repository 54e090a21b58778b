import { chmod, mkdir, readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { HostShell } from './hostShell.ts';
import { hasFineCtime, removeFolder, removeTree } from './materialize.ts';
import { MountNamespace } from './mountNamespace.ts';
import { mountOverlay, mountPointsUnder, mountTmpfs, unmount } from './mounts.ts';

export type Strategy = 'overlay' | 'copy';

/** How the pool makes folders here, decided once at start-up. */
export interface PoolSetup {
  /** The pool's root as this process reaches it: a view into `namespace` when there is one. */
  root: string;
  /** Runs the pool's programs (mount, cp, rm), inside `namespace` when there is one. */
  host: HostShell;
  /** The mount namespace holding the pool's mounts (null: the pool mounts nothing). */
  namespace: MountNamespace | null;
  strategy: Strategy;
  /** Each folder gets its own size-capped tmpfs (needs root). */
  tmpfs: boolean;
  /** ctime is distinct for a change made right after it was read (see hasFineCtime). */
  fineCtime: boolean;
  /** Where pristine checkouts go: a tmpfs when mounts are possible (writing 10,000 files there is several times faster than to disk). */
  pristineDir: string;
  /** Where one goes that does not fit the tmpfs. */
  pristineDiskDir: string | null;
  runsDir: string;
  /** How the working folder's size is capped, for logs and the endpoint's description. */
  diskCapNote: string;
}

export interface SetupOptions {
  strategy: 'auto' | Strategy;
  /** Whether to mount at all; default: when running as root. */
  mounts?: boolean;
  /** Size of the tmpfs holding pristine checkouts. */
  pristineBytes: number;
}

/**
 * Clears what a previous process left under `root` (mounts first, deepest first, then files),
 * then finds out what this host allows: the pool's mounts are made in a mount namespace of its
 * own (MountNamespace: they go with the process however it ends), where a tmpfs and an overlay
 * are mounted once on trial. Without one, nothing is mounted.
 */
export async function setUpPool(root: string, o: SetupOptions): Promise<PoolSetup> {
  // Mounts left in the host's namespace by versions that mounted there are cleared too.
  const plain = new HostShell();
  try {
    await clearRoot(plain, root);
  } finally {
    plain.close();
  }
  await chmod(root, 0o711);
  const isRoot = process.getuid?.() === 0;
  const mounts = o.mounts ?? isRoot;
  let namespace: MountNamespace | null = null;
  let refused = '';
  if (mounts) {
    try {
      namespace = await MountNamespace.start();
    } catch (e) {
      refused = `no mount namespace of its own: ${(e as Error).message}`;
    }
  }
  const host = new HostShell(2, namespace?.enter ?? []);
  try {
    return await probe(host, namespace, namespace ? namespace.view(root) : root, o, { mounts, isRoot, refused });
  } catch (e) {
    host.close();
    namespace?.close();
    throw e;
  }
}

async function probe(host: HostShell, namespace: MountNamespace | null, root: string, o: SetupOptions, h: { mounts: boolean; isRoot: boolean; refused: string }): Promise<PoolSetup> {
  const runsDir = join(root, 'runs');
  const pristineDir = join(root, 'pristine');
  await mkdir(runsDir, { mode: 0o711 });
  await mkdir(pristineDir, { mode: 0o700 });
  let tmpfs = false;
  let overlay = false;
  let refused = h.refused;
  if (namespace) {
    try {
      await mountTmpfs(host, pristineDir, { bytes: o.pristineBytes, inodes: Math.max(65_536, Math.ceil(o.pristineBytes / 2048)), mode: 0o700 });
      tmpfs = true;
      if (o.strategy !== 'copy') overlay = await overlayWorks(host, join(root, 'probe'), pristineDir);
    } catch (e) {
      refused = (e as Error).message;
    }
  }
  if (o.strategy === 'overlay' && !overlay) throw new Error(`overlay workspaces are not possible here${refused ? `: ${refused}` : ''}`);
  const strategy: Strategy = overlay ? 'overlay' : 'copy';
  const pristineDiskDir = tmpfs ? join(root, 'pristine-disk') : null;
  if (pristineDiskDir) await mkdir(pristineDiskDir, { mode: 0o700 });
  // Copies are compared by ctime: only there does its granularity matter.
  const fineCtime = strategy === 'overlay' || (await fineCtimeIn(host, runsDir, tmpfs));
  return {
    root,
    host,
    namespace,
    strategy,
    tmpfs,
    fineCtime,
    pristineDir,
    pristineDiskDir,
    runsDir,
    diskCapNote: capNote(strategy, tmpfs, h.mounts, h.isRoot, refused),
  };
}

function capNote(strategy: Strategy, tmpfs: boolean, mounts: boolean, isRoot: boolean, refused: string): string {
  if (strategy === 'overlay') {
    return 'each working folder is an overlay over the pristine checkout whose writable layer is its own tmpfs of the disk limit: what a command writes beyond it (a file it changes counts whole) fails with ENOSPC';
  }
  if (tmpfs) return "each working folder is its own tmpfs of the subtree's size plus the disk limit: writing past it fails with ENOSPC";
  const why = !mounts ? (isRoot ? 'mounts are turned off' : 'the service does not run as root') : `mounting a tmpfs failed (${refused})`;
  return `${why}: the working folder's total size is not capped, only each file's (the runtime's RLIMIT_FSIZE)`;
}

/** The pool's own folders under its root; anything else there (a runtime's probe, say) is left alone. */
const OWN = ['runs', 'pristine', 'pristine-disk', 'probe'];

/**
 * Several workers (issue 29), at the box's start before any other worker runs: what pools left
 * under `sandboxDir` besides `own` is cleared too (a single process's folders in `sandboxDir`
 * itself; other workers' pools, the subfolders holding a pool's folders).
 */
export async function clearLeftoverPools(sandboxDir: string, own: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(sandboxDir);
  } catch {
    return;
  }
  const host = new HostShell();
  try {
    await clearOwn(host, sandboxDir);
    for (const name of names) {
      const dir = join(sandboxDir, name);
      if (dir === own || OWN.includes(name)) continue;
      const inside = await readdir(dir).catch(() => [] as string[]);
      if (!inside.some((n) => OWN.includes(n))) continue;
      await clearOwn(host, dir);
      await rmdir(dir).catch(() => undefined);
    }
  } finally {
    host.close();
  }
}

async function clearRoot(host: HostShell, root: string): Promise<void> {
  await mkdir(root, { recursive: true, mode: 0o711 });
  await clearOwn(host, root);
}

/** Unmounts (deepest first) and removes the pool's folders under `root`. */
export async function clearOwn(host: HostShell, root: string): Promise<void> {
  for (const name of OWN) {
    const dir = join(root, name);
    await unmount(host, await mountPointsUnder(dir));
    await removeTree(host, dir);
  }
}

async function overlayWorks(host: HostShell, probe: string, lowerArea: string): Promise<boolean> {
  const lower = join(lowerArea, '.probe');
  const layout = { base: probe, mounts: [] as string[] };
  try {
    await mkdir(lower);
    await mkdir(join(probe, 'dir'), { recursive: true });
    await mkdir(join(probe, 'rw'));
    await mountTmpfs(host, join(probe, 'rw'), { bytes: 1 << 20, inodes: 64, mode: 0o700 });
    layout.mounts.unshift(join(probe, 'rw'));
    await mkdir(join(probe, 'rw', 'upper'));
    await mkdir(join(probe, 'rw', 'work'));
    await mountOverlay(host, join(probe, 'dir'), lower, join(probe, 'rw', 'upper'), join(probe, 'rw', 'work'));
    layout.mounts.unshift(join(probe, 'dir'));
    return true;
  } catch {
    return false;
  } finally {
    await removeFolder(host, layout);
    await removeTree(host, lower);
  }
}

async function fineCtimeIn(host: HostShell, runsDir: string, tmpfs: boolean): Promise<boolean> {
  if (!tmpfs) return hasFineCtime(runsDir);
  const layout = { base: join(runsDir, 'probe'), mounts: [] as string[] };
  try {
    await mkdir(layout.base);
    await mountTmpfs(host, layout.base, { bytes: 1 << 16, inodes: 16, mode: 0o700 });
    layout.mounts.push(layout.base);
    return hasFineCtime(layout.base);
  } finally {
    await removeFolder(host, layout);
  }
}
