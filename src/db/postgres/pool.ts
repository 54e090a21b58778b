import pg from 'pg';
import { parseDatabaseUrl, type DatabaseUrl } from '../../config/databaseUrl.ts';

export interface PostgresPoolOptions {
  /** Connections at most (CNS_DATABASE_POOL); a caller past that waits for one to be free. */
  max?: number;
  /** The server stops any statement running longer (CNS_DATABASE_STATEMENT_TIMEOUT_MS). */
  statementTimeoutMs: number;
  /** Connecting (TCP, TLS, authentication) and waiting for a free connection may take this long. */
  connectTimeoutMs?: number;
  /** Told about a connection that failed while idle in the pool (a server restart, an admin's kill); the pool has already dropped it. */
  onIdleError?: (err: Error) => void;
}

/**
 * A bounded pool for the metadata store. statement_timeout is a start-up parameter of every
 * connection (pg's `statement_timeout` option), so no connection ever runs without it, not even
 * one opened after the server killed the previous.
 */
export function openPostgresPool(url: string | DatabaseUrl, options: PostgresPoolOptions): pg.Pool {
  const { connection } = typeof url === 'string' ? parseDatabaseUrl(url) : url;
  const { max = 10, statementTimeoutMs, connectTimeoutMs = 5000 } = options;
  for (const [name, n] of [['max', max], ['statementTimeoutMs', statementTimeoutMs], ['connectTimeoutMs', connectTimeoutMs]] as const) {
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`openPostgresPool: ${name} must be a whole number above 0 (got ${n})`);
  }
  const pool = new pg.Pool({
    ...connection,
    types: metadataTypes,
    max,
    statement_timeout: statementTimeoutMs,
    connectionTimeoutMillis: connectTimeoutMs,
    application_name: 'cns',
  });
  // Without a listener an idle connection's error (57P01 on a server restart) would be thrown
  // as an unhandled 'error' event and end the process; the pool replaces the connection on demand.
  pool.on('error', (err) => options.onIdleError?.(err));
  // A checked-out connection that drops also emits 'error' (pg-pool listens only while it is
  // idle), which would end the process as well; the query in flight and every later one on that
  // client fail with the cause, which is where the caller learns of it.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

const INT8 = 20;
/**
 * 64-bit integers (COUNT, SUM, BIGINT columns) as numbers, as better-sqlite3 gives them: the
 * metadata holds counts and millisecond times, far below 2^53. pg's default is text.
 */
const metadataTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8 ? Number : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser,
};
