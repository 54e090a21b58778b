import type { SourceResponse } from '../../runtime/connector.ts';
import { retryAfterMs } from '../../runtime/sourceHttp.ts';

/** GitHub asks to wait at least a minute after a secondary rate limit that gives no time. */
const SECONDARY_WAIT_MS = 60_000;

function header(res: SourceResponse, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * GitHub's rate-limit answers (403 or 429): `retry-after` when given; else, with
 * `x-ratelimit-remaining: 0`, until `x-ratelimit-reset` (epoch seconds); else a secondary limit
 * named in the message waits a minute. A 403 that says none of this is a real refusal: null.
 */
export function githubRateLimitDelay(res: SourceResponse, now: number): number | null {
  if (res.status !== 403 && res.status !== 429) return null;
  const after = retryAfterMs(res, now);
  if (after !== null) return after;
  if (header(res, 'x-ratelimit-remaining') === '0') {
    const reset = Number(header(res, 'x-ratelimit-reset'));
    if (Number.isFinite(reset)) return Math.max(0, reset * 1000 - now);
  }
  if (/secondary rate limit/i.test(res.body.toString('utf8'))) return SECONDARY_WAIT_MS;
  return null;
}
