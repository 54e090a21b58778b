import type pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { MetadataDb, MetadataStore } from './metadataStore.ts';
import type { MetadataSchema } from './schema.ts';

/**
 * The metadata store on PostgreSQL (docs/design/postgres.md, step 4; not offered yet: the stores
 * move to the metadata store first). A transaction takes a connection of the bounded pool for its
 * duration, at the server's default isolation (read committed); the pool is the caller's to make
 * (db/postgres/pool.ts) and is ended by close().
 */
export function openPostgresMetadata(pool: pg.Pool): MetadataStore {
  const db: MetadataDb = new Kysely<MetadataSchema>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    engine: 'postgres',
    transaction: (fn) => db.transaction().execute(fn),
    close: () => db.destroy(),
  };
}
