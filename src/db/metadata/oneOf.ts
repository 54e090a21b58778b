import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { MetadataStore } from './metadataStore.ts';

/**
 * `column IN (values)` with the list bound as ONE parameter, however long it is: SQLite reads a
 * JSON array (json_each), PostgreSQL an array (= ANY). A list spelled out as one parameter per
 * value would change the statement's text with its length and meet each engine's parameter limit.
 */
export function oneOf(engine: MetadataStore['engine'], column: Expression<unknown>, values: readonly string[]): RawBuilder<SqlBool> {
  if (engine === 'sqlite') return sql<SqlBool>`${column} IN (SELECT value FROM json_each(${JSON.stringify(values)}))`;
  return sql<SqlBool>`${column} = ANY(${values as string[]})`;
}
