import { open, type FileHandle } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { PassThrough, Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createInflateRaw } from 'node:zlib';
import { extract } from 'tar-stream';
import { PayloadTooLargeError, ValidationError } from '../../errors/contentErrors.ts';
import { ConversionError } from '../../errors/conversionError.ts';
import { entryDataOffset, readZipDirectory, type ZipEntryInfo } from './zipDirectory.ts';
import { inflateEntry, readRange } from './zipGuard.ts';
import { TimeSlice } from '../timeSlice.ts';
import { ZipWindow } from './zipWindow.ts';

export type ArchiveFormat = 'zip' | 'tar.gz';

/** What one archive may hold: entries (files and folders) and bytes once inflated. */
export interface ArchiveLimits {
  maxFiles: number;
  maxBytes: number;
}

/** An entry's bytes: a small zip entry comes whole (already inflated and checked), anything else as a stream that must be consumed. */
export type ArchiveContent = Readable | Buffer;

/** An entry as the archive names it, checked: a relative path without `.`/`..`, a folder or a regular file. */
export interface ArchiveEntry {
  path: string;
  kind: 'dir' | 'file';
  size: number;
}

/** The format by the first bytes: a zip's local or end record, or gzip's magic. */
export async function sniffFormat(file: string): Promise<ArchiveFormat> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await fh.read(head, 0, 4, 0);
    if (bytesRead >= 4 && head.readUInt32LE(0) === 0x04034b50) return 'zip';
    if (bytesRead >= 4 && head.readUInt32LE(0) === 0x06054b50) return 'zip';
    if (bytesRead >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'tar.gz';
  } finally {
    await fh.close();
  }
  throw new ValidationError('the archive is neither a zip nor a tar.gz', { field: 'file' });
}

const tooLarge = (what: string, limit: number, field: string) => new PayloadTooLargeError(`the archive ${what} (CNS_IMPORT_${field})`, { limit });

/**
 * An archive's entry name made safe, or a 422: no absolute paths, no `..` (path traversal), no
 * backslashes; `./` prefixes and a folder's trailing `/` are dropped. '' is the archive's root.
 */
function entryPath(raw: string): string {
  const refuse = (why: string) => new ValidationError(`the archive entry "${raw}" ${why}`, { field: 'file', entry: raw });
  if (raw.startsWith('/') || /^[a-zA-Z]:/.test(raw)) throw refuse('has an absolute path');
  if (raw.includes('\\')) throw refuse('has a backslash in its path');
  if (raw.includes('\0')) throw refuse('has a NUL in its path');
  const parts = raw.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw refuse('leads outside the archive (..)');
  return parts.join('/');
}

/**
 * Reads an uploaded archive in two passes. The first checks everything before anything is
 * written: the limits (entries; inflated bytes as declared, then as really inflated, stopped as
 * soon as they pass the limit: a zip bomb costs at most the limit), every name, every entry's
 * type (symbolic and hard links, devices: 422), zip checksums (the ingestion's zip guard,
 * zipGuard.ts). The second streams each entry to `visit` in archive order, one at a time.
 */
export async function readArchive(
  file: string,
  format: ArchiveFormat,
  limits: ArchiveLimits,
  visit: (entry: ArchiveEntry, content: ArchiveContent | null) => Promise<void>,
): Promise<ArchiveEntry[]> {
  return format === 'zip' ? readZip(file, limits, visit) : readTarGz(file, limits, visit);
}

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;

async function readZip(file: string, limits: ArchiveLimits, visit: (entry: ArchiveEntry, content: ArchiveContent | null) => Promise<void>): Promise<ArchiveEntry[]> {
  const fh = await open(file, 'r');
  try {
    const zipEntries = await zipCall(() => readZipDirectory(fh, 'archive'));
    if (zipEntries.length > limits.maxFiles) throw tooLarge(`has ${zipEntries.length} entries, more than the ${limits.maxFiles} an import takes`, limits.maxFiles, 'MAX_FILES');
    const declared = zipEntries.reduce((n, e) => n + e.uncompressedSize, 0);
    if (declared > limits.maxBytes) throw tooLarge(`declares ${declared} bytes once inflated, more than the ${limits.maxBytes} an import takes`, limits.maxBytes, 'MAX_BYTES');
    const entries = zipEntries.map(zipEntry);
    // The real inflated sizes and checksums, every entry inflated once into nothing (the
    // ingestion's guard, zipGuard.ts; small entries through a window: one read for hundreds).
    const slice = new TimeSlice(5);
    let budget = limits.maxBytes;
    const overLimit = new ConversionError('too_large', `the archive would expand to more than ${limits.maxBytes} bytes (the decompressed size limit); it was not converted`);
    let window = new ZipWindow(fh);
    for (const z of zipEntries) {
      const small = await window.small(z);
      budget -= small ? small.length : await zipCall(() => inflateEntry(fh, z, budget, overLimit, 'archive'));
      if (budget < 0) throw tooLarge(`inflates to more than the ${limits.maxBytes} bytes an import takes`, limits.maxBytes, 'MAX_BYTES');
      await slice.tick();
    }
    window = new ZipWindow(fh);
    for (let i = 0; i < zipEntries.length; i++) {
      const e = entries[i]!;
      const z = zipEntries[i]!;
      if (e.kind === 'dir') await visit(e, null);
      else await visit(e, (await window.small(z)) ?? (await zipContent(fh, z)));
      await slice.tick();
    }
    return entries;
  } finally {
    await fh.close();
  }
}

