import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crc32, deflate, deflateSync } from 'node:zlib';
import { fsyncDirs, hashObject, type ObjectType } from './objects.ts';
import { storedDeflate } from './storedDeflate.ts';
import type { TimeSlice } from '../timeSlice.ts';

const TYPE_CODE: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3, tag: 4 };

/** Where an object lives inside a pack this process wrote (the idx of that pack has it too). */
export interface PackedLocation {
  pack: string;
  /** Offset of the zlib stream (just after the object header). */
  dataOffset: number;
  dataLength: number;
  type: ObjectType;
  size: number;
}

let tmpCounter = 0;
const deflateAsync = promisify(deflate);

/**
 * Collects the objects of one group-commit batch and writes them as ONE pack file plus its
 * version-2 index, instead of one loose file per object: file creation is the dominant cost of
 * a write on a busy disk, and a batch of n commits makes ~4n objects. Both files are written
 * under temporary names and renamed (pack first, index last: git only sees a pack through its
 * index), so a crash leaves either a complete pack or none.
 */
export class PackBuilder {
  private readonly chunks: Buffer[] = [];
  private offset = 12;
  private readonly entries: { oid: string; offset: number; crc: number; dataOffset: number; dataLength: number; type: ObjectType; size: number }[] = [];
  private readonly seen = new Set<string>();

  get count(): number {
    return this.entries.length;
  }

  add(type: ObjectType, content: Buffer): string {
    const oid = hashObject(type, content);
    if (this.seen.has(oid)) return oid;
    this.seen.add(oid);
    const header = objectHeader(TYPE_CODE[type], content.length);
    // Trees and commits (and small blobs) are stored without compression: deflating a large tree
    // on every write costs more than it saves, and `git repack` deltifies them anyway.
    const data =
      type === 'blob' && content.length > 512
        ? deflateSync(content, { level: 1 })
        : content.length > 4096
          ? deflateSync(content, { level: 0 }) // native adler32 beats the JS one on big trees
          : zlibStored(content);
    this.chunks.push(header, data);
    this.entries.push({
      oid,
      offset: this.offset,
      crc: crc32(data, crc32(header)),
      dataOffset: this.offset + header.length,
      dataLength: data.length,
      type,
      size: content.length,
    });
    this.offset += header.length + data.length;
    return oid;
  }

  /** add() for a very large object (the commit of a 100,000-file write): hashed in pieces, deflated off the event loop. */
  async addSliced(type: ObjectType, content: Buffer, slice: TimeSlice): Promise<string> {
    const sha = createHash('sha1').update(`${type} ${content.length}\0`);
    for (let i = 0; i < content.length; i += 1 << 20) {
      sha.update(content.subarray(i, i + (1 << 20)));
      await slice.tick();
    }
    const oid = sha.digest('hex');
    if (this.seen.has(oid)) return oid;
    this.seen.add(oid);
    const header = objectHeader(TYPE_CODE[type], content.length);
    // Non-blob objects are stored at level 0 anyway: framed here in slices instead of one zlib call.
    const data = type === 'blob' ? await deflateAsync(content, { level: 1 }) : await storedDeflate(content, slice);
    let crc = crc32(header);
    for (let i = 0; i < data.length; i += 1 << 20) {
      crc = crc32(data.subarray(i, i + (1 << 20)), crc);
      await slice.tick();
    }
    this.chunks.push(header, data);
    this.entries.push({ oid, offset: this.offset, crc, dataOffset: this.offset + header.length, dataLength: data.length, type, size: content.length });
    this.offset += header.length + data.length;
    return oid;
  }

  /**
   * Writes `objects/pack/pack-<sha>.{pack,idx}`; returns where each object landed. `files`, when
   * given, are the temporary files to write them into (opened ahead, see PackFiles).
   */
  write(gitdir: string, fsync: boolean, files?: PackFiles): Map<string, PackedLocation> {
    const located = new Map<string, PackedLocation>();
    if (this.entries.length === 0) return located;
    const head = packHeader(this.entries.length);
    const sha = createHash('sha1').update(head);
    for (const c of this.chunks) sha.update(c);
    const trailer = sha.digest();
    const name = `pack-${trailer.toString('hex')}`;
    const dir = join(gitdir, 'objects', 'pack');
    const packFile = join(dir, `${name}.pack`);
    writeAtomically(dir, packFile, [head, ...this.chunks, trailer], fsync, files?.take());
    writeAtomically(dir, join(dir, `${name}.idx`), [this.index(trailer)], fsync, files?.take());
    if (fsync) fsyncDirs([dir]);
    for (const e of this.entries) {
      located.set(e.oid, { pack: packFile, dataOffset: e.dataOffset, dataLength: e.dataLength, type: e.type, size: e.size });
    }
    return located;
  }

