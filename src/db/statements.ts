import type { Statement } from 'better-sqlite3';
import type { Db } from './database.ts';

/**
 * Prepared statements memoized by their SQL text. Compiling a statement costs about as much as
 * running a simple one, so code on the request path (authentication, authorization) should
 * prepare each statement once per database.
 */
export function statementCache(db: Db): (sql: string) => Statement {
  const cache = new Map<string, Statement>();
  return (sql) => {
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = db.prepare(sql);
      cache.set(sql, stmt);
    }
    return stmt;
  };
}
