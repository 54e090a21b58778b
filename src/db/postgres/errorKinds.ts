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
