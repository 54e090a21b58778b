import type { FileHandle } from 'node:fs/promises';
import { crc32, inflateRawSync } from 'node:zlib';
import type { ZipEntryInfo } from './zipDirectory.ts';

const LOCAL_ENTRY = 0x04034b50;
/** Bytes read at once: a window holds hundreds of small entries, so their reads cost one syscall. */
const WINDOW_BYTES = 4 * 1024 * 1024;
/** Entries this small (compressed and declared) are read from a window and inflated in one call. */
export const SMALL_ENTRY_BYTES = 1024 * 1024;

/**
 * A zip read through large windows: an import of 10,000 small entries made one positional read,
 * one inflate stream and several callbacks per entry (thread-pool round trips that dominated
 * its time). Here consecutive entries come out of one 4 MiB read and a small entry is inflated
 * by one synchronous call capped at its declared size (≤ 1 MiB, a few ms at most).
 */
export class ZipWindow {
  private buf = Buffer.alloc(0);
  private start = 0;

  constructor(private readonly fh: FileHandle) {}

  /** `length` bytes at `offset` (fewer at the end of the file). */
  private async bytes(offset: number, length: number): Promise<Buffer> {
    if (offset < this.start || offset + length > this.start + this.buf.length) {
      const size = Math.max(WINDOW_BYTES, length);
      const buf = Buffer.allocUnsafe(size);
      const { bytesRead } = await this.fh.read(buf, 0, size, offset);
      this.buf = buf.subarray(0, bytesRead);
      this.start = offset;
    }
    const from = offset - this.start;
    return this.buf.subarray(from, Math.min(from + length, this.buf.length));
  }

  /**
   * A small entry's real content, checked: inflated to at most its declared size, which it must
   * have exactly, with its CRC. Null when the entry is not small, or is not what it declares
   * (damaged, or holding more: a bomb): the caller then reads it the careful, streaming way,
   * which tells a bomb (413) from damage (422) with the limits in hand.
   */
  async small(entry: ZipEntryInfo): Promise<Buffer | null> {
    if (entry.compressedSize > SMALL_ENTRY_BYTES || entry.uncompressedSize > SMALL_ENTRY_BYTES) return null;
    if (entry.method !== 0 && entry.method !== 8) return null;
    const head = await this.bytes(entry.localHeaderOffset, 30);
    if (head.length < 30 || head.readUInt32LE(0) !== LOCAL_ENTRY) return null;
    const dataStart = entry.localHeaderOffset + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
    const raw = await this.bytes(dataStart, entry.compressedSize);
    if (raw.length !== entry.compressedSize) return null;
    let data: Buffer;
    if (entry.method === 0) data = Buffer.from(raw);
    else if (entry.compressedSize === 0) return null;
    else {
      try {
        // One byte over the declared size tells a lie; it is never inflated past that.
        data = inflateRawSync(raw, { maxOutputLength: entry.uncompressedSize + 1 });
      } catch {
        return null;
      }
    }
    if (data.length !== entry.uncompressedSize || crc32(data) !== entry.crc) return null;
    return data;
  }
}
