import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { redactUrl } from '../../logging/redact.ts';
import { guardedRequest, readLimited } from '../../net/guardedFetch.ts';
import type { PlatformConnector, SourceHttp, SourceRequest, SourceResponse } from './connector.ts';
import { NeedsReauth, type CredentialSource, type SourceCredential } from './credentials.ts';
import { ProviderError, providerMessage } from './providerError.ts';

export { ProviderError } from './providerError.ts';

export interface SourceHttpOptions {
  connector: PlatformConnector;
  credentials: CredentialSource;
  projectId: string;
  /** Relative request URLs are resolved against it (`CNS_<PROVIDER>_API_URL`). */
  apiBase: string;
  /** Let requests reach loopback and private addresses (CNS_URL_FETCH_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  signal: AbortSignal;
  /** The run's counters, added to by every call. */
  counters: { httpCalls: number; rateLimitedMs: number };
  /** Largest answer body (default 64 MiB). */
  maxBytes?: number;
  /** Waits (rate limits, backoff); injected by tests. Rejects when `signal` aborts. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  now?: () => number;
}

/** Retries of a 5xx answer or a network failure before the request fails. */
export const SERVER_RETRIES = 3;
/** Rate-limit waits one request sits through before failing. */
export const RATE_LIMIT_RETRIES = 5;
/** Longest rate-limit wait the runtime accepts: a longer one fails the run (the next run resumes from the cursor). */
export const MAX_RATE_LIMIT_WAIT_MS = 60_000;
const BACKOFF_BASE_MS = 500;
const MAX_REDIRECTS = 5;
const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

const defaultSleep = (ms: number, signal: AbortSignal): Promise<void> => delay(ms, undefined, { signal });
/**
 * How long a run reuses the credential it was given before asking again: opening the sealed
 * token per request cost 4 % of a large pull, and the credential source refreshes a token a
 * minute before it expires, so a credential this fresh is still good.
 */
const CREDENTIAL_REUSE_MS = 30_000;

/**
 * The SourceHttp of one run: every call of a connector to its platform passes here (see the
 * interface in connector.ts for the rules it keeps).
 */
export function createSourceHttp(o: SourceHttpOptions): SourceHttp {
  const sleep = o.sleep ?? defaultSleep;
  const now = o.now ?? Date.now;
  const provider = o.connector.spec.provider;
  const maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES;

  async function wait(ms: number, rateLimited: boolean): Promise<void> {
    const started = now();
    await sleep(ms, o.signal);
    // Counted as asked when the injected sleep does not take real time (tests), measured otherwise.
    if (rateLimited) o.counters.rateLimitedMs += Math.max(ms, now() - started);
  }

  /** One HTTP exchange (following redirects), the body read whole. */
  async function exchange(url: URL, firstMethod: string, headers: OutgoingHttpHeaders, firstBody: Buffer | undefined): Promise<SourceResponse> {
    let current = url;
    let method = firstMethod;
    let body = firstBody;
    let sendHeaders = headers;
    for (let hop = 0; ; hop++) {
      o.counters.httpCalls++;
      const res = await guardedRequest(current, { method, headers: sendHeaders, body, allowPrivate: o.allowPrivate, signal: o.signal });
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if ([301, 302, 303, 307, 308].includes(status) && location && hop < MAX_REDIRECTS) {
        res.resume();
        const next = new URL(location, current);
        // Credentials stay with the origin they were meant for (a download redirected to a CDN goes without them).
        if (next.origin !== current.origin) sendHeaders = withoutAuth(sendHeaders, o.connector);
        current = next;
        if (status === 303) {
          method = 'GET';
          body = undefined;
        }
        continue;
      }
      return toResponse(res, await readLimited(res, { maxBytes, what: `${provider} answer from ${redactUrl(current.origin + current.pathname)}` }));
    }
  }

  let held: { credential: SourceCredential; at: number } | null = null;
  async function currentCredential(): Promise<SourceCredential> {
    if (held && now() - held.at < CREDENTIAL_REUSE_MS) return held.credential;
    held = { credential: await o.credentials.get(o.projectId, provider), at: now() };
    return held.credential;
  }

  async function request(r: SourceRequest): Promise<SourceResponse> {
    const url = resolveUrl(o.apiBase, r.url, r.query);
    const method = r.method ?? 'GET';
    const body = r.json !== undefined ? Buffer.from(JSON.stringify(r.json)) : r.body;
    let credential: SourceCredential = await currentCredential();
    let refreshed = false;
    let serverFailures = 0;
    let rateLimits = 0;
    for (;;) {
      o.signal.throwIfAborted();
      const headers: OutgoingHttpHeaders = {
        accept: 'application/json',
        'user-agent': 'cns-sync',
        ...(r.json !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(body ? { 'content-length': body.length } : {}),
        ...o.connector.authHeaders(credential),
        ...r.headers,
      };
      let res: SourceResponse;
      try {
        res = await exchange(url, method, headers, body);
      } catch (err) {
        if (!retryableNetworkError(err, o.signal)) throw err;
        if (serverFailures >= SERVER_RETRIES) throw new ProviderError(provider, null, (err as Error).message);
        await wait(backoff(serverFailures++), false);
        continue;
      }
      const { status } = res;
      if (status >= 200 && status < 300) return res;
      // A rate limit is waited out even where the status is accepted (Google's 403 is both a refusal and a limit).
      const limited = o.connector.rateLimitDelay?.(res, now()) ?? (status === 429 && !r.accept?.includes(429) ? retryAfterMs(res, now()) ?? backoff(rateLimits) : null);
      if (limited !== null) {
        if (limited > MAX_RATE_LIMIT_WAIT_MS || rateLimits >= RATE_LIMIT_RETRIES) {
          throw new ProviderError(provider, status, `rate limited (asked to wait ${Math.ceil(limited / 1000)} s): ${providerMessage(res.body, status)}`);
        }
        rateLimits++;
        await wait(Math.max(0, limited), true);
        continue;
      }
      if (r.accept?.includes(status)) return res;
      if (status === 401 || o.connector.isUnauthorized?.(res)) {
        // One refresh per request; the credential source marks needs_reauth when it cannot.
        if (refreshed) {
          await o.credentials.markNeedsReauth?.(o.projectId, provider);
          throw new NeedsReauth(provider);
        }
        refreshed = true;
        credential = await o.credentials.afterUnauthorized(o.projectId, provider, credential);
        held = { credential, at: now() };
        continue;
      }
      if (status >= 500) {
        if (serverFailures >= SERVER_RETRIES) throw new ProviderError(provider, status, providerMessage(res.body, status));
        await wait(backoff(serverFailures++), false);
        continue;
      }
      throw new ProviderError(provider, status, providerMessage(res.body, status));
    }
  }

  return { request };
}

/** `path` against `apiBase` (which may carry a path of its own, such as `/v0`), with `query` added. */
export function resolveUrl(apiBase: string, path: string, query?: SourceRequest['query']): URL {
  const url = /^https?:\/\//i.test(path) ? new URL(path) : new URL(apiBase.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`));
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.append(k, String(v));
  return url;
}

/** Milliseconds a `Retry-After` header asks for (seconds or an HTTP date), or null. */
export function retryAfterMs(res: Pick<SourceResponse, 'headers'>, now: number): number | null {
  const raw = res.headers['retry-after'];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Exponential backoff with full jitter on its upper half: 0.5-1 s, 1-2 s, 2-4 s… */
function backoff(attempt: number): number {
  const ceiling = BACKOFF_BASE_MS * 2 ** attempt;
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

function retryableNetworkError(err: unknown, signal: AbortSignal): boolean {
  if (signal.aborted) return false;
  const code = (err as { code?: unknown }).code;
  // A refused destination, an oversized answer or a programming error does not get better by retrying.
  return !(code === 'ENOTPUBLIC' || code === 'ETOOLARGE' || code === 'ERR_INVALID_URL' || err instanceof NeedsReauth || err instanceof ProviderError);
}

function withoutAuth(headers: OutgoingHttpHeaders, connector: PlatformConnector): OutgoingHttpHeaders {
  const probe: SourceCredential = { kind: 'token', accessToken: 'x', scopes: [], account: null };
  const authNames = new Set(Object.keys(connector.authHeaders(probe)).map((h) => h.toLowerCase()));
  authNames.add('authorization');
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !authNames.has(k.toLowerCase())));
}

function toResponse(res: IncomingMessage, body: Buffer): SourceResponse {
  return {
    status: res.statusCode ?? 0,
    headers: res.headers,
    body,
    json<T>() {
      return JSON.parse(body.toString('utf8')) as T;
    },
    text() {
      return body.toString('utf8');
    },
  };
}
