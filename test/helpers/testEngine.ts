import { claimServerDatabase, type ServerDatabase } from './serverDatabasePool.ts';

/**
 * The metadata engine the suite's servers run on: `CNS_TEST_ENGINE=postgres` (npm run
 * test:postgres) gives each one a PostgreSQL database of its own; anything else keeps SQLite in
 * the data folder, as `npm test` always has.
 */
export const TEST_ENGINE: 'sqlite' | 'postgres' = process.env.CNS_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

/** Per server: PostgreSQL's share is small, so that four test files (the concurrency) with several servers each stay far below max_connections. */
const TEST_POOL = '4';

/** What a server of this suite adds to its environment: on PostgreSQL, a database of its own and its pool size; nothing on SQLite. */
export function engineEnv(database: ServerDatabase | null): Record<string, string> {
  return database ? { CNS_DATABASE_URL: database.url, CNS_DATABASE_POOL: TEST_POOL } : {};
}

/** On PostgreSQL an empty migrated database for one server, from the pool (null on SQLite). */
export async function databaseForServer(): Promise<ServerDatabase | null> {
  return TEST_ENGINE === 'postgres' ? claimServerDatabase() : null;
}
