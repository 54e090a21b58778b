/**
 * Errors of the database connectors. Each carries one of the API's codes, so the HTTP layer maps
 * it without this module importing HTTP code: what the caller got wrong or what their database
 * refused is 422 naming the field, a saved connection whose database cannot be reached is 502,
 * a result larger than a node may be is 413. A driver's raw error never reaches the caller.
 */
export type DbErrorCode = 'VALIDATION_ERROR' | 'UPSTREAM_ERROR' | 'PAYLOAD_TOO_LARGE';

export class DbConnectorError extends Error {
  constructor(
    readonly code: DbErrorCode,
    message: string,
    readonly details: unknown = null,
  ) {
    super(message);
    this.name = 'DbConnectorError';
  }
}

/** A 422 naming the offending field, in the shape request validation uses. */
export const dbInvalid = (field: string, message: string) => new DbConnectorError('VALIDATION_ERROR', message, [{ field, message }]);

/** Why a session failed, as classified by the engine that ran it. */
export type FailureKind =
  /** Refused by the host guard (loopback, link-local, metadata). */
  | 'refused'
  /** No connection: DNS, TCP refused or unreachable, connect timeout, TLS. */
  | 'network'
  /** The database turned the credentials or the database name down. */
  | 'auth'
  /** The statement ran past the statement timeout. */
  | 'timeout'
  /** The database refused a write (the session is read-only). */
  | 'read_only'
  /** The database refused the statement (syntax, unknown column, permission). */
  | 'statement';

/** A session failure with a message fit for the caller (no password, no connection string). */
export class SessionFailure extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    /** The connection field a refused connection points at (host, user, password, database, file). */
    readonly field?: string,
  ) {
    super(message);
    this.name = 'SessionFailure';
  }
}
