/** Typed errors of the content store; the HTTP layer maps `code` to a status (404/409/422/413). */

export type ContentErrorCode = 'NOT_FOUND' | 'CONFLICT' | 'VALIDATION_ERROR' | 'PAYLOAD_TOO_LARGE';

export class ContentError extends Error {
  readonly code: ContentErrorCode;
  readonly details: Record<string, unknown>;
  constructor(code: ContentErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }
}

export class NotFoundError extends ContentError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('NOT_FOUND', message, details);
  }
}

export class ConflictError extends ContentError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('CONFLICT', message, details);
  }
}

export class ValidationError extends ContentError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('VALIDATION_ERROR', message, details);
  }
}

export class PayloadTooLargeError extends ContentError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('PAYLOAD_TOO_LARGE', message, details);
  }
}

export function isContentError(e: unknown): e is ContentError {
  return e instanceof ContentError;
}
