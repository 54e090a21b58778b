import type { Readable } from 'node:stream';
import type { Context } from 'koa';
import { errorBody } from './envelope.ts';

export interface ByteMeta {
  etag: string;
  contentType: string;
  filename?: string;
  disposition?: 'inline' | 'attachment';
}

/** Content that can be sent in byte ranges: a size and a way to get bytes start..end (inclusive). */
export interface ByteSource {
  size: number;
  slice(start: number, end: number): Buffer | Readable;
}

/** sendSource for bytes held in memory. */
export function sendBytes(ctx: Context, bytes: Buffer, meta: ByteMeta): void {
  sendSource(ctx, { size: bytes.length, slice: (start, end) => bytes.subarray(start, end + 1) }, meta);
}

/**
 * Sends content with ETag, conditional GET and single-range support (RFC 9110): `bytes=a-b`,
 * `bytes=a-` and `bytes=-n`. Multi-range requests are answered with the whole body. A streamed
 * source is never held whole in memory.
 */
export function sendSource(ctx: Context, source: ByteSource, meta: ByteMeta): void {
  const etag = `"${meta.etag}"`;
  ctx.set('ETag', etag);
  ctx.set('Accept-Ranges', 'bytes');
  ctx.set('Cache-Control', 'private, no-cache');
  if (meta.filename) {
    ctx.set('Content-Disposition', `${meta.disposition ?? 'attachment'}; filename*=UTF-8''${encodeURIComponent(meta.filename)}`);
  }
  if (ctx.get('If-None-Match') === etag) {
    ctx.status = 304;
    return;
  }
  ctx.type = meta.contentType;
  const range = ctx.get('Range');
  const ifRange = ctx.get('If-Range');
  const m = /^bytes=(\d*)-(\d*)$/.exec(range.trim());
  if (!range || !m || (ifRange && ifRange !== etag) || (m[1] === '' && m[2] === '')) {
    ctx.status = 200;
    ctx.body = source.slice(0, source.size - 1);
    ctx.length = source.size;
    return;
  }
  const size = source.size;
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start >= size || start > end) {
    ctx.status = 416;
    ctx.set('Content-Range', `bytes */${size}`);
    ctx.body = errorBody('VALIDATION_ERROR', `The requested range is not satisfiable (size ${size}).`);
    return;
  }
  ctx.status = 206;
  ctx.set('Content-Range', `bytes ${start}-${end}/${size}`);
  ctx.body = source.slice(start, end);
  ctx.length = end - start + 1;
}
