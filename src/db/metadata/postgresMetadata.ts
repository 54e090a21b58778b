import type pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { changesPlugin, PostgresChanges } from './metadataChanges.ts';
import type { MetadataDb, MetadataStore } from './metadataStore.ts';
import type { MetadataSchema } from './schema.ts';

/**
 * The metadata store on PostgreSQL (docs/design/postgres.md, step 4; not offered yet: the stores
 * move to the metadata store first). A transaction takes a connection of the bounded pool for its
 * duration, at the server's default isolation (read committed); the pool is the caller's to make
 * (db/postgres/pool.ts) and is ended by close(). Changes to cached tables are learnt from a
 * LISTEN connection of its own, started here in the background (metadataChanges.ts).
 */
export function openPostgresMetadata(pool: pg.Pool): MetadataStore {
  const changes = new PostgresChanges(pool.options);
  void changes.start();
  const db: MetadataDb = new Kysely<MetadataSchema>({ dialect: new PostgresDialect({ pool }), plugins: [changesPlugin(changes)] });
  return {
    db,
    engine: 'postgres',
    transaction: async (fn) => {
      const before = changes.writes;
      const result = await db.transaction().execute(fn);
      // Its writes were counted as they ran, before the commit: a reader in between may have kept what they replaced.
      if (changes.writes !== before) changes.changed();
      return result;
    },
    changes,
    close: async () => {
      await changes.close();
      await db.destroy();
    },
  };
}
