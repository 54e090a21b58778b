import type { ConnectorContext, SourceResponse } from '../../runtime/connector.ts';
import { NeedsReauth } from '../../runtime/credentials.ts';
import { ProviderError, retryAfterMs } from '../../runtime/sourceHttp.ts';

/** One error of a GraphQL answer, as Linear sends it. */
export interface LinearGraphQLError {
  message?: string;
  extensions?: { code?: string; type?: string; userPresentableMessage?: string };
}

interface GraphQLAnswer<T> {
  data?: T | null;
  errors?: LinearGraphQLError[];
}

/**
 * One GraphQL operation against `{apiBase}/graphql`. Linear reports failures in the body, in
 * 200 answers too: any `errors` entry fails the call with Linear's own words. Rate limits
 * (400 + RATELIMITED) are waited out by the runtime through `linearRateLimitDelay`.
 */
export async function linearQuery<T>(ctx: ConnectorContext, query: string, variables: Record<string, unknown>): Promise<T> {
  const res = await ctx.http.request({ method: 'POST', url: '/graphql', json: { query, variables } });
  let answer: GraphQLAnswer<T>;
  try {
    answer = res.json<GraphQLAnswer<T>>();
  } catch {
    throw new ProviderError('linear', res.status, 'the answer is not JSON');
  }
  if (answer.errors?.length) throw linearFailure(answer.errors, res.status);
  if (answer.data == null) throw new ProviderError('linear', res.status, 'the answer has no data');
  return answer.data;
}

/** The error a failed GraphQL answer becomes (an authentication error means reconnecting). */
export function linearFailure(errors: LinearGraphQLError[], status: number): Error {
  const first = errors[0] ?? {};
  const message = first.extensions?.userPresentableMessage ?? first.message ?? 'unknown error';
  if (isAuthError(first)) return new NeedsReauth('linear', `Linear refused the credential (${message}): connect Linear again with GET /oauth/linear/authorize.`);
  return new ProviderError('linear', status, message);
}

function isAuthError(e: LinearGraphQLError): boolean {
  return e.extensions?.code === 'AUTHENTICATION_ERROR' || e.extensions?.type === 'authentication error';
}

function errorsOf(res: SourceResponse): LinearGraphQLError[] {
  try {
    const body = res.json<GraphQLAnswer<unknown>>();
    return Array.isArray(body?.errors) ? body.errors : [];
  } catch {
    return [];
  }
}

/**
 * An answer that means "not authenticated" though its status is not 401: Linear puts
 * AUTHENTICATION_ERROR in 400 (and sometimes 200) GraphQL answers. The runtime should treat it
 * like a 401 (refresh once, then needs_reauth).
 */
export function linearUnauthorized(res: SourceResponse): boolean {
  return res.status !== 401 && errorsOf(res).some(isAuthError);
}

/** Fallback wait for a RATELIMITED answer that names no reset time. */
const DEFAULT_RATE_LIMIT_MS = 10_000;

/**
 * Linear's rate limit: HTTP 400 (or 429) with `extensions.code: RATELIMITED`; the
 * `X-RateLimit-{Requests,Complexity,Endpoint-Requests}-Reset` headers give when each budget
 * refills, in epoch milliseconds. The wait is until the exhausted budget refills (the latest of
 * them when several are out), else `Retry-After`, else a short default.
 */
export function linearRateLimitDelay(res: SourceResponse, now: number): number | null {
  if (res.status !== 400 && res.status !== 429) return null;
  const limited = errorsOf(res).some((e) => e.extensions?.code === 'RATELIMITED' || e.extensions?.type === 'ratelimited');
  if (!limited && res.status !== 429) return null;
  const header = (name: string): number | null => {
    const raw = res.headers[name];
    const v = Number(Array.isArray(raw) ? raw[0] : raw);
    return raw === undefined || !Number.isFinite(v) ? null : v;
  };
  const resets: number[] = [];
  for (const budget of ['requests', 'complexity', 'endpoint-requests']) {
    const reset = header(`x-ratelimit-${budget}-reset`);
    if (reset !== null && header(`x-ratelimit-${budget}-remaining`) === 0) resets.push(reset);
  }
  // No budget says it is empty: the requests budget's reset is the best guess.
  if (resets.length === 0 && header('x-ratelimit-requests-reset') !== null) resets.push(header('x-ratelimit-requests-reset')!);
  if (resets.length > 0) return Math.max(0, Math.max(...resets) - now);
  return retryAfterMs(res, now) ?? (limited ? DEFAULT_RATE_LIMIT_MS : null);
}
