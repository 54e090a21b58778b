import { sql } from 'kysely';
import type { MetadataDb, MetadataStore } from './metadataStore.ts';

/**
 * Holds `key` until the transaction `trx` ends, so that transactions about one thing (an agent's
 * accesses, say) take turns even when no row of theirs exists yet to lock. SQLite needs nothing:
 * a metadata transaction there holds the database's write lock from its start. PostgreSQL takes
 * a transaction-scoped advisory lock on the key's 64-bit hash.
 */
export async function lockKey(engine: MetadataStore['engine'], trx: MetadataDb, key: string): Promise<void> {
  if (engine === 'sqlite') return;
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`.execute(trx);
}
