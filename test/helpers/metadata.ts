import type { RawBuilder } from 'kysely';
import { join } from 'node:path';
import { openSqliteMetadata, type MetadataStore } from '../../src/db/metadata/metadataStore.ts';
import { openPostgresMetadata } from '../../src/db/metadata/postgresMetadata.ts';
import { openPostgresPool } from '../../src/db/postgres/pool.ts';
import { databaseOfDataDir } from './serverDatabases.ts';

/**
 * What a test reads straight from the metadata store (either engine; the content index stays on
 * `services.db`). Build the statement with kysely's `sql` template, values as `${…}`, tables as
 * `${sql.table(name)}`.
 */

/** The column `n` of the first row (a COUNT), as a number: PostgreSQL answers a bigint as a string. */
export async function metadataCount(server: { services: { metadata: MetadataStore } }, query: RawBuilder<unknown>): Promise<number> {
  const { rows } = await query.execute(server.services.metadata.db);
  return Number((rows[0] as { n: number | string | bigint } | undefined)?.n ?? 0);
}

/** Every row the statement answers. */
export async function metadataRows<R>(server: { services: { metadata: MetadataStore } }, query: RawBuilder<R>): Promise<R[]> {
  return (await query.execute(server.services.metadata.db)).rows;
}

/**
 * The metadata store of a data folder whose server is stopped (or another connection to a
 * running one's): its cns.db on SQLite, its database on PostgreSQL (serverDatabases.ts). Close it.
 */
export async function openMetadataOfDataDir(dataDir: string): Promise<MetadataStore> {
  const { CNS_DATABASE_URL: url } = await databaseOfDataDir(dataDir);
  if (!url) return openSqliteMetadata(join(dataDir, 'cns.db'));
  return openPostgresMetadata(openPostgresPool(url, { statementTimeoutMs: 30_000, max: 2 }));
}
