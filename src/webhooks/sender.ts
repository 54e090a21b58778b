import { guardedRequest, limitedBody } from '../net/guardedFetch.ts';
import { isRefusal } from '../net/outboundGuard.ts';
import { serviceVersion } from '../config/version.ts';
import { redactUrlsIn } from '../logging/redact.ts';
import type { AttemptOutcome } from './deliveryStore.ts';
import { signatureOf } from './signature.ts';

/** The start of an answer's body kept in the delivery log. */
export const RESPONSE_KEEP_BYTES = 4096;

export interface Attempt {
  url: string;
  secret: Buffer;
  event: string;
  deliveryId: string;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
}

/**
 * One POST of a delivery through the outbound guard, signed over the exact body bytes. Success
 * is a 2xx answer within `timeoutMs` (connection to the end of the answer); redirects are not
 * followed (a 3xx is a failure). Never throws: the outcome says what happened.
 */
export async function sendOnce(a: Attempt): Promise<AttemptOutcome> {
  const at = Date.now();
  const started = performance.now();
  const body = Buffer.from(a.body);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error(`no complete answer within ${a.timeoutMs} ms`)), a.timeoutMs);
  const done = (o: Omit<AttemptOutcome, 'at' | 'durationMs'>): AttemptOutcome => ({ ...o, at, durationMs: Math.round(performance.now() - started) });
  try {
    const res = await guardedRequest(new URL(a.url), {
      method: 'POST',
      body,
      allowPrivate: a.allowPrivate,
      signal: controller.signal,
      headersTimeoutMs: a.timeoutMs,
      headers: {
        'content-type': 'application/json',
        'user-agent': `cns-webhooks/${serviceVersion}`,
        'x-cns-event': a.event,
        'x-cns-delivery': a.deliveryId,
        'x-cns-signature-256': signatureOf(a.secret, body),
      },
    });
    // Only the start of the answer is kept; the rest is read and dropped so the connection ends cleanly.
    const kept: Buffer[] = [];
    let size = 0;
    for await (const chunk of limitedBody(res, { maxBytes: 1024 * 1024, what: 'the webhook receiver\'s answer' })) {
      if (size < RESPONSE_KEEP_BYTES) kept.push(chunk.subarray(0, RESPONSE_KEEP_BYTES - size));
      size += chunk.byteLength;
    }
    const status = res.statusCode ?? 0;
    const ok = status >= 200 && status < 300;
    return done({ ok, responseStatus: status, responseBody: Buffer.concat(kept).toString('utf8'), error: ok ? null : `the receiver answered ${status}` });
  } catch (e) {
    const err = e as Error;
    const reason = controller.signal.aborted ? (controller.signal.reason as Error).message : isRefusal(err) ? `refused by the outbound guard: ${err.message}` : err.message;
    return done({ ok: false, responseStatus: null, responseBody: null, error: redactUrlsIn(reason) });
  } finally {
    clearTimeout(timer);
  }
}
