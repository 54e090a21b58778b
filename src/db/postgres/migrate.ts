import type pg from 'pg';
import type { Migration } from '../migrate.ts';
import { postgresMigrations } from '../migrations/postgres/index.ts';

/** The database was migrated by a newer cns: this one would misread it, so it does not start. */
export class SchemaNewerError extends Error {
  constructor(
    readonly found: number,
    readonly known: number,
  ) {
    super(`the database was migrated by a newer cns (schema version ${found}); this cns knows up to ${known}`);
    this.name = 'SchemaNewerError';
  }
}

/** Any fixed number: processes that start together take this lock in turn. */
const MIGRATION_LOCK = 727_001;

/**
 * Applies every migration newer than the database's, each in its own transaction, under a
 * session advisory lock (several processes starting at once migrate once). Refuses a database
 * whose highest version is above the code's.
 */
export async function runPostgresMigrations(pool: pg.Pool, migrations: readonly Migration[] = postgresMigrations): Promise<number[]> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)');
      const applied = new Set((await client.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
      const sorted = [...migrations].sort((a, b) => a.version - b.version);
      const known = sorted.at(-1)?.version ?? 0;
      const newest = Math.max(0, ...applied);
      if (newest > known) throw new SchemaNewerError(newest, known);
      const ran: number[] = [];
      for (const m of sorted) {
        if (applied.has(m.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [m.version, m.name, new Date().toISOString()]);
          await client.query('COMMIT');
        } catch (e) {
          await client.query('ROLLBACK');
          throw e;
        }
        ran.push(m.version);
      }
      return ran;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}
