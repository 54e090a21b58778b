import type { OutgoingHttpHeaders } from 'node:http';
import { guardedRequest, readLimited } from '../../net/guardedFetch.ts';
import { redactUrl } from '../../logging/redact.ts';

/** What a fetch-compatible caller passes (openid-client's `customFetch` options, and our own calls). */
export interface FetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | URLSearchParams | Uint8Array | ArrayBuffer | ReadableStream | null;
  signal?: AbortSignal;
  redirect?: 'manual';
}

export type OutboundFetch = (url: string, init?: FetchInit) => Promise<Response>;

/** An OAuth or identity answer is small: anything larger is refused rather than buffered. */
const MAX_ANSWER_BYTES = 1024 * 1024;
/** A whole answer (headers and body) takes at most this long unless the caller brings its own signal. */
const ANSWER_TIMEOUT_MS = 30_000;
/** Statuses a Response may not carry a body with. */
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * A fetch-compatible function over the outbound guard (src/net/guardedFetch.ts): http(s) only,
 * private addresses refused unless `allowPrivate()` says so (read at each call), redirects not
 * followed (an OAuth endpoint that redirects is answered as is), answers at most 1 MiB and 30 s.
 * openid-client sends every token, refresh and revocation request through it (`customFetch`).
 */
export function outboundFetch(allowPrivate: () => boolean): OutboundFetch {
  return async (url, init = {}) => {
    const target = new URL(url);
    const body = bodyBytes(init.body);
    const headers: OutgoingHttpHeaders = { ...init.headers };
    // Node sends no Content-Length for a DELETE's body on its own, and the server then reads none.
    if (body) headers['content-length'] = String(body.byteLength);
    const res = await guardedRequest(target, {
      method: init.method ?? 'GET',
      headers,
      body,
      allowPrivate: allowPrivate(),
      signal: init.signal ?? AbortSignal.timeout(ANSWER_TIMEOUT_MS),
    });
    const bytes = await readLimited(res, { maxBytes: MAX_ANSWER_BYTES, what: `the answer of ${redactUrl(url)}` });
    const answerHeaders = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (Array.isArray(value)) for (const v of value) answerHeaders.append(name, v);
      else if (value !== undefined) answerHeaders.set(name, value);
    }
    const status = res.statusCode ?? 502;
    return new Response(NULL_BODY.has(status) ? null : bytes, { status, statusText: res.statusMessage, headers: answerHeaders });
  };
}

function bodyBytes(body: FetchInit['body']): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof URLSearchParams) return Buffer.from(body.toString(), 'utf8');
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  // OAuth requests are small forms: nothing here streams a body.
  if (body instanceof ReadableStream) throw new TypeError('streamed request bodies are not supported here');
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}
