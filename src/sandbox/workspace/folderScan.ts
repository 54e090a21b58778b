import * as fs from 'node:fs';
import { PLACEHOLDER, gitNameProblem } from '../../content/paths.ts';
import { TimeSlice } from '../../content/timeSlice.ts';

export type EntryKind = 'file' | 'dir' | 'symlink' | 'fifo' | 'socket' | 'device';

/**
 * One entry of a folder as lstat saw it. The change time in ms with its fraction: a double
 * resolves a quarter of a microsecond at today's dates, and a write by a command comes
 * milliseconds after the copy it is compared with. (BigInt stats would give whole nanoseconds at
 * twice the cost of a 10,000-file scan, most of it collecting their garbage.)
 */
export interface ScanEntry {
  kind: EntryKind;
  size: number;
  ino: number;
  ctimeMs: number;
  mode: number;
}

/**
 * A folder walked once: its entries by path relative to it ('' is the folder itself), and the
 * names that could not be taken as they are (not UTF-8) or read (no permission).
 */
export interface FolderScan {
  entries: Map<string, ScanEntry>;
  /** Entries the scan did not stat or descend into, with why. */
  unreadable: { path: string; reason: string }[];
}

/**
 * Walks `root` with readdir + lstat. Synchronous calls cost a third of their promise form here
 * (no thread-pool hop per entry), so they run in slices of a few ms with yields in between: the
 * event loop is never held for long. Symbolic links are not followed.
 */
export async function scanFolder(root: string, slice = new TimeSlice(4)): Promise<FolderScan> {
  const entries = new Map<string, ScanEntry>();
  const unreadable: FolderScan['unreadable'] = [];
  entries.set('', toEntry(fs.lstatSync(root)));
  const dirs = [''];
  while (dirs.length > 0) {
    const rel = dirs.pop()!;
    const abs = rel === '' ? root : `${root}/${rel}`;
    let listing: fs.Dirent[];
    try {
      listing = fs.readdirSync(abs, { withFileTypes: true });
    } catch (e) {
      unreadable.push({ path: rel, reason: `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})` });
      continue;
    }
    const badNames = listing.some((d) => d.name.includes('\uFFFD')) ? notUtf8Names(abs) : null;
    for (const d of listing) {
      const path = rel === '' ? d.name : `${rel}/${d.name}`;
      if (badNames?.has(d.name)) {
        unreadable.push({ path, reason: 'the name is not valid UTF-8' });
        continue;
      }
      let st: fs.Stats;
      try {
        st = fs.lstatSync(`${abs}/${d.name}`);
      } catch (e) {
        unreadable.push({ path, reason: `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})` });
        continue;
      }
      const entry = toEntry(st);
      entries.set(path, entry);
      if (entry.kind === 'dir' && nameProblem(d.name) === null) dirs.push(path);
      await slice.tick();
    }
  }
  return { entries, unreadable };
}

/** The names of a folder that are not valid UTF-8, as Node decodes them (with U+FFFD). */
function notUtf8Names(dir: string): Set<string> {
  const bad = new Set<string>();
  const strict = new TextDecoder('utf-8', { fatal: true });
  for (const raw of fs.readdirSync(dir, { encoding: 'buffer' })) {
    try {
      strict.decode(raw);
    } catch {
      bad.add(raw.toString('utf8'));
    }
  }
  return bad;
}

export function toEntry(st: fs.Stats): ScanEntry {
  return { kind: kindOf(st), size: st.size, ino: st.ino, ctimeMs: st.ctimeMs, mode: st.mode };
}

export function kindOf(st: fs.Stats | fs.Dirent): EntryKind {
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'dir';
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isFIFO()) return 'fifo';
  if (st.isSocket()) return 'socket';
  return 'device';
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Why a name cannot come back as content (the write-back skips it), or null. */
export function nameProblem(name: string): string | null {
  if (CONTROL.test(name)) return 'the name contains control characters';
  if (name === PLACEHOLDER) return `${PLACEHOLDER} is reserved (it marks empty folders)`;
  const git = gitNameProblem(name);
  return git ? `the name ${git}` : null;
}

/** Why an entry of this kind cannot come back as content, or null for files and folders. */
export function kindProblem(kind: EntryKind): string | null {
  switch (kind) {
    case 'symlink':
      return 'a symbolic link';
    case 'fifo':
      return 'a fifo';
    case 'socket':
      return 'a socket';
    case 'device':
      return 'a device';
    default:
      return null;
  }
}

/** Two scans of the same folder show the same entries with the same inode, change time, size and mode. */
export function sameScan(a: FolderScan, b: FolderScan): boolean {
  if (a.entries.size !== b.entries.size || a.unreadable.length > 0 || b.unreadable.length > 0) return false;
  for (const [path, x] of a.entries) {
    const y = b.entries.get(path);
    if (!y || !sameEntry(x, y)) return false;
  }
  return true;
}

/** ctime moves on every write, chmod, chown, link and rename and cannot be set by the writer. */
export function sameEntry(x: ScanEntry, y: ScanEntry): boolean {
  return x.kind === y.kind && x.ino === y.ino && x.ctimeMs === y.ctimeMs && x.size === y.size && x.mode === y.mode;
}
