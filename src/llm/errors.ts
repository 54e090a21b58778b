import { ProviderError, type ProviderErrorKind } from './provider.ts';
import type { UpstreamSignal } from './upstreamSignal.ts';

type ErrorClass = abstract new (...args: never[]) => Error;

/** The error classes both official SDKs export under the same names (both are Stainless clients). */
export interface SdkErrorClasses {
  APIError: ErrorClass;
  APIConnectionError: ErrorClass;
  APIConnectionTimeoutError: ErrorClass;
  APIUserAbortError: ErrorClass;
}

interface Context {
  provider: string;
  sdk: SdkErrorClasses;
  upstream: UpstreamSignal;
  /** Removed from any message that echoes it. */
  apiKey: string;
}

const MAX_MESSAGE = 300;

/**
 * Any failure of an adapter's request or stream as a ProviderError: our own abort or stall first
 * (whatever the SDK made of it), then the SDK's classes, then the HTTP status. The message is
 * short, names the provider and status, and never carries the API key.
 */
export function toProviderError(err: unknown, c: Context): ProviderError {
  if (err instanceof ProviderError) return err;
  const fail = (kind: ProviderErrorKind, detail: string, status: number | null = null, retryAfterMs: number | null = null) =>
    new ProviderError(kind, clean(`${c.provider}: ${detail}`, c.apiKey), status, retryAfterMs);
  const cut = c.upstream.cut();
  if (cut === 'aborted') return fail('aborted', 'the request was aborted');
  if (cut === 'stalled') return fail('timeout', `the reply stalled (nothing for ${c.upstream.idleMs / 1000} s)`);
  if (err instanceof c.sdk.APIConnectionTimeoutError) return fail('timeout', 'no answer in time');
  if (err instanceof c.sdk.APIUserAbortError) return fail('aborted', 'the request was aborted');
  if (err instanceof c.sdk.APIConnectionError) return fail('unavailable', `cannot connect (${causeCode(err) ?? err.message})`);
  if (err instanceof c.sdk.APIError) {
    const { status, headers, apiMessage } = err as Error & { status?: number; headers?: Headers; apiMessage?: unknown };
    // OpenAI's SDK makes its message "<status> <provider's message>"; Anthropic's keeps the
    // provider's message apart (its `message` is the whole error body).
    const said = typeof apiMessage === 'string' ? apiMessage : null;
    if (typeof status === 'number') {
      const kind = kindOfStatus(status);
      return fail(kind, said !== null ? `${status} ${said}` : err.message, status, kind === 'rate_limited' && headers ? retryAfterMs(headers) : null);
    }
    // An error event inside a 200 stream: its body names a type, not a status.
    return fail(kindOfErrorType(errorType(err)), said ?? err.message);
  }
  // A dropped connection mid-body (undici's "terminated"), an unparseable chunk, ...
  return fail('unavailable', err instanceof Error ? err.message : String(err));
}

function kindOfStatus(status: number): ProviderErrorKind {
  if (status === 401 || status === 402 || status === 403) return 'unauthorized';
  if (status === 429) return 'rate_limited';
  if (status === 408) return 'timeout';
  if (status >= 500) return 'unavailable';
  return 'bad_request';
}

/** Anthropic's error types; an OpenAI in-stream error naming none of them is `unavailable`. */
function kindOfErrorType(type: string | null): ProviderErrorKind {
  switch (type) {
    case 'authentication_error':
    case 'permission_error':
    case 'billing_error':
      return 'unauthorized';
    case 'rate_limit_error':
      return 'rate_limited';
    case 'invalid_request_error':
    case 'not_found_error':
    case 'request_too_large':
      return 'bad_request';
    case 'timeout_error':
      return 'timeout';
    default:
      return 'unavailable';
  }
}

function errorType(err: Error): string | null {
  const e = err as Error & { type?: unknown; error?: { type?: unknown; error?: { type?: unknown } } };
  const type = e.type ?? e.error?.error?.type ?? e.error?.type;
  return typeof type === 'string' ? type : null;
}

/** How long a 429 asked to wait: `retry-after-ms` (OpenAI), else `retry-after` in seconds or as an HTTP date. */
export function retryAfterMs(headers: Headers): number | null {
  const ms = Number(headers.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : null;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

/** The system error code (ECONNREFUSED, ENOTFOUND, ...) somewhere down the cause chain. */
function causeCode(err: Error): string | null {
  let e: unknown = err;
  for (let depth = 0; depth < 5 && e instanceof Error; depth++) {
    const code = (e as Error & { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = e.cause;
  }
  return null;
}

function clean(message: string, apiKey: string): string {
  let out = message.replace(/\s+/g, ' ').trim();
  if (apiKey.length >= 4) out = out.split(apiKey).join('[redacted]');
  return out.length > MAX_MESSAGE ? `${out.slice(0, MAX_MESSAGE - 1)}…` : out;
}