  /** write() for packs of many thousands of objects: hashing and file writes yield between slices. */
  async writeSliced(gitdir: string, fsync: boolean, slice: TimeSlice): Promise<Map<string, PackedLocation>> {
    const located = new Map<string, PackedLocation>();
    if (this.entries.length === 0) return located;
    const head = packHeader(this.entries.length);
    // Many small chunks become a few large writes (one syscall per object cost seconds).
    const groups: Buffer[] = [head];
    let group: Buffer[] = [];
    let groupBytes = 0;
    const sha = createHash('sha1').update(head);
    for (const c of this.chunks) {
      await slice.tick();
      sha.update(c);
      group.push(c);
      groupBytes += c.length;
      if (groupBytes >= 1 << 20) {
        groups.push(Buffer.concat(group));
        group = [];
        groupBytes = 0;
      }
    }
    if (group.length) groups.push(Buffer.concat(group));
    const trailer = sha.digest();
    groups.push(trailer);
    const name = `pack-${trailer.toString('hex')}`;
    const dir = join(gitdir, 'objects', 'pack');
    const packFile = join(dir, `${name}.pack`);
    await writeAtomicallyAsync(dir, packFile, groups, fsync, slice);
    await slice.tick();
    await writeAtomicallyAsync(dir, join(dir, `${name}.idx`), [await this.indexSliced(trailer, slice)], fsync, slice);
    if (fsync) fsyncDirs([dir]);
    for (const e of this.entries) {
      await slice.tick();
      located.set(e.oid, { pack: packFile, dataOffset: e.dataOffset, dataLength: e.dataLength, type: e.type, size: e.size });
    }
    return located;
  }

  /** index() with the sort done per first byte of the ids, yielding in between. */
  private async indexSliced(packChecksum: Buffer, slice: TimeSlice): Promise<Buffer> {
    const buckets: (typeof this.entries)[] = Array.from({ length: 256 }, () => []);
    for (const e of this.entries) buckets[parseInt(e.oid.slice(0, 2), 16)].push(e);
    const sorted: typeof this.entries = [];
    for (const b of buckets) {
      await slice.tick();
      b.sort((x, y) => (x.oid < y.oid ? -1 : 1));
      for (const e of b) sorted.push(e);
    }
    // The index of index(), written in slices.
    const n = sorted.length;
    const buf = Buffer.alloc(8 + 256 * 4 + n * 20 + n * 4 + n * 4 + 20);
    buf.writeUInt32BE(0xff744f63, 0);
    buf.writeUInt32BE(2, 4);
    let acc = 0;
    for (let i = 0; i < 256; i++) {
      acc += buckets[i]!.length;
      buf.writeUInt32BE(acc, 8 + i * 4);
    }
    let p = 8 + 1024;
    for (const e of sorted) {
      await slice.tick();
      p += buf.write(e.oid, p, 'hex');
    }
    for (const e of sorted) {
      await slice.tick();
      p = buf.writeUInt32BE(e.crc >>> 0, p);
    }
    for (const e of sorted) {
      await slice.tick();
      p = buf.writeUInt32BE(e.offset, p);
    }
    packChecksum.copy(buf, p);
    p += 20;
    return Buffer.concat([buf.subarray(0, p), createHash('sha1').update(buf.subarray(0, p)).digest()]);
  }

