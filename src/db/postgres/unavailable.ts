import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';
import { DomainError } from '../../errors/domainError.ts';
import { isConnectionLost, isStatementTimeout, isUnreachable } from './errorKinds.ts';

/**
 * A failure of the metadata database that the caller cannot fix, as the API's error: every surface
 * (HTTP 503 with Retry-After, MCP, git) then answers it by its code instead of a bare internal
 * error. The message names no host, user or password. Anything else is answered null (left as it is).
 */
export function asDatabaseError(err: unknown): DomainError | null {
  if (err instanceof DomainError) return null;
  if (isStatementTimeout(err)) {
    return new DomainError('DATABASE_TIMEOUT', 'A database statement ran past its time limit and was stopped; what it was doing was not kept. Retry the request; if it keeps happening, the database is overloaded.', null, { 'Retry-After': '1' });
  }
  if (isConnectionLost(err) || isUnreachable(err)) {
    // The outcome of a commit whose connection dropped is unknown, so the message promises nothing about it.
    return new DomainError('DATABASE_UNAVAILABLE', 'The database cannot be reached right now; retry the request shortly.', null, { 'Retry-After': '2' });
  }
  return null;
}

const rethrow = (err: unknown): never => {
  const known = asDatabaseError(err);
  if (known) throw Object.assign(known, { cause: err });
  throw err;
};

/**
 * The pool as Kysely's dialect sees it, with connect and query failures translated by
 * asDatabaseError. Everything else (unique violations, serialization failures) passes through
 * untouched, so callers keep matching SQLSTATEs. A failed client is still released to pg-pool
 * as itself, which drops it: the pool heals by opening new connections once the server is back.
 */
export function translatingPool(pool: pg.Pool): PostgresPool {
  // Kysely keeps one connection object per client it is handed, so a client gets one wrapper.
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    let w = wrapped.get(client);
    if (!w) {
      w = {
        query: ((...args: unknown[]) => {
          const result = (client.query as (...a: unknown[]) => unknown)(...args);
          // A cursor (Kysely's streaming) is returned as it is; its reads fail with the driver's errors.
          return result instanceof Promise ? result.catch(rethrow) : result;
        }) as PostgresPoolClient['query'],
        release: (destroy?: boolean) => client.release(destroy),
      };
      wrapped.set(client, w);
    }
    return w;
  };
  return {
    connect: () => pool.connect().then(wrap, rethrow),
    end: () => pool.end(),
  };
}
