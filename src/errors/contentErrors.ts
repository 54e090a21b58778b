import { DomainError } from './domainError.ts';

/** Typed errors of the content store: domain errors whose details are always an object. */

export type ContentErrorCode = 'NOT_FOUND' | 'CONFLICT' | 'VALIDATION_ERROR' | 'PAYLOAD_TOO_LARGE';

export class ContentError extends DomainError {
  declare readonly code: ContentErrorCode;
  declare readonly details: Record<string, unknown>;
  constructor(code: ContentErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(code, message, details);
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
