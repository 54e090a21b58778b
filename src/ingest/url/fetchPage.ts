import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { redactUrl } from '../../logging/redact.ts';
import { guardedRequest, limitedBody } from '../../net/guardedFetch.ts';

const MAX_REDIRECTS = 5;
const ACCEPT = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8';
const USER_AGENT = 'cns-ingest/1 (Content Node Service)';

export interface FetchedPage {
  /** Where the answer came from, after redirects. */
  url: URL;
  contentType: string | null;
  bytes: number;
}

export interface FetchOptions {
  /** Where the body is written. */
  file: string;
  maxBytes: number;
  /** For the whole fetch: redirects, headers and body. */
  timeoutMs: number;
  allowPrivate: boolean;
  /** The task's: cancelling it stops the fetch. */
  signal: AbortSignal;
}

/** A page that could not be fetched: the message names the address (redacted) and why. */
export class FetchFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FetchFailed';
  }
}

/**
 * GETs one address into a file through the outbound guard (public addresses only unless the
 * operator allows private ones, each redirect target checked again), streamed to disk and cut
 * at `maxBytes`, within `timeoutMs` in all. Redirects are followed (at most 5). Fails with
 * FetchFailed, except when the task's signal aborted it (the caller knows why).
 */
export async function fetchToFile(start: URL, o: FetchOptions): Promise<FetchedPage> {
  const timeout = AbortSignal.timeout(o.timeoutMs);
  const signal = AbortSignal.any([o.signal, timeout]);
  let current = start;
  try {
    for (let hop = 0; ; hop++) {
      const res = await guardedRequest(current, {
        allowPrivate: o.allowPrivate,
        signal,
        headersTimeoutMs: o.timeoutMs,
        headers: { accept: ACCEPT, 'user-agent': USER_AGENT },
      });
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        if (hop >= MAX_REDIRECTS) throw new FetchFailed(`${redactUrl(start.href)}: more than ${MAX_REDIRECTS} redirects`);
        current = new URL(res.headers.location, current);
        continue;
      }
      if (status < 200 || status >= 300) {
        res.resume();
        throw new FetchFailed(`GET ${redactUrl(current.href)} answered ${status}`);
      }
      let bytes = 0;
      const body = limitedBody(res, { maxBytes: o.maxBytes, what: redactUrl(current.href) });
      await pipeline(
        Readable.from(body),
        async function* (chunks: AsyncIterable<Buffer>) {
          for await (const c of chunks) {
            bytes += c.byteLength;
            yield c;
          }
        },
        createWriteStream(o.file),
      );
      return { url: current, contentType: (res.headers['content-type'] as string | undefined) ?? null, bytes };
    }
  } catch (e) {
    if (o.signal.aborted) throw e;
    if (e instanceof FetchFailed) throw e;
    if (timeout.aborted) throw new FetchFailed(`${redactUrl(current.href)} did not answer within ${o.timeoutMs / 1000} s`);
    throw new FetchFailed(`${redactUrl(current.href)}: ${(e as Error).message}`);
  }
}
