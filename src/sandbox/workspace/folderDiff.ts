import * as fs from 'node:fs';
import { open } from 'node:fs/promises';
import { TimeSlice } from '../../content/timeSlice.ts';
import { kindOf, kindProblem, nameProblem, sameEntry, type EntryKind, type FolderScan } from './folderScan.ts';
import type { PristineTree } from './pristineTree.ts';
import type { FileChange, FolderChanges, SkippedEntry } from './workspace.ts';

/**
 * Collects what differs between a folder and its pristine tree, once per path: a pristine entry
 * that is gone is deleted with everything beneath it, a file whose stat moved is compared byte
 * by byte with the pristine file before it counts as modified.
 */
class Changes {
  private readonly files = new Map<string, FileChange>();
  private readonly folders = new Map<string, FileChange>();
  private readonly skipped: SkippedEntry[] = [];

  constructor(
    private readonly pristine: PristineTree,
    private readonly pristineDir: string,
  ) {}

  skip(path: string, reason: string): void {
    this.skipped.push({ path, reason });
  }

  /** The pristine entry at `path` is no longer there (or no longer a file / folder). */
  gone(path: string): void {
    const p = this.pristine.get(path);
    if (!p) return;
    if (p.kind === 'file') {
      this.files.set(path, { path, action: 'deleted' });
      return;
    }
    if (this.folders.has(path)) return;
    this.folders.set(path, { path, action: 'deleted' });
    for (const [below, e] of this.pristine.descendants(path)) {
      (e.kind === 'file' ? this.files : this.folders).set(below, { path: below, action: 'deleted' });
    }
  }

  /** A file or folder at `path` in the folder, not known to be as it was handed out. */
  async present(path: string, kind: 'file' | 'dir', size: number, dir: string): Promise<void> {
    const p = this.pristine.get(path);
    if (kind === 'dir') {
      if (p?.kind === 'dir') return;
      if (p) this.gone(path);
      this.folders.set(path, { path, action: 'created' });
      return;
    }
    if (p?.kind === 'file') {
      if (size !== p.size || !(await sameBytes(`${dir}/${path}`, `${this.pristineDir}/${path}`, size))) {
        this.files.set(path, { path, action: 'modified' });
      }
      return;
    }
    if (p) this.gone(path);
    this.files.set(path, { path, action: 'created' });
  }

  has(path: string): boolean {
    return this.files.has(path) || this.folders.has(path);
  }

  result(): FolderChanges {
    const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
    return {
      files: [...this.files.values()].sort(byPath),
      folders: [...this.folders.values()].sort(byPath),
      skipped: this.skipped.sort(byPath),
    };
  }
}

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1);
const join = (dir: string, name: string) => (dir === '' ? name : `${dir}/${name}`);
const inside = (path: string, dir: string) => dir === '' || path === dir || path.startsWith(`${dir}/`);

/**
 * A copied folder against its pristine tree. `now` is a full scan; an entry whose inode, change
 * time, size and mode equal the `baseline` (the scan taken when the folder was handed out, when
 * it equalled the pristine tree) is unchanged without reading it: the command cannot set ctime.
 */
export async function diffCopy(dir: string, pristineDir: string, pristine: PristineTree, baseline: FolderScan, now: FolderScan): Promise<FolderChanges> {
  const c = new Changes(pristine, pristineDir);
  const unknown: string[] = [];
  for (const u of now.unreadable) {
    c.skip(u.path, u.reason);
    unknown.push(u.path);
  }
  for (const [path, cur] of now.entries) {
    if (path === '') continue;
    const problem = nameProblem(baseName(path)) ?? kindProblem(cur.kind);
    if (problem) {
      c.skip(path, problem);
      c.gone(path);
      continue;
    }
    const before = baseline.entries.get(path);
    if (before && sameEntry(before, cur)) continue;
    await c.present(path, cur.kind as 'file' | 'dir', cur.size, dir);
  }
  for (const path of pristine.entries.keys()) {
    // A folder that could not be read may still hold what it held.
    if (!now.entries.has(path) && !c.has(path) && !unknown.some((u) => inside(path, u))) c.gone(path);
  }
  return c.result();
}

