import { Readable } from 'node:stream';
import { readArchive, type ArchiveContent, type ArchiveFormat, type ArchiveLimits } from '../content/archives/readArchive.ts';
import { SMALL_ENTRY_BYTES } from '../content/archives/zipWindow.ts';
import type { CommitResult, ContentStore, Mutation } from '../content/contentStore.ts';
import { isJsonDocument } from '../content/encoding.ts';
import { PLACEHOLDER, normalizePath, normalizeTargetPath, typeFromName } from '../content/paths.ts';
import { PayloadTooLargeError, ValidationError } from '../errors/contentErrors.ts';
import type { ContentGrant } from '../policies/contentAccess.ts';
import type { ChangeNote } from './message.ts';

export interface ImportInput extends ChangeNote {
  /** The uploaded archive on disk. */
  file: string;
  format: ArchiveFormat;
  /** The folder the archive's root lands in ('' = the project root). */
  path: string;
  /** merge: the archive's files are written over what is there; replace: what the folder holds and the archive does not goes to the trash. */
  mode: 'merge' | 'replace';
}

export interface ImportResult extends CommitResult {
  files: number;
  folders: number;
  removed: number;
}

/**
 * Small files are held and written with the commit (into its one pack) up to this many bytes in
 * all; past it, and for larger files, each is streamed into its own loose object first (one file
 * per blob: the cost that made a 10,000-file import slow).
 */
const HELD_BYTES = 256 * 1024 * 1024;

type Deps = { content: Pick<ContentStore, 'commit' | 'findByPath' | 'listChildren' | 'writeBlobStream'> };

/**
 * Writes an archive's files beneath `path` as ONE commit, all or nothing: the archive is checked
 * whole first (readArchive: limits, names, links), then read entry by entry. Kinds are decided
 * as for any write and push: `.json` holding an object or array is a JSON node, `.md` in UTF-8
 * Markdown, anything else a file (small ones held and packed with the commit, larger ones
 * streamed into the repository, never held whole); JSON and Markdown are held to
 * `maxContentBytes` each. Folders of the archive are kept (empty ones too).
 * The target folder is the caller's to have checked (each path lies beneath it).
 */
