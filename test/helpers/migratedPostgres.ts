import { createHash } from 'node:crypto';
import { postgresMigrations } from '../../src/db/migrations/postgres/index.ts';
import { runPostgresMigrations } from '../../src/db/postgres/migrate.ts';
import { openPostgresPool } from '../../src/db/postgres/pool.ts';
import { ensureTemplate, freshPostgresDatabase, type TestDatabase } from './postgresDatabases.ts';

/**
 * PostgreSQL databases holding the service's current schema, for the suite's servers
 * (testEngine.ts) and for the tests of PostgreSQL itself, which use it whatever the engine.
 */

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

/** A migrated database of its own for each call, all dropped after the test file (`after` is ava's `test.after.always`). */
export function migratedDatabases(after: (drop: () => Promise<unknown>) => void): () => Promise<TestDatabase> {
  const made: TestDatabase[] = [];
  after(() => Promise.all(made.map((d) => d.drop())));
  return async () => {
    const d = await freshMigratedDatabase();
    made.push(d);
    return d;
  };
}