function zipEntry(z: ZipEntryInfo): ArchiveEntry {
  const refuse = (why: string) => new ValidationError(`the archive entry "${z.name}" ${why}`, { field: 'file', entry: z.name });
  if (z.flags & 1) throw refuse('is encrypted');
  const unixMode = z.madeBy >> 8 === 3 ? z.externalAttributes >>> 16 : 0;
  const type = unixMode & S_IFMT;
  const dir = z.name.endsWith('/') || type === S_IFDIR || (z.externalAttributes & 0x10) !== 0;
  if (type !== 0 && type !== S_IFREG && type !== S_IFDIR) throw refuse(type === 0o120000 ? 'is a symbolic link (refused)' : 'is not a regular file or folder');
  return { path: entryPath(z.name), kind: dir ? 'dir' : 'file', size: dir ? 0 : z.uncompressedSize };
}

/** A checked entry's bytes, inflated as they are read. */
async function zipContent(fh: FileHandle, z: ZipEntryInfo): Promise<Readable> {
  if (z.compressedSize === 0) return Readable.from([]);
  const start = await zipCall(() => entryDataOffset(fh, z, 'archive'));
  const raw = Readable.from(readRange(fh, start, z.compressedSize));
  if (z.method === 0) return raw;
  const out = new PassThrough();
  pipeline(raw, createInflateRaw(), out).catch((e: unknown) => out.destroy(e as Error));
  return out;
}

/** The zip readers' errors as the API's: too large is 413, anything unreadable 422. */
async function zipCall<T>(f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    if (e instanceof ConversionError) {
      if (e.code === 'too_large') throw new PayloadTooLargeError(`${e.message.replace(/; it was not converted$/, '')} (CNS_IMPORT_MAX_BYTES)`, {});
      throw new ValidationError(e.message, { field: 'file' });
    }
    throw e;
  }
}

async function readTarGz(file: string, limits: ArchiveLimits, visit: (entry: ArchiveEntry, content: ArchiveContent | null) => Promise<void>): Promise<ArchiveEntry[]> {
  // Declared: gzip's trailer holds the inflated size (modulo 2^32: a hint, the real count below decides).
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    const tail = Buffer.alloc(4);
    if (size >= 18) await fh.read(tail, 0, 4, size - 4);
    const declared = tail.readUInt32LE(0);
    if (declared > limits.maxBytes) throw tooLarge(`declares ${declared} bytes once inflated, more than the ${limits.maxBytes} an import takes`, limits.maxBytes, 'MAX_BYTES');
  } finally {
    await fh.close();
  }
  const entries: ArchiveEntry[] = [];
  await walkTar(file, limits, async (e, stream) => {
    entries.push(e);
    stream.resume();
  });
  await walkTar(file, limits, async (e, stream) => {
    if (e.kind === 'dir') {
      stream.resume();
      await visit(e, null);
    } else await visit(e, stream);
  });
  return entries;
}

/** One pass over a tar.gz: every entry checked (limits, name, type) and handed on with its stream, which must be consumed. */
async function walkTar(file: string, limits: ArchiveLimits, each: (entry: ArchiveEntry, stream: Readable) => Promise<void>): Promise<void> {
  let inflated = 0;
  let count = 0;
  const parser = extract();
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      inflated += chunk.length;
      if (inflated > limits.maxBytes) return done(tooLarge(`inflates to more than the ${limits.maxBytes} bytes an import takes`, limits.maxBytes, 'MAX_BYTES'));
      done(null, chunk);
    },
  });
  parser.on('entry', (header, stream, next) => {
    const fail = (e: unknown) => parser.destroy(e as Error);
    try {
      if (++count > limits.maxFiles) throw tooLarge(`has more than the ${limits.maxFiles} entries an import takes`, limits.maxFiles, 'MAX_FILES');
      const refuse = (why: string) => new ValidationError(`the archive entry "${header.name}" ${why}`, { field: 'file', entry: header.name });
      if (header.type === 'symlink' || header.type === 'link') throw refuse('is a link (refused)');
      if (header.type !== 'file' && header.type !== 'directory' && header.type !== 'contiguous-file') throw refuse('is not a regular file or folder');
      const kind = header.type === 'directory' ? 'dir' : 'file';
      const entry: ArchiveEntry = { path: entryPath(header.name), kind, size: kind === 'dir' ? 0 : (header.size ?? 0) };
      // The next entry only once this one is read to its end AND handled (its blob stored, its mutation listed).
      const ended = new Promise<void>((resolve) => stream.once('end', resolve));
      Promise.all([each(entry, stream), ended]).then(() => next(), fail);
    } catch (e) {
      fail(e);
    }
  });
  try {
    await pipeline(createReadStream(file), createGunzip(), meter, parser);
  } catch (e) {
    if (e instanceof PayloadTooLargeError || e instanceof ValidationError) throw e;
    throw new ValidationError(`the tar.gz cannot be read: ${(e as Error).message}`, { field: 'file' });
  }
}
