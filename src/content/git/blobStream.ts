import { createHash } from 'node:crypto';
import { createWriteStream, existsSync, fsyncSync, mkdirSync, openSync, closeSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createDeflate } from 'node:zlib';
import { PayloadTooLargeError, ValidationError } from '../../errors/contentErrors.ts';
import { fsyncDirs } from './objects.ts';

let tmpCounter = 0;

/** True when `oid` is stored as a loose object (where writeBlobStream puts it). */
export function looseObjectExists(gitdir: string, oid: string): boolean {
  return /^[0-9a-f]{40}$/.test(oid) && existsSync(join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2)));
}

/**
 * Streams exactly `size` bytes from `source` into a loose blob object: hashed and deflated on
 * the fly into a temporary file that is renamed into place, so memory stays at the stream
 * buffers whatever the size. More bytes than declared is PAYLOAD_TOO_LARGE, fewer is a
 * VALIDATION_ERROR; either way nothing is left behind. Returns the blob id.
 */
export async function writeBlobStream(gitdir: string, source: Readable, size: number, fsync: boolean): Promise<string> {
  const header = Buffer.from(`blob ${size}\0`);
  const sha = createHash('sha1').update(header);
  const objects = join(gitdir, 'objects');
  mkdirSync(objects, { recursive: true });
  const tmp = join(objects, `tmp_obj_${process.pid}_stream_${++tmpCounter}`);
  let received = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      if (received > size) {
        done(new PayloadTooLargeError(`the upload is larger than the declared ${size} bytes`, { limit: size }));
        return;
      }
      sha.update(chunk);
      done(null, chunk);
    },
  });
  const deflate = createDeflate({ level: 1 });
  deflate.write(header);
  try {
    await pipeline(source, meter, deflate, createWriteStream(tmp, { flags: 'wx', mode: 0o444 }));
    if (received !== size) throw new ValidationError(`the upload ended after ${received} of ${size} bytes`, { received, size });
    const oid = sha.digest('hex');
    const dir = join(objects, oid.slice(0, 2));
    const file = join(dir, oid.slice(2));
    if (existsSync(file)) {
      rmSync(tmp, { force: true });
      return oid;
    }
    mkdirSync(dir, { recursive: true });
    if (fsync) {
      const fd = openSync(tmp, 'r');
      try {
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    renameSync(tmp, file);
    if (fsync) fsyncDirs([dir]);
    return oid;
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}
