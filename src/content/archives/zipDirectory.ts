import type { FileHandle } from 'node:fs/promises';
import { ConversionError } from '../../errors/conversionError.ts';

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL_ENTRY = 0x02014b50;
const LOCAL_ENTRY = 0x04034b50;
/** The end record is 22 bytes plus a comment of at most 65,535. */
const TAIL_BYTES = 22 + 0xffff;
const U32_MAX = 0xffffffff;

export interface ZipEntryInfo {
  name: string;
  /** 0 stored, 8 deflated. */
  method: number;
  crc: number;
  compressedSize: number;
  /** As declared; a hostile zip may lie, which the guard's inflating pass finds out. */
  uncompressedSize: number;
  localHeaderOffset: number;
  /** General purpose flags (bit 0: encrypted). */
  flags: number;
  /** The unix mode in the high 16 bits when made on unix (`madeBy` >> 8 === 3): symbolic links are 0o120000. */
  externalAttributes: number;
  madeBy: number;
}

/**
 * A zip's central directory, read by hand: a few fixed-offset fields (zip64 included), no
 * inflating, and no library here exposes it (the readers of mammoth and exceljs read as they
 * inflate). `kind` names the document in errors ('corrupt' when there is no readable directory).
 */
export async function readZipDirectory(fh: FileHandle, kind: string): Promise<ZipEntryInfo[]> {
  const { size } = await fh.stat();
  const tailLength = Math.min(size, TAIL_BYTES);
  const tail = await read(fh, size - tailLength, tailLength);
  let end = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tail.readUInt32LE(i) === EOCD) {
      end = i;
      break;
    }
  }
  if (end < 0) throw corrupt(kind, 'it is not a zip archive');

  let count = tail.readUInt16LE(end + 10);
  let cdSize = tail.readUInt32LE(end + 12);
  let cdOffset = tail.readUInt32LE(end + 16);
  if (count === 0xffff || cdSize === U32_MAX || cdOffset === U32_MAX) {
    // Zip64: a locator right before the end record points at the zip64 end record.
    const at = end - 20;
    if (at < 0 || tail.readUInt32LE(at) !== ZIP64_LOCATOR) throw corrupt(kind, 'its zip64 end record is missing');
    const record = await read(fh, Number(tail.readBigUInt64LE(at + 8)), 56);
    if (record.length < 56 || record.readUInt32LE(0) !== ZIP64_EOCD) throw corrupt(kind, 'its zip64 end record is unreadable');
    count = Number(record.readBigUInt64LE(32));
    cdSize = Number(record.readBigUInt64LE(40));
    cdOffset = Number(record.readBigUInt64LE(48));
  }
  if (cdOffset + cdSize > size) throw corrupt(kind, 'its central directory lies outside the file');

  const cd = await read(fh, cdOffset, cdSize);
  const entries: ZipEntryInfo[] = [];
  for (let n = 0, pos = 0; n < count; n++) {
    if (pos + 46 > cd.length || cd.readUInt32LE(pos) !== CENTRAL_ENTRY) throw corrupt(kind, 'its central directory is damaged');
    const nameLength = cd.readUInt16LE(pos + 28);
    const extraLength = cd.readUInt16LE(pos + 30);
    const commentLength = cd.readUInt16LE(pos + 32);
    const entry: ZipEntryInfo = {
      name: cd.toString('utf8', pos + 46, pos + 46 + nameLength),
      method: cd.readUInt16LE(pos + 10),
      crc: cd.readUInt32LE(pos + 16),
      compressedSize: cd.readUInt32LE(pos + 20),
      uncompressedSize: cd.readUInt32LE(pos + 24),
      localHeaderOffset: cd.readUInt32LE(pos + 42),
      flags: cd.readUInt16LE(pos + 8),
      externalAttributes: cd.readUInt32LE(pos + 38),
      madeBy: cd.readUInt16LE(pos + 4),
    };
    applyZip64(entry, cd.subarray(pos + 46 + nameLength, pos + 46 + nameLength + extraLength));
    entries.push(entry);
    pos += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** Where an entry's compressed bytes start: after its local header, whose name and extra lengths may differ from the directory's. */
export async function entryDataOffset(fh: FileHandle, entry: ZipEntryInfo, kind: string): Promise<number> {
  const head = await read(fh, entry.localHeaderOffset, 30);
  if (head.length < 30 || head.readUInt32LE(0) !== LOCAL_ENTRY) throw corrupt(kind, `the entry ${entry.name} is damaged`);
  return entry.localHeaderOffset + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
}

/** Sizes and offset too large for 32 bits are in the zip64 extra field (id 1), in this order, only those marked 0xffffffff. */
function applyZip64(entry: ZipEntryInfo, extra: Buffer): void {
  for (let p = 0; p + 4 <= extra.length; ) {
    const id = extra.readUInt16LE(p);
    const length = extra.readUInt16LE(p + 2);
    if (id === 1) {
      let q = p + 4;
      const next = () => {
        const v = q + 8 <= p + 4 + length ? Number(extra.readBigUInt64LE(q)) : Infinity;
        q += 8;
        return v;
      };
      if (entry.uncompressedSize === U32_MAX) entry.uncompressedSize = next();
      if (entry.compressedSize === U32_MAX) entry.compressedSize = next();
      if (entry.localHeaderOffset === U32_MAX) entry.localHeaderOffset = next();
      return;
    }
    p += 4 + length;
  }
}

async function read(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.alloc(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  return buf.subarray(0, bytesRead);
}

export function corrupt(kind: string, why: string): ConversionError {
  return new ConversionError('corrupt', `the ${kind} cannot be read: ${why}`);
}
