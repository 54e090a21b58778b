/**
 * The errors every module below the surfaces throws for a rule the caller broke or a thing the
 * service cannot do now. Each carries one code of the API's error vocabulary; only the surfaces
 * map codes to their own answers (src/http/errors.ts to HTTP statuses, MCP to tool errors, the
 * git remote to git's), so no feature imports a surface.
 */
export type ErrorCode =
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'VALIDATION_ERROR'
  | 'RATE_LIMITED'
  | 'INTERNAL_ERROR'
  /** A remote the service fetched for the caller (a url sync's address, a platform, a model provider) failed. */
  | 'UPSTREAM_ERROR'
  /** Something the service needs for this request is not configured or not reachable now. */
  | 'SERVICE_UNAVAILABLE'
  /** The metadata database (PostgreSQL) cannot be reached or dropped the connection; retrying later may work. */
  | 'DATABASE_UNAVAILABLE'
  /** A statement of the metadata database ran past its statement_timeout and was stopped. */
  | 'DATABASE_TIMEOUT';

/** @deprecated name kept for the many modules that say it: the same vocabulary. */
export type DomainErrorCode = ErrorCode;

export class DomainError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: unknown = null,
    /** Headers an HTTP answer carries with it (Retry-After of a 429 or 503). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A 422 naming one offending field, in the same `{field, message}` shape as request validation. */
export const invalidField = (field: string, message: string) => new DomainError('VALIDATION_ERROR', message, [{ field, message }]);

const codes = new Set<string>(['UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND', 'CONFLICT', 'PAYLOAD_TOO_LARGE', 'VALIDATION_ERROR', 'RATE_LIMITED', 'INTERNAL_ERROR', 'UPSTREAM_ERROR', 'SERVICE_UNAVAILABLE', 'DATABASE_UNAVAILABLE', 'DATABASE_TIMEOUT']);

/**
 * The error as the vocabulary knows it, or null for anything else (a bug: surfaces answer it
 * as an internal error). Errors of libraries that carry one of our codes count too. Validation
 * details are always a list of `{field, message}` (plus any context the thrower gave).
 */
export function asDomainError(err: unknown): DomainError | null {
  if (err instanceof DomainError) return err.code === 'VALIDATION_ERROR' && !Array.isArray(err.details) ? withFieldDetails(err) : err;
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'string' && codes.has(err.code)) {
    const e = err as { code: ErrorCode; message?: string; details?: unknown; headers?: Record<string, string> };
    const known = new DomainError(e.code, e.message || e.code, e.details ?? null, e.headers ?? {});
    return e.code === 'VALIDATION_ERROR' ? withFieldDetails(known) : known;
  }
  return null;
}

function withFieldDetails(e: DomainError): DomainError {
  if (Array.isArray(e.details)) return e;
  const extra = e.details && typeof e.details === 'object' ? (e.details as Record<string, unknown>) : {};
  const field = typeof extra.field === 'string' ? extra.field : 'body';
  return new DomainError(e.code, e.message, [{ ...extra, field, message: e.message || 'invalid' }], e.headers);
}
