/**
 * An error a domain module raises for a rule the caller broke. It carries one of the API's
 * error codes, so the HTTP error handler maps it without the domain importing HTTP code.
 */
export type DomainErrorCode = 'NOT_FOUND' | 'CONFLICT' | 'VALIDATION_ERROR' | 'UNAUTHORIZED' | 'FORBIDDEN' | 'RATE_LIMITED';

export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly details: unknown = null,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

/** A 422 naming one offending field, in the same `{field, message}` shape as request validation. */
export const invalidField = (field: string, message: string) => new DomainError('VALIDATION_ERROR', message, [{ field, message }]);
