import type { TimeSlice } from '../timeSlice.ts';

const MAX_BLOCK = 0xffff;
const ADLER_MOD = 65521;
/** Bytes summed before a modulo keeps the Adler sums below 2^32 (zlib's NMAX). */
const ADLER_RUN = 5552;

/**
 * A zlib stream of "stored" (uncompressed) deflate blocks: what zlib writes at level 0, built
 * here in time slices. A 12 MB commit object (the trailers of a 100,000-file write) went
 * through zlib's async API in one piece and still held the event loop for ~200 ms.
 */
export async function storedDeflate(content: Buffer, slice: TimeSlice): Promise<Buffer> {
  const blocks = Math.max(1, Math.ceil(content.length / MAX_BLOCK));
  const out = Buffer.allocUnsafe(2 + blocks * 5 + content.length + 4);
  out[0] = 0x78; // deflate, 32K window
  out[1] = 0x01; // fastest; (0x78 << 8 | 0x01) % 31 === 0
  let at = 2;
  let a = 1;
  let b = 0;
  for (let i = 0; i < blocks; i++) {
    const start = i * MAX_BLOCK;
    const len = Math.min(MAX_BLOCK, content.length - start);
    out[at] = i === blocks - 1 ? 1 : 0; // BFINAL on the last block, BTYPE 00 (stored)
    out.writeUInt16LE(len, at + 1);
    out.writeUInt16LE(~len & 0xffff, at + 3);
    content.copy(out, at + 5, start, start + len);
    at += 5 + len;
    for (let j = start; j < start + len; ) {
      const end = Math.min(j + ADLER_RUN, start + len);
      for (; j < end; j++) {
        a += content[j]!;
        b += a;
      }
      a %= ADLER_MOD;
      b %= ADLER_MOD;
    }
    await slice.tick();
  }
  out.writeUInt32BE(((b << 16) | a) >>> 0, at);
  return out;
}
