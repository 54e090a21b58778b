import type { Db } from '../database.ts';

/** What Kysely's SQLite dialect asks of its database: prepare and close. */
export interface PreparingDatabase {
  prepare: Db['prepare'];
  close(): void;
}

/** Distinct statements kept; Kysely's SQL is parameterised, so only IN-lists of new lengths add more. */
const MAX_STATEMENTS = 1000;

/**
 * Kysely's SQLite driver prepares every query anew; preparing costs more than running a small
 * query (parsing and planning). Keeping the statement per SQL text makes a Kysely query cost what
 * a hand-prepared one does.
 */
export function cachingStatements(db: Db): PreparingDatabase {
  const kept = new Map<string, ReturnType<Db['prepare']>>();
  return {
    prepare(sql: string) {
      let statement = kept.get(sql);
      if (!statement) {
        if (kept.size >= MAX_STATEMENTS) kept.clear();
        statement = db.prepare(sql);
        kept.set(sql, statement);
      }
      return statement;
    },
    close: () => db.close(),
  } as PreparingDatabase;
}
