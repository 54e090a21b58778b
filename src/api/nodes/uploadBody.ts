import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AppError } from '../../http/errors.ts';

export const tooLarge = (limit: number) => new AppError('PAYLOAD_TOO_LARGE', `Files up to ${limit} bytes can be uploaded.`, { limit });

/**
 * The body of an upload PUT with its size, which a git blob needs before its first byte: the
 * size declared with the address, else the request's Content-Length, else (a chunked body) the
 * body is spooled to a temporary file first. The limit applies while streaming either way.
 */
export async function sizedBody(req: Readable, declared: number | null, contentLength: string, limit: number): Promise<{ size: number; stream: Readable; release(): void }> {
  if (declared !== null) return { size: declared, stream: req, release() {} };
  if (contentLength !== '') {
    const size = Number(contentLength);
    if (size > limit) throw tooLarge(limit);
    return { size, stream: req, release() {} };
  }
  const dir = mkdtempSync(join(tmpdir(), 'cns-upload-'));
  const release = () => rmSync(dir, { recursive: true, force: true });
  const file = join(dir, 'body');
  let received = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      done(received > limit ? tooLarge(limit) : null, chunk);
    },
  });
  try {
    await pipeline(req, meter, createWriteStream(file));
  } catch (e) {
    release();
    throw e;
  }
  return { size: statSync(file).size, stream: createReadStream(file), release };
}
