import type { SelectQueryBuilder } from 'kysely';
import type { MetadataStore } from './metadataStore.ts';

/**
 * Locks the rows a select reads until the transaction ends (`.$call(forUpdate(engine))`), so a
 * check made on them holds for the write that follows. PostgreSQL: FOR UPDATE. SQLite needs
 * nothing: a metadata transaction there holds the database's write lock from its start.
 */
export function forUpdate(engine: MetadataStore['engine']) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return <QB extends SelectQueryBuilder<any, any, any>>(qb: QB): QB => (engine === 'postgres' ? (qb.forUpdate() as QB) : qb);
}
