import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { openSqliteMetadata, type MetadataStore } from '../../src/db/metadata/metadataStore.ts';
import { openPostgresMetadata } from '../../src/db/metadata/postgresMetadata.ts';
import { runPostgresMigrations } from '../../src/db/postgres/migrate.ts';
import { openPostgresPool } from '../../src/db/postgres/pool.ts';
import { freshPostgresDatabase } from './postgresDatabases.ts';

export const ENGINES = ['sqlite', 'postgres'] as const;
export type Engine = (typeof ENGINES)[number];

/**
 * A migrated metadata store of either engine with one user, organization and project
 * (`prj_1`), for the stores' tests on both: SQLite in a temporary folder, PostgreSQL in a
 * database of its own. `close` drops it all.
 */
export async function metadataOn(engine: Engine): Promise<{ metadata: MetadataStore; url: string | null; close(): Promise<void> }> {
  let metadata: MetadataStore;
  let url: string | null = null;
  let cleanup: () => Promise<void>;
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'cns-metadata-'));
    const file = join(dir, 'cns.db');
    openDatabase(file).close();
    metadata = openSqliteMetadata(file);
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  } else {
    const database = await freshPostgresDatabase();
    url = database.url;
    const pool = openPostgresPool(database.url, { statementTimeoutMs: 10_000, max: 4 });
    await runPostgresMigrations(pool);
    metadata = openPostgresMetadata(pool);
    cleanup = () => database.drop();
  }
  const now = '2026-01-01T00:00:00.000Z';
  await sql`INSERT INTO users (id, email, password_hash, created_at, updated_at) VALUES ('usr_1', 'a@example.com', 'x', ${now}, ${now})`.execute(metadata.db);
  await sql`INSERT INTO organizations (id, name, created_at, updated_at) VALUES ('org_1', 'Org', ${now}, ${now})`.execute(metadata.db);
  await sql`INSERT INTO projects (id, org_id, name, created_at, updated_at) VALUES ('prj_1', 'org_1', 'Project', ${now}, ${now})`.execute(metadata.db);
  return {
    metadata,
    url,
    async close() {
      await metadata.close();
      await cleanup();
    },
  };
}