export async function importArchive(d: Deps, g: ContentGrant, input: ImportInput, limits: ArchiveLimits & { maxContentBytes: number }): Promise<ImportResult> {
  const target = normalizePath(input.path);
  if (target !== '') normalizeTargetPath(target, 'path');
  const existingTarget = target === '' ? null : d.content.findByPath(g.projectId, target);
  if (existingTarget && existingTarget.type !== 'folder') throw new ValidationError(`${target} is a ${existingTarget.type} node, not a folder`, { field: 'path' });

  const writes: Mutation[] = [];
  let held = 0;
  const files = new Map<string, 'file'>();
  const dirs = new Set<string>();
  await readArchive(input.file, input.format, limits, async (entry, content) => {
    const name = entry.path.slice(entry.path.lastIndexOf('/') + 1);
    if (entry.path === '' || (entry.kind === 'file' && name === PLACEHOLDER)) {
      // The archive's root, or an empty folder's marker: its folder is the entry.
      drain(content);
      const folder = entry.path.slice(0, Math.max(0, entry.path.length - PLACEHOLDER.length - 1));
      if (entry.path !== '' && folder !== '') dirs.add(join(target, folder));
      return;
    }
    const path = join(target, entry.path);
    try {
      normalizeTargetPath(path, 'file');
    } catch (e) {
      drain(content);
      throw new ValidationError(`the archive entry "${entry.path}" cannot be a node: ${(e as Error).message}`, { field: 'file', entry: entry.path });
    }
    if (files.has(path) || (entry.kind === 'file' && dirs.has(path))) throw new ValidationError(`the archive holds "${entry.path}" twice`, { field: 'file', entry: entry.path });
    if (entry.kind === 'dir') {
      dirs.add(path);
      return;
    }
    files.set(path, 'file');
    const type = typeFromName(name);
    if (type === 'file' && entry.size <= SMALL_ENTRY_BYTES && held + entry.size <= HELD_BYTES) {
      held += entry.size;
      writes.push({ op: 'write', path, type: 'file', content: await bytesOf(content!) });
      return;
    }
    if (type === 'file') {
      writes.push({ op: 'writeBlob', path, blobId: await d.content.writeBlobStream(g.projectId, Buffer.isBuffer(content) ? Readable.from([content]) : content!, entry.size), size: entry.size });
      return;
    }
    if (entry.size > limits.maxContentBytes) {
      drain(content);
      throw new PayloadTooLargeError(`the archive entry "${entry.path}" has ${entry.size} bytes, more than the ${limits.maxContentBytes} a ${type} node may hold (CNS_MAX_CONTENT_BYTES)`, { limit: limits.maxContentBytes, entry: entry.path });
    }
    const bytes = await bytesOf(content!);
    held += bytes.length;
    if (type === 'json' && isJsonDocument(bytes)) writes.push({ op: 'write', path, type: 'json', content: JSON.parse(bytes.toString('utf8')) as unknown });
    else if (type === 'markdown' && isUtf8(bytes)) writes.push({ op: 'write', path, type: 'markdown', content: bytes.toString('utf8') });
    else writes.push({ op: 'write', path, type: 'file', content: bytes });
  });
  for (const f of files.keys()) if (dirs.has(f)) throw new ValidationError(`the archive holds "${f}" as a file and as a folder`, { field: 'file' });

  // Folders that nothing written lies in are made (empty folders survive the round trip).
  const inside = new Set<string>();
  for (const p of [...files.keys(), ...dirs]) for (let i = p.indexOf('/'); i > 0; i = p.indexOf('/', i + 1)) inside.add(p.slice(0, i));
  const mkdirs: Mutation[] = [...dirs].filter((p) => !inside.has(p)).map((p) => ({ op: 'mkdir', path: p }));
  if (target !== '' && files.size === 0 && mkdirs.length === 0) mkdirs.push({ op: 'mkdir', path: target });

  const removals: Mutation[] = input.mode === 'replace' ? leftOut(d, g.projectId, target, (p) => files.has(p), (p) => dirs.has(p) || inside.has(p)) : [];
  const what = `import ${files.size} files into ${target || 'the project root'}`;
  const r = await d.content.commit(g.projectId, g.actor, [...removals, ...writes, ...mkdirs], { message: input.message ?? (input.via ? `${what} (${input.via})` : what) });
  return { ...r, files: files.size, folders: dirs.size, removed: removals.length };
}

/** replace: what lies beneath `target` and not in the archive (a whole subtree at once), or in it as the other kind. */
function leftOut(d: Deps, projectId: string, target: string, isFile: (p: string) => boolean, isDir: (p: string) => boolean): Mutation[] {
  const out: Mutation[] = [];
  if (target !== '' && !d.content.findByPath(projectId, target)) return out;
  const walk = (folder: string) => {
    for (const n of d.content.listChildren(projectId, folder)) {
      if (n.type === 'folder' && isDir(n.path)) walk(n.path);
      else if (n.type !== 'folder' && isFile(n.path)) continue;
      else out.push({ op: 'remove', path: n.path });
    }
  };
  walk(target);
  return out;
}

const join = (a: string, b: string) => (a === '' ? b : `${a}/${b}`);

/** An entry's stream is consumed (the archive moves on only then); a whole entry needs nothing. */
const drain = (content: ArchiveContent | null) => {
  if (content && !Buffer.isBuffer(content)) content.resume();
};

async function bytesOf(content: ArchiveContent): Promise<Buffer> {
  if (Buffer.isBuffer(content)) return content;
  return readAll(content);
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
function isUtf8(bytes: Buffer): boolean {
  try {
    utf8.decode(bytes);
    return true;
  } catch {
    return false;
  }
}
