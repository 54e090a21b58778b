import type pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { isRetryableTransactionError } from '../postgres/errorKinds.ts';
import { translatingPool } from '../postgres/unavailable.ts';
import { changesPlugin, PostgresChanges } from './metadataChanges.ts';
import type { MetadataDb, MetadataStore } from './metadataStore.ts';
import type { MetadataSchema } from './schema.ts';

/** A transaction the server rolled back as a whole (serialization failure, deadlock) runs again, at most this many times in all. */
const ATTEMPTS = 3;

/**
 * The metadata store on PostgreSQL (docs/design/postgres.md, step 4; CNS_DATABASE_URL). A
 * transaction takes a connection of the bounded pool for its duration, at the server's default
 * isolation (read committed); the pool is the caller's to make (db/postgres/pool.ts) and is ended
 * by close(). A lost database or a statement timeout reaches callers as DATABASE_UNAVAILABLE or
 * DATABASE_TIMEOUT (unavailable.ts). Changes to cached tables are learnt from a LISTEN connection
 * of its own, started here in the background (metadataChanges.ts).
 */
export function openPostgresMetadata(pool: pg.Pool): MetadataStore {
  const changes = new PostgresChanges(pool.options);
  void changes.start();
  const db: MetadataDb = new Kysely<MetadataSchema>({ dialect: new PostgresDialect({ pool: translatingPool(pool) }), plugins: [changesPlugin(changes)] });
  return {
    db,
    engine: 'postgres',
    transaction: async (fn) => {
      for (let attempt = 1; ; attempt++) {
        const before = changes.writes;
        try {
          const result = await db.transaction().execute(fn);
          // Its writes were counted as they ran, before the commit: a reader in between may have kept what they replaced.
          if (changes.writes !== before) changes.changed();
          return result;
        } catch (e) {
          // Safe to run again only because the server undid all of it and `fn` awaits nothing but
          // its own queries (the store's rule); any other failure (a lost connection: the commit's
          // outcome is unknown) goes to the caller.
          if (attempt >= ATTEMPTS || !isRetryableTransactionError(e)) throw e;
        }
      }
    },
    changes,
    close: async () => {
      await changes.close();
      await db.destroy();
    },
  };
}
