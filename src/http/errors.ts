/** The error codes of the API (SPEC section 7 plus METHOD_NOT_ALLOWED, CONFLICT, PAYLOAD_TOO_LARGE, UPSTREAM_ERROR and SERVICE_UNAVAILABLE) and their statuses. */
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
} as const;

export type ErrorCode = keyof typeof errorStatus;

/**
 * An error a client may see: its code, a human sentence and optional details. Anything
 * thrown that is not an AppError (or a domain error with a known code) becomes a bare 500.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: unknown;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, details?: unknown, headers: Record<string, string> = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.status = errorStatus[code];
    this.details = details ?? null;
    this.headers = headers;
  }
}

export const unauthorized = (message = 'Authentication is required: send Authorization: Bearer <token>.') =>
  new AppError('UNAUTHORIZED', message);
export const forbidden = (message = 'You do not have permission to do this.') => new AppError('FORBIDDEN', message);
export const notFound = (what = 'Resource') => new AppError('NOT_FOUND', `${what} not found.`);
export const conflict = (message: string, details?: unknown) => new AppError('CONFLICT', message, details);
export const validationError = (message: string, details?: unknown) =>
  new AppError('VALIDATION_ERROR', message, details);

const knownCodes = new Set(Object.keys(errorStatus));

/** Domain modules throw their own errors with a `code` property; this recognises them without importing them. */
export function asAppError(err: unknown): AppError | null {
  if (err instanceof AppError) return err;
  if (err && typeof err === 'object' && 'code' in err && typeof err.code === 'string' && knownCodes.has(err.code)) {
    const e = err as { code: ErrorCode; message?: string; details?: unknown };
    return new AppError(e.code, e.message || e.code, e.code === 'VALIDATION_ERROR' ? fieldDetails(e.message, e.details) : e.details);
  }
  return null;
}

/** Validation details are always a list of `{field, message}` (plus any context the domain gave). */
function fieldDetails(message: string | undefined, details: unknown): unknown {
  if (Array.isArray(details)) return details;
  const extra = details && typeof details === 'object' ? (details as Record<string, unknown>) : {};
  const field = typeof extra.field === 'string' ? extra.field : 'body';
  return [{ ...extra, field, message: message ?? 'invalid' }];
}
