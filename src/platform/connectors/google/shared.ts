import type { SourceResponse } from '../../runtime/connector.ts';
import type { SourceCredential } from '../../runtime/credentials.ts';
import { retryAfterMs } from '../../runtime/sourceHttp.ts';

/** Google's wait when it signals a rate limit without a `Retry-After` (its guidance: back off, then retry). */
const DEFAULT_WAIT_MS = 2_000;

/** Every Google API takes the OAuth access token as a Bearer token. */
export const googleAuthHeaders = (credential: SourceCredential): Record<string, string> => ({ authorization: `Bearer ${credential.accessToken}` });

/**
 * Google's rate-limit answers: 429, or 403 whose error names `rateLimitExceeded`,
 * `userRateLimitExceeded` or `RATE_LIMIT_EXCEEDED` (Drive, Gmail and Calendar answer quota
 * exhaustion that way). `Retry-After` when given, else a short wait. Another 403 is a refusal.
 */
export function googleRateLimitDelay(res: SourceResponse, now: number): number | null {
  if (res.status !== 429 && res.status !== 403) return null;
  const after = retryAfterMs(res, now);
  if (res.status === 429) return after ?? DEFAULT_WAIT_MS;
  return /rateLimitExceeded|userRateLimitExceeded|RATE_LIMIT_EXCEEDED/.test(res.body.toString('utf8')) ? (after ?? DEFAULT_WAIT_MS) : null;
}

/**
 * Google's error body: `{"error": {"code": 404, "message": "…", "status": "NOT_FOUND",
 * "errors": [{"reason": "notFound", …}]}}`; the first reason, or the status.
 */
export function googleErrorReason(res: SourceResponse): string | null {
  try {
    const body = res.json<{ error?: { status?: string; errors?: { reason?: string }[] } }>();
    return body.error?.errors?.[0]?.reason ?? body.error?.status ?? null;
  } catch {
    return null;
  }
}

/**
 * Every page of a Google list endpoint (`pageToken` in, `nextPageToken` out), as the items of
 * `field` per answer, with the answer itself for tokens such as `nextSyncToken`.
 */
export async function* googlePages<T>(
  fetchPage: (pageToken: string | undefined) => Promise<SourceResponse>,
  field: string,
): AsyncGenerator<{ items: T[]; answer: Record<string, unknown> }> {
  let pageToken: string | undefined;
  do {
    const answer = (await fetchPage(pageToken)).json<Record<string, unknown>>();
    yield { items: (answer[field] as T[] | undefined) ?? [], answer };
    pageToken = typeof answer.nextPageToken === 'string' && answer.nextPageToken !== '' ? answer.nextPageToken : undefined;
  } while (pageToken);
}