  private index(packChecksum: Buffer): Buffer {
    const sorted = [...this.entries].sort((a, b) => (a.oid < b.oid ? -1 : 1));
    const n = sorted.length;
    const buf = Buffer.alloc(8 + 256 * 4 + n * 20 + n * 4 + n * 4 + 20);
    buf.writeUInt32BE(0xff744f63, 0);
    buf.writeUInt32BE(2, 4);
    const fanout = new Array<number>(256).fill(0);
    for (const e of sorted) fanout[parseInt(e.oid.slice(0, 2), 16)]++;
    let acc = 0;
    for (let i = 0; i < 256; i++) {
      acc += fanout[i];
      buf.writeUInt32BE(acc, 8 + i * 4);
    }
    let p = 8 + 1024;
    for (const e of sorted) p += buf.write(e.oid, p, 'hex');
    for (const e of sorted) p = buf.writeUInt32BE(e.crc >>> 0, p);
    for (const e of sorted) p = buf.writeUInt32BE(e.offset, p);
    packChecksum.copy(buf, p);
    p += 20;
    return Buffer.concat([buf.subarray(0, p), createHash('sha1').update(buf.subarray(0, p)).digest()]);
  }
}

/** A zlib stream of "stored" (uncompressed) deflate blocks: valid for every zlib reader. */
export function zlibStored(data: Buffer): Buffer {
  const blocks = Math.max(1, Math.ceil(data.length / 65535));
  const out = Buffer.allocUnsafe(2 + blocks * 5 + data.length + 4);
  out[0] = 0x78;
  out[1] = 0x01;
  let o = 2;
  let i = 0;
  for (let b = 0; b < blocks; b++) {
    const len = Math.min(65535, data.length - i);
    out[o] = b === blocks - 1 ? 1 : 0;
    out.writeUInt16LE(len, o + 1);
    out.writeUInt16LE(~len & 0xffff, o + 3);
    o += 5;
    data.copy(out, o, i, i + len);
    o += len;
    i += len;
  }
  out.writeUInt32BE(adler32(data), o);
  return out;
}

function adler32(data: Buffer): number {
  let a = 1;
  let b = 0;
  for (let i = 0; i < data.length; ) {
    const end = Math.min(i + 5552, data.length);
    for (; i < end; i++) {
      a += data[i];
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  return ((b << 16) | a) >>> 0;
}

/** Pack object header: type in bits 4-6 of the first byte, size in 4 + 7n bits, little-endian groups. */
function objectHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let b = (type << 4) | (size & 0x0f);
  size = Math.floor(size / 16);
  while (size > 0) {
    bytes.push(b | 0x80);
    b = size & 0x7f;
    size = Math.floor(size / 128);
  }
  bytes.push(b);
  return Buffer.from(bytes);
}

async function writeAtomicallyAsync(dir: string, file: string, parts: Buffer[], fsync: boolean, slice: TimeSlice): Promise<void> {
  const tmp = join(dir, `tmp_pack_${process.pid}_${++tmpCounter}`);
  const fh = await open(tmp, 'wx', 0o444);
  try {
    for (const p of parts) {
      await fh.write(p);
      await slice.tick();
    }
    if (fsync) await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
}

/** A temporary file of objects/pack, open for writing. */
interface TmpFile {
  fd: number;
  path: string;
}

function openTmp(dir: string): TmpFile {
  const path = join(dir, `tmp_pack_${process.pid}_${++tmpCounter}`);
  return { fd: openSync(path, 'wx', 0o444), path };
}

/**
 * The two temporary files of a batch's pack, created before the batch takes the database's write
 * lock: creating a file is among the costliest steps of a write on a busy disk, and with several
 * workers one worker's time under that lock is every other worker's wait. discard() removes what
 * the batch did not use.
 */
export class PackFiles {
  private readonly files: TmpFile[];

  constructor(gitdir: string) {
    const dir = join(gitdir, 'objects', 'pack');
    this.files = [openTmp(dir)];
    try {
      this.files.push(openTmp(dir));
    } catch (e) {
      this.discard();
      throw e;
    }
  }

  /** The next unused file (PackBuilder.write takes both, or none). */
  take(): TmpFile | undefined {
    return this.files.shift();
  }

  discard(): void {
    for (const f of this.files.splice(0)) {
      closeSync(f.fd);
      try {
        unlinkSync(f.path);
      } catch {
        /* already gone */
      }
    }
  }
}

function writeAtomically(dir: string, file: string, parts: Buffer[], fsync: boolean, opened?: TmpFile): void {
  const { fd, path: tmp } = opened ?? openTmp(dir);
  try {
    for (const p of parts) writeSync(fd, p);
    if (fsync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/** A version 2 pack file's 12-byte header. */
function packHeader(objects: number): Buffer {
  const head = Buffer.alloc(12);
  head.write('PACK', 0, 'latin1');
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE(objects, 8);
  return head;
}
