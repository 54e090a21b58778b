import { createHash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync, inflateSync } from 'node:zlib';

export type ObjectType = 'blob' | 'tree' | 'commit' | 'tag';

let tmpCounter = 0;

/** Object id of `content` as git computes it (sha1 over "<type> <len>\0<content>"). */
export function hashObject(type: ObjectType, content: Buffer): string {
  return createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
}

/**
 * Writes a loose object if it is not there yet and returns its id. The file is written under a
 * temporary name and renamed into place, so a crash never leaves a torn object; the `tmp_obj_`
 * prefix is what git itself uses, so `git fsck` and `git gc` recognize leftovers.
 * `dirty` collects the folders to fsync when power-loss durability is asked for.
 */
export function writeLooseObject(
  gitdir: string,
  type: ObjectType,
  content: Buffer,
  fsync: boolean,
  knownDirs: Set<string>,
  dirty: Set<string> | null,
): string {
  const header = Buffer.from(`${type} ${content.length}\0`);
  const oid = createHash('sha1').update(header).update(content).digest('hex');
  const dir = join(gitdir, 'objects', oid.slice(0, 2));
  const file = join(dir, oid.slice(2));
  if (existsSync(file)) return oid;
  if (!knownDirs.has(dir)) {
    mkdirSync(dir, { recursive: true });
    knownDirs.add(dir);
  }
  const data = deflateSync(Buffer.concat([header, content]), { level: 1 });
  const tmp = join(dir, `tmp_obj_${process.pid}_${++tmpCounter}`);
  let fd: number;
  try {
    fd = openSync(tmp, 'wx', 0o444);
  } catch (e) {
    // `git repack`/`prune-packed` removes emptied fan-out folders behind our back.
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    mkdirSync(dir, { recursive: true });
    fd = openSync(tmp, 'wx', 0o444);
  }
  try {
    writeSync(fd, data);
    if (fsync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
  if (dirty) dirty.add(dir);
  return oid;
}

/** Reads a loose object, or returns null when it is not loose (packed or missing). */
export function readLooseObject(gitdir: string, oid: string): { type: ObjectType; content: Buffer } | null {
  let raw: Buffer;
  try {
    raw = readFileSync(join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2)));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  const data = inflateSync(raw);
  const nul = data.indexOf(0);
  const [type] = data.subarray(0, nul).toString('latin1').split(' ');
  return { type: type as ObjectType, content: data.subarray(nul + 1) };
}

/** fsyncs folders so that renames into them survive power loss. */
export function fsyncDirs(dirs: Iterable<string>): void {
  for (const dir of dirs) {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
}