/**
 * An overlay folder against its pristine tree (the overlay's lower layer). Only what the command
 * touched is in the upper layer (written files copied up whole, new entries, whiteouts for
 * deletions, opaque folders for replaced ones), so only that is walked; what the folder shows
 * (the merged view) is what counts, the upper layer only says where to look.
 */
export async function diffOverlay(merged: string, upper: string, pristineDir: string, pristine: PristineTree): Promise<FolderChanges> {
  const c = new Changes(pristine, pristineDir);
  const slice = new TimeSlice(4);

  const visit = async (path: string, freshParent: boolean): Promise<void> => {
    let st: fs.Stats | null = null;
    try {
      st = fs.lstatSync(`${merged}/${path}`);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
        c.skip(path, `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
        return;
      }
    }
    await slice.tick();
    if (!st) {
      c.gone(path);
      return;
    }
    const kind: EntryKind = kindOf(st);
    const problem = nameProblem(baseName(path)) ?? kindProblem(kind);
    if (problem) {
      c.skip(path, problem);
      c.gone(path);
      return;
    }
    const wasDir = pristine.get(path)?.kind === 'dir';
    await c.present(path, kind as 'file' | 'dir', st.size, merged);
    if (kind !== 'dir') return;
    // A folder that was there is merged with the lower one: its touched entries are in the upper
    // layer. A new or replaced one is all new: walk what the folder shows.
    if (wasDir && !freshParent) await walk(path, `${upper}/${path}`, false);
    else await walk(path, `${merged}/${path}`, true);
  };

  const walk = async (rel: string, listDir: string, fresh: boolean): Promise<void> => {
    const names = listNames(listDir, rel, c);
    if (names === null) return;
    for (const name of names) await visit(join(rel, name), fresh);
    if (fresh) return;
    // Lower entries hidden by an opaque folder (removed, then made again) are gone too. The root
    // cannot be removed: with nothing in its upper layer, it hides nothing.
    if (rel === '' && names.length === 0) return;
    const shown = new Set(listNames(`${merged}/${rel}`, rel, null) ?? []);
    for (const name of pristine.children(rel)) if (!shown.has(name)) c.gone(join(rel, name));
  };

  await walk('', upper, false);
  return c.result();
}

/** Names in a folder; names that are not UTF-8 are skipped (and reported when `c` is given). */
function listNames(dir: string, rel: string, c: Changes | null): string[] | null {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (e) {
    c?.skip(rel, `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    return null;
  }
  if (!names.some((n) => n.includes('\uFFFD'))) return names;
  const strict = new TextDecoder('utf-8', { fatal: true });
  const good: string[] = [];
  for (const raw of fs.readdirSync(dir, { encoding: 'buffer' })) {
    try {
      good.push(strict.decode(raw));
    } catch {
      c?.skip(join(rel, raw.toString('utf8')), 'the name is not valid UTF-8');
    }
  }
  return good;
}

/** Whether two files of `size` bytes hold the same bytes (read in 64 KiB blocks, stopping at the first difference). */
export async function sameBytes(a: string, b: string, size: number): Promise<boolean> {
  const [fa, fb] = await Promise.all([open(a, 'r'), open(b, 'r')]);
  try {
    const block = Math.min(size, 64 * 1024) || 1;
    const ba = Buffer.allocUnsafe(block);
    const bb = Buffer.allocUnsafe(block);
    for (let pos = 0; ; pos += block) {
      const [ra, rb] = await Promise.all([fa.read(ba, 0, block, pos), fb.read(bb, 0, block, pos)]);
      if (ra.bytesRead !== rb.bytesRead) return false;
      if (ra.bytesRead === 0) return true;
      if (ba.compare(bb, 0, rb.bytesRead, 0, ra.bytesRead) !== 0) return false;
    }
  } finally {
    await Promise.all([fa.close(), fb.close()]);
  }
}
