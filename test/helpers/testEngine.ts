import { createHash } from 'node:crypto';
import { postgresMigrations } from '../../src/db/migrations/postgres/index.ts';
import { runPostgresMigrations } from '../../src/db/postgres/migrate.ts';
import { openPostgresPool } from '../../src/db/postgres/pool.ts';
import { ensureTemplate, freshPostgresDatabase, type TestDatabase } from './postgresDatabases.ts';

/**
 * The metadata engine the suite's servers run on: `CNS_TEST_ENGINE=postgres` (npm run
 * test:postgres) gives each one a PostgreSQL database of its own; anything else keeps SQLite in
 * the data folder, as `npm test` always has.
 */
export const TEST_ENGINE: 'sqlite' | 'postgres' = process.env.CNS_TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

/** Per server: PostgreSQL's share is small, so that three test files with several servers each stay far below max_connections. */
const TEST_POOL = '4';

/** The migrated template's name changes with the migrations, so a changed schema never clones a stale one. */
function templateName(): string {
  const hash = createHash('sha256');
  for (const m of postgresMigrations) hash.update(`${m.version}\0${m.name}\0${m.sql}\0`);
  return `cns_tpl_${hash.digest('hex').slice(0, 16)}`;
}

let template: Promise<string> | undefined;
/** Made once for the machine (ensureTemplate serializes the processes that race to make it), kept for the next run. */
export function migratedTemplate(): Promise<string> {
  return (template ??= ensureTemplate(templateName(), async (url) => {
    const pool = openPostgresPool(url, { statementTimeoutMs: 60_000, max: 1 });
    try {
      await runPostgresMigrations(pool);
    } finally {
      await pool.end();
    }
  }));
}

/** A fresh migrated database (a copy of the template), dropped by the caller. */
export async function freshMigratedDatabase(): Promise<TestDatabase> {
  return freshPostgresDatabase({ template: await migratedTemplate() });
}

/** What a server of this suite adds to its environment: on PostgreSQL, a database of its own and its pool size; nothing on SQLite. */
export function engineEnv(database: TestDatabase | null): Record<string, string> {
  return database ? { CNS_DATABASE_URL: database.url, CNS_DATABASE_POOL: TEST_POOL } : {};
}

/** On PostgreSQL a fresh database for one server (null on SQLite). */
export async function databaseForServer(): Promise<TestDatabase | null> {
  return TEST_ENGINE === 'postgres' ? freshMigratedDatabase() : null;
}
