import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { constants, createInflate, inflateSync } from 'node:zlib';

/** A stored blob that can be read in byte ranges without holding it in memory. */
export interface BlobSource {
  size: number;
  /** Bytes `start`..`end` (inclusive) as a stream. */
  stream(start: number, end: number): Readable;
}

/**
 * Opens a loose blob for streaming: the size comes from the object header (inflating only the
 * first block), the bytes from an inflating stream that skips the header and the bytes before
 * `start`. Returns null when the object is not loose (packed objects are read whole elsewhere).
 */
export function openLooseBlob(gitdir: string, oid: string): BlobSource | null {
  const file = join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2));
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  let head: Buffer;
  try {
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    head = inflateSync(buf.subarray(0, n), { finishFlush: constants.Z_SYNC_FLUSH });
  } finally {
    closeSync(fd);
  }
  const nul = head.indexOf(0);
  const m = /^blob (\d+)$/.exec(head.subarray(0, nul).toString('latin1'));
  if (nul < 0 || !m) throw new Error(`${oid} is not a blob`);
  const headerLength = nul + 1;
  return {
    size: Number(m[1]),
    stream(start, end) {
      if (end < start) return Readable.from([]);
      let skip = headerLength + start;
      let left = end - start + 1;
      const window = new Transform({
        transform(chunk: Buffer, _enc, done) {
          if (left === 0) return done();
          if (skip >= chunk.length) {
            skip -= chunk.length;
            return done();
          }
          const part = chunk.subarray(skip, skip + left);
          skip = 0;
          left -= part.length;
          this.push(part);
          if (left === 0) this.push(null);
          done();
        },
      });
      const source = createReadStream(file);
      const inflate = createInflate();
      const stop = () => {
        source.destroy();
        inflate.destroy();
      };
      window.on('end', stop).on('close', stop);
      source.on('error', (e) => window.destroy(e));
      inflate.on('error', (e) => window.destroy(e));
      return source.pipe(inflate).pipe(window);
    },
  };
}
