// Namespaces, read at call time: test doubles at the HTTP boundary (nock) patch these modules.
import http, { type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { redactUrl } from '../logging/redact.ts';
import { checkUrlShape, publicOnlyLookup } from './outboundGuard.ts';

export interface GuardedRequestOptions {
  method?: string;
  headers?: OutgoingHttpHeaders;
  /** Sent whole, or piped when a stream. */
  body?: Buffer | Readable;
  /** Allow loopback and private addresses (CNS_URL_FETCH_ALLOW_PRIVATE; off by default). */
  allowPrivate?: boolean;
  /** Ends the request (and its response body) when aborted. */
  signal?: AbortSignal;
  /** How long the answer's status and headers may take (default 30 s). */
  headersTimeoutMs?: number;
}

/**
 * One outbound HTTP request through the guard: http(s) only, IP literals checked here and names
 * checked by the lookup the socket connects with. Redirects are not followed (the caller
 * decides). Resolves with the response once its headers arrived.
 */
export function guardedRequest(url: URL, o: GuardedRequestOptions = {}): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    // Thrown in here, a refusal rejects the promise like any other failure.
    checkUrlShape(url, o.allowPrivate ?? false);
    const request = url.protocol === 'https:' ? https.request : http.request;
    // A body in hand is sent with its length (some APIs refuse chunked uploads).
    const headers = Buffer.isBuffer(o.body) && !hasHeader(o.headers, 'content-length') ? { ...o.headers, 'content-length': o.body.byteLength } : o.headers;
    const req = request(url, { method: o.method ?? 'GET', headers, signal: o.signal, lookup: o.allowPrivate ? undefined : publicOnlyLookup });
    const ms = o.headersTimeoutMs ?? 30_000;
    const timer = setTimeout(() => req.destroy(new Error(`${redactUrl(url.toString())} did not answer within ${ms / 1000} s`)), ms);
    req.once('response', (res) => {
      clearTimeout(timer);
      resolve(res);
    });
    req.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    if (o.body && !Buffer.isBuffer(o.body)) {
      o.body.once('error', (e) => req.destroy(e));
      o.body.pipe(req);
    } else req.end(o.body);
  });
}

/** A response that went past its byte limit. */
export class ResponseTooLarge extends Error {
  readonly code = 'ETOOLARGE';
}

/**
 * A response body's chunks, bounded: past `maxBytes` the response is destroyed and
 * ResponseTooLarge thrown; with `idleMs`, a body silent that long is ended with an error.
 */
export async function* limitedBody(res: IncomingMessage, o: { maxBytes: number; idleMs?: number; what: string }): AsyncGenerator<Buffer> {
  if (o.idleMs) res.setTimeout(o.idleMs, () => res.destroy(new Error(`${o.what} sent nothing for ${o.idleMs! / 1000} s`)));
  let size = 0;
  for await (const chunk of res as AsyncIterable<Buffer>) {
    size += chunk.byteLength;
    if (size > o.maxBytes) {
      res.destroy();
      throw new ResponseTooLarge(`${o.what} is larger than ${o.maxBytes} bytes`);
    }
    yield chunk;
  }
}

/** A whole response body, at most `maxBytes`. */
export async function readLimited(res: IncomingMessage, o: { maxBytes: number; what: string }): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of limitedBody(res, o)) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function hasHeader(headers: OutgoingHttpHeaders | undefined, name: string): boolean {
  return headers !== undefined && Object.keys(headers).some((k) => k.toLowerCase() === name);
}
