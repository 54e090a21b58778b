import type Database from 'better-sqlite3';
import { sql } from 'kysely';
import type { MetadataStore } from '../../src/db/metadata/metadataStore.ts';

/**
 * Every string in every row the server keeps: the SQLite file (the content index, and the
 * metadata too on SQLite) and, on PostgreSQL, every table of the metadata database. For tests
 * that prove a secret is stored nowhere, whichever engine holds the records.
 */
export async function everyStoredString(server: { services: { db: Database.Database; metadata: MetadataStore } }): Promise<string[]> {
  // A JSON column of PostgreSQL comes back parsed: its text is what it stores.
  const strings = (rows: Record<string, unknown>[]) =>
    rows.flatMap((r) => Object.values(r).flatMap((v) => (typeof v === 'string' ? [v] : v !== null && typeof v === 'object' && !(v instanceof Date) && !Buffer.isBuffer(v) ? [JSON.stringify(v)] : [])));
  const db = server.services.db;
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
  const found = tables.flatMap(({ name }) => strings(db.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[]));
  const metadata = server.services.metadata;
  if (metadata.engine === 'postgres') {
    const { rows } = await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`.execute(metadata.db);
    for (const { name } of rows) found.push(...strings((await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(name)}`.execute(metadata.db)).rows));
  }
  return found;
}
