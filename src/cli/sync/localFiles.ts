import { mkdir, readdir, rename, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import { gitNameProblem, joinPath } from '../../content/paths.ts';
import type { IgnoreRules } from './ignoreRules.ts';
import { PARTIAL_SUFFIX } from './ignoreRules.ts';

export interface LocalFile {
  size: number;
  mtimeMs: number;
}

/** Every regular file of the folder not ignored, by `/`-separated relative path. Symlinks are not followed. */
export async function scanFolder(root: string, rules: IgnoreRules): Promise<Map<string, LocalFile>> {
  const out = new Map<string, LocalFile>();
  const walk = async (rel: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(rel ? join(root, rel) : root, { withFileTypes: true });
    } catch {
      return; // removed while scanning
    }
    const subdirs: string[] = [];
    const files: string[] = [];
    for (const e of entries) {
      const r = joinPath(rel, e.name);
      if (e.isDirectory()) {
        if (!rules.ignores(r, true)) subdirs.push(r);
      } else if (e.isFile() && !rules.ignores(r)) {
        files.push(r);
      }
    }
    await Promise.all(
      files.map(async (r) => {
        try {
          const st = await stat(join(root, r));
          out.set(r, { size: st.size, mtimeMs: st.mtimeMs });
        } catch {
          /* removed while scanning */
        }
      }),
    );
    for (const d of subdirs) await walk(d);
  };
  await walk('');
  return out;
}

/**
 * Why a project path must not become a file of the folder, whatever the platform, or null.
 * The server refuses these names already; the client does not rely on it: a backslash or `:`
 * is a separator or a drive/stream on Windows, names of only dots and spaces become `.`/`..`
 * there (Windows drops trailing dots and spaces), and a name git reads as `.git` would write
 * into a repository the folder may be part of.
 */
export function localPathProblem(rel: string): string | null {
  if (typeof rel !== 'string' || rel === '') return 'empty path';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f]/.test(rel)) return 'control characters';
  for (const seg of rel.split('/')) {
    if (seg === '' || /^[. ]+$/.test(seg)) return `"${seg}" is not a file name here`;
    if (/[\\:]/.test(seg)) return `"${seg}" contains a backslash or colon`;
    if (gitNameProblem(seg)) return `"${seg}" is a name git reads as .git`;
  }
  return null;
}

/** The local file of a project path; throws rather than point outside the folder. */
export function absPath(root: string, rel: string): string {
  const why = localPathProblem(rel);
  if (why) throw new Error(`refusing to use ${JSON.stringify(rel)} in the folder: ${why}`);
  const target = join(root, ...rel.split('/'));
  const inside = relative(resolve(root), resolve(target));
  if (inside === '' || inside.startsWith('..') || isAbsolute(inside)) throw new Error(`refusing to write outside the folder: ${rel}`);
  return target;
}

/** Writes beside the target and renames into place: an editor or watcher never sees half a file. */
export async function writeLocal(root: string, rel: string, bytes: Buffer): Promise<LocalFile> {
  const target = absPath(root, rel);
  await mkdir(dirname(target), { recursive: true });
  const tmp = `${target}.${process.pid}${PARTIAL_SUFFIX}`;
  await writeFile(tmp, bytes);
  await rename(tmp, target);
  const st = await stat(target);
  return { size: st.size, mtimeMs: st.mtimeMs };
}

export async function renameLocal(root: string, from: string, to: string): Promise<LocalFile> {
  const target = absPath(root, to);
  await mkdir(dirname(target), { recursive: true });
  await rename(absPath(root, from), target);
  await pruneEmptyDirs(root, posix.dirname(from));
  const st = await stat(target);
  return { size: st.size, mtimeMs: st.mtimeMs };
}

/**
 * A file the sync removes (deleted on the other side) goes to DIR/.cns/trash/<time>/<path>,
 * never away: nothing is lost silently.
 */
export async function trashLocal(root: string, trashDir: string, rel: string, stamp: string): Promise<string> {
  absPath(root, rel); // refuses unsafe paths before anything is created
  const target = join(trashDir, stamp, ...rel.split('/'));
  await mkdir(dirname(target), { recursive: true });
  await rename(absPath(root, rel), target);
  await pruneEmptyDirs(root, posix.dirname(rel));
  return target;
}

/** Removes folders left empty by a move or deletion, up to (not including) the root. */
async function pruneEmptyDirs(root: string, relDir: string): Promise<void> {
  let dir = relDir;
  while (dir !== '.' && dir !== '') {
    try {
      await rmdir(absPath(root, dir));
    } catch {
      return; // not empty (or gone): stop
    }
    dir = posix.dirname(dir);
  }
}

/** `notes/plan.md` → `notes/plan.conflict-20261122T021900Z.md` (a dotfile or extensionless name keeps its name whole). */
export function conflictName(rel: string, at: Date, n = 1): string {
  const stamp = at.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z') + (n > 1 ? `-${n}` : '');
  const slash = rel.lastIndexOf('/');
  const dir = rel.slice(0, slash + 1);
  const name = rel.slice(slash + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return `${dir}${name}.conflict-${stamp}`;
  return `${dir}${name.slice(0, dot)}.conflict-${stamp}${name.slice(dot)}`;
}

/** Local path separators never reach the state or the server. */
export function toRel(root: string, abs: string): string {
  const r = abs.startsWith(root) ? abs.slice(root.length).replace(/^[\\/]+/, '') : abs;
  return sep === '/' ? r : r.split(sep).join('/');
}
