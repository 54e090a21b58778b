import * as fs from 'node:fs';
import { chmod, chown, lstat, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ContentReads } from '../../content/contentReads.ts';
import { scanFolder, type FolderScan } from './folderScan.ts';
import type { HostShell } from './hostShell.ts';
import { mountOverlay, mountTmpfs, unmount } from './mounts.ts';
import { PristineTree } from './pristineTree.ts';

export type Owner = { uid: number; gid: number } | null;

/** Whether files must be handed to `owner` (a different uid than ours). */
export function needsChown(owner: Owner): owner is { uid: number; gid: number } {
  return owner !== null && (owner.uid !== process.getuid?.() || owner.gid !== process.getgid?.());
}

/**
 * Exports a subtree at a commit into `dir` (made here) and hands it to `owner`: the pristine
 * checkout folders are made from. Returns what it holds.
 */
export async function exportPristine(
  content: Pick<ContentReads, 'exportTree'>,
  dir: string,
  what: { projectId: string; scope: string; commitId: string | null; owner: Owner },
): Promise<PristineTree> {
  await mkdir(dir, { mode: 0o755 });
  await chmod(dir, 0o755);
  const owner = needsChown(what.owner) ? what.owner : null;
  if (owner) await chown(dir, owner.uid, owner.gid);
  // What the export wrote is what the folder holds: no need to walk it.
  return new PristineTree(what.commitId ? await content.exportTree(what.projectId, what.commitId, what.scope, dir, { owner }) : []);
}

/** Where a folder lives: `base` holds it and, for an overlay, the layers' tmpfs. */
export interface FolderLayout {
  base: string;
  /** The folder the command works in. */
  dir: string;
  /** Mount points to unmount when dropping it, inner first. */
  mounts: string[];
  /** The overlay's upper layer (null for a copy). */
  upper: string | null;
}

/**
 * An overlay folder: the pristine checkout as the read-only lower layer, an upper layer on a
 * tmpfs of `capBytes` (what the command may write, files it changes counted whole). Made in two
 * mounts whatever the number of files.
 */
export async function makeOverlayFolder(host: HostShell, base: string, lower: string, capBytes: number, inodes: number, owner: Owner): Promise<FolderLayout> {
  const dir = join(base, 'dir');
  const rw = join(base, 'rw');
  await mkdir(dir, { recursive: true, mode: 0o711 });
  await mkdir(rw, { mode: 0o700 });
  await chmod(base, 0o711);
  const layout: FolderLayout = { base, dir, mounts: [], upper: join(rw, 'upper') };
  try {
    await mountTmpfs(host, rw, { bytes: capBytes, inodes, mode: 0o700 });
    layout.mounts.unshift(rw);
    // The upper layer's root is the folder's root: the command's uid must own it to write there.
    await mkdir(layout.upper!, { mode: 0o755 });
    await mkdir(join(rw, 'work'), { mode: 0o700 });
    if (needsChown(owner)) await chown(layout.upper!, owner.uid, owner.gid);
    await mountOverlay(host, dir, lower, layout.upper!, join(rw, 'work'));
    layout.mounts.unshift(dir);
    return layout;
  } catch (e) {
    await removeFolder(host, layout);
    throw e;
  }
}

/**
 * A copied folder (`cp -a` of the pristine checkout, owners and modes kept), on its own tmpfs of
 * the checkout's size plus `capBytes` when mounts are possible. Returns it with its baseline scan.
 */
export async function makeCopyFolder(
  host: HostShell,
  base: string,
  pristine: { dir: string; tree: PristineTree },
  o: { capBytes: number; inodes: number; owner: Owner; tmpfs: boolean; fineCtime: boolean },
): Promise<{ layout: FolderLayout; baseline: FolderScan }> {
  const dir = join(base, 'dir');
  await mkdir(dir, { recursive: true, mode: 0o755 });
  await chmod(base, 0o711);
  const layout: FolderLayout = { base, dir, mounts: [], upper: null };
  try {
    if (o.tmpfs) {
      const inodes = pristine.tree.entries.size + o.inodes;
      await mountTmpfs(host, dir, { bytes: pristine.tree.pageBytes + o.capBytes, inodes, mode: 0o755, owner: needsChown(o.owner) ? o.owner : null });
      layout.mounts.push(dir);
    }
    await host.run('cp', ['-a', '--', `${pristine.dir}/.`, dir]);
    const copied = Date.now();
    // With timestamps of the clock's tick (kernels before multigrain timestamps), a write in the
    // tick of the copy could keep the copy's ctime: let the tick pass before taking the baseline.
    if (!o.fineCtime) await new Promise((r) => setTimeout(r, Math.max(0, copied + 25 - Date.now())));
    return { layout, baseline: await scanFolder(dir) };
  } catch (e) {
    await removeFolder(host, layout);
    throw e;
  }
}

/** Unmounts a folder's mounts and removes it. */
export async function removeFolder(host: HostShell, layout: Pick<FolderLayout, 'base' | 'mounts'>): Promise<void> {
  await unmount(host, layout.mounts);
  layout.mounts.length = 0;
  await removeTree(host, layout.base);
}

/**
 * rm -rf run by the host shell (Node's recursive rm holds the event loop for 100 ms and more on
 * 10,000 files). What a command running as our own uid made unreadable (a folder chmod 000) is
 * opened up first when the plain removal fails.
 */
export async function removeTree(host: HostShell, path: string): Promise<void> {
  // Nothing there (most of a pool's own folders when a service starts): no process to spawn.
  // The paths a host shell is given are this process's view of them too (/proc/PID/root/…).
  if (await lstat(path).then(() => false, (err: NodeJS.ErrnoException) => err.code === 'ENOENT')) return;
  try {
    await host.run('rm', ['-rf', '--', path]);
  } catch {
    await host.run('chmod', ['-R', 'u+rwx', '--', path]).catch(() => undefined);
    await host.run('rm', ['-rf', '--', path]);
  }
}

/**
 * Whether a change made right after a file's ctime was read gets a later ctime (multigrain
 * timestamps, Linux 6.13+) on the file system of `dir`; if not, changes within one clock tick
 * would look unchanged to a stat comparison.
 */
export function hasFineCtime(dir: string): boolean {
  const probe = join(dir, `.ctime-probe-${process.pid}`);
  try {
    for (let i = 0; i < 3; i++) {
      fs.writeFileSync(probe, 'a');
      const before = fs.lstatSync(probe).ctimeMs;
      fs.writeFileSync(probe, 'b');
      if (fs.lstatSync(probe).ctimeMs === before) return false;
    }
    return true;
  } finally {
    fs.rmSync(probe, { force: true });
  }
}
