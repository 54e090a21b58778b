/** What a failed pg call means for the caller: retry the transaction, or the connection is gone. */

/** The SQLSTATE of a server error, or the Node code (ECONNRESET…) of a socket error; Node's AggregateError (one try per address) gives its first. */
export function errorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; errors?: unknown[] } | null;
  if (typeof e?.code === 'string') return e.code;
  return Array.isArray(e?.errors) ? errorCode(e.errors[0]) : undefined;
}

/** Serialization failure or deadlock: the server rolled the transaction back and running it again may succeed. */
export function isRetryableTransactionError(err: unknown): boolean {
  const code = errorCode(err);
  return code === '40001' || code === '40P01';
}

/**
 * The connection is unusable: the server is shutting down or restarting (57P01-57P03), a
 * connection exception (class 08), or the socket went away. The statement's outcome is unknown
 * when it was a commit; a new connection from the pool may work.
 */
export function isConnectionLost(err: unknown): boolean {
  const code = errorCode(err);
  if (code === '57P01' || code === '57P02' || code === '57P03' || code?.startsWith('08') || code === 'ECONNRESET' || code === 'EPIPE') return true;
  // pg's own errors for a socket that closed under it carry no code.
  return err instanceof Error && (err.message.startsWith('Connection terminated') || err.message === 'Client has encountered a connection error and is not queryable');
}

/** Socket codes of a connection that could not be made at all (nothing listening, no route, no such host). */
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT']);

/**
 * No connection could be had: the server is not there (a socket code), refuses more sessions
 * (53300), or did not answer within the pool's connect timeout (pg-pool's and pg's own wording,
 * which carry no code).
 */
export function isUnreachable(err: unknown): boolean {
  const code = errorCode(err);
  if (code === '53300' || (code !== undefined && UNREACHABLE_CODES.has(code))) return true;
  return err instanceof Error && (err.message === 'timeout exceeded when trying to connect' || err.message.includes('due to connection timeout'));
}

/** The server stopped the statement: statement_timeout (57014, also a cancel request). The connection stays usable. */
export function isStatementTimeout(err: unknown): boolean {
  return errorCode(err) === '57014';
}
