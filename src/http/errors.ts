import { asDomainError, DomainError, type DomainErrorCode } from '../errors/domainError.ts';

/** The error codes of the API (SPEC section 7 plus METHOD_NOT_ALLOWED, CONFLICT, PAYLOAD_TOO_LARGE, UPSTREAM_ERROR, SERVICE_UNAVAILABLE, DATABASE_UNAVAILABLE and DATABASE_TIMEOUT) and their statuses. */
export const errorStatus = {
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  VALIDATION_ERROR: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  /** A remote the service fetched for the caller (a url sync's address) failed. */
  UPSTREAM_ERROR: 502,
  /** Something the server needs for this request is not configured (an agent's model provider). */
  SERVICE_UNAVAILABLE: 503,
  /** The metadata database is unreachable (PostgreSQL down, restarting, or the connection dropped): retry after Retry-After. */
  DATABASE_UNAVAILABLE: 503,
  /** A metadata statement ran past CNS_DATABASE_STATEMENT_TIMEOUT_MS and the database stopped it. */
  DATABASE_TIMEOUT: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/**
 * A domain error as an HTTP answer: its status from the code. Thrown by the HTTP edge itself
 * (routes, middleware); anything else thrown is mapped by `asAppError`, and what it does not
 * know becomes a bare 500.
 */
export class AppError extends DomainError {
  readonly status: number;

  constructor(code: ErrorCode, message: string, details?: unknown, headers: Record<string, string> = {}) {
    super(code as DomainErrorCode, message, details ?? null, headers);
    this.status = errorStatus[code];
  }
}

export const unauthorized = (message = 'Authentication is required: send Authorization: Bearer <token>.') =>
  new AppError('UNAUTHORIZED', message);
export const forbidden = (message = 'You do not have permission to do this.') => new AppError('FORBIDDEN', message);
export const notFound = (what = 'Resource') => new AppError('NOT_FOUND', `${what} not found.`);
export const conflict = (message: string, details?: unknown) => new AppError('CONFLICT', message, details);
export const validationError = (message: string, details?: unknown) =>
  new AppError('VALIDATION_ERROR', message, details);

/** The answer for a thrown error: an AppError as is, a domain error with its status, else null (a 500). */
export function asAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  const e = asDomainError(err);
  return e ? new AppError(e.code, e.message, e.details, e.headers) : null;
}
