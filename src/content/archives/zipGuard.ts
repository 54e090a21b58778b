import { open, type FileHandle } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Writable } from 'node:stream';
import { createInflateRaw, crc32 } from 'node:zlib';
import { ConversionError } from '../../errors/conversionError.ts';
import { corrupt, entryDataOffset, readZipDirectory, type ZipEntryInfo } from './zipDirectory.ts';

/**
 * The zip-bomb guard for DOCX and XLSX, in two steps before a converter opens the file:
 * 1. the uncompressed sizes the central directory declares are summed, nothing inflated: a
 *    total over `maxBytes` is 'too_large' at once;
 * 2. every entry is inflated once, streamed and thrown away, counting the real bytes (a zip may
 *    declare less than it holds: 'too_large' as soon as the real total passes `maxBytes`) and
 *    checking each entry's CRC and size ('corrupt' otherwise). The readers behind mammoth and
 *    exceljs trust the data they get; exceljs's streaming reader even waits forever on some
 *    damaged entries. Costs one inflate pass (~0.1 s for 20 MiB), off the event loop.
 * Returns the entries' names (a converter checks its main part is there).
 */
export async function assertZipWithinLimit(file: string, maxBytes: number, kind: string): Promise<{ names: Set<string>; declaredBytes: number }> {
  const fh = await open(file, 'r');
  try {
    const entries = await readZipDirectory(fh, kind);
    const declaredBytes = entries.reduce((sum, e) => sum + e.uncompressedSize, 0);
    const overLimit = new ConversionError('too_large', `the ${kind} would expand to more than ${maxBytes} bytes (the decompressed size limit); it was not converted`);
    if (declaredBytes > maxBytes) throw overLimit;
    let budget = maxBytes;
    for (const entry of entries) budget -= await inflateEntry(fh, entry, budget, overLimit, kind);
    return { names: new Set(entries.map((e) => e.name)), declaredBytes };
  } finally {
    await fh.close();
  }
}

/** Inflates one entry into nothing; returns its real size. */
export async function inflateEntry(fh: FileHandle, entry: ZipEntryInfo, budget: number, overLimit: ConversionError, kind: string): Promise<number> {
  if (entry.method !== 0 && entry.method !== 8) throw corrupt(kind, `the entry ${entry.name} uses compression method ${entry.method}`);
  if (entry.compressedSize === 0) {
    if (entry.uncompressedSize !== 0) throw corrupt(kind, `the entry ${entry.name} is damaged`);
    return 0;
  }
  const start = await entryDataOffset(fh, entry, kind);
  let size = 0;
  let crc = 0;
  const counter = new Writable({
    write(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > budget) return done(overLimit);
      crc = crc32(chunk, crc);
      done();
    },
  });
  const source = readRange(fh, start, entry.compressedSize);
  try {
    if (entry.method === 8) await pipeline(source, createInflateRaw(), counter);
    else await pipeline(source, counter);
  } catch (err) {
    if (err instanceof ConversionError) throw err;
    throw corrupt(kind, `the entry ${entry.name} is damaged (${(err as Error).message})`);
  }
  if (size !== entry.uncompressedSize || crc !== entry.crc) throw corrupt(kind, `the entry ${entry.name} is damaged (its size or checksum does not match)`);
  return size;
}

/** The bytes from `start`, in 64 KiB chunks (positional reads: the handle stays open for the next entry). */
export async function* readRange(fh: FileHandle, start: number, length: number): AsyncGenerator<Buffer> {
  for (let pos = start, end = start + length; pos < end; ) {
    const chunk = Buffer.allocUnsafe(Math.min(65_536, end - pos));
    const { bytesRead } = await fh.read(chunk, 0, chunk.length, pos);
    if (bytesRead === 0) throw new Error('unexpected end of file');
    pos += bytesRead;
    yield chunk.subarray(0, bytesRead);
  }
}
