import { dbInvalid } from './errors.ts';
import type { EngineName, TableInfo } from './types.ts';

/**
 * Table names from callers are never put into SQL as given: they are looked up in the
 * database's own catalog (the listing `listTables` answers) and the catalog's schema and name
 * are quoted as identifiers.
 */

/** An identifier quoted for the engine: "a""b" for PostgreSQL and SQLite, `a``b` for MySQL. */
export function quoteIdentifier(engine: EngineName, name: string): string {
  if (name.includes('\0')) throw dbInvalid('table', 'A table name cannot contain a NUL character.');
  return engine === 'mysql' ? '`' + name.replaceAll('`', '``') + '`' : '"' + name.replaceAll('"', '""') + '"';
}

/** `schema.table`, both quoted (SQLite and MySQL tables are read in the connection's own database). */
export function quotedTable(engine: EngineName, t: Pick<TableInfo, 'schema' | 'name'>): string {
  return engine === 'postgres' ? `${quoteIdentifier(engine, t.schema)}.${quoteIdentifier(engine, t.name)}` : quoteIdentifier(engine, t.name);
}

/**
 * The schema/name pairs a caller's table name may mean: `a.b` is schema a, table b (or a table
 * named "a.b"); a bare name is any schema's table of that name. The catalog decides which exist.
 */
export function nameCandidates(name: string): { schema: string | null; name: string }[] {
  const out: { schema: string | null; name: string }[] = [{ schema: null, name }];
  for (let i = name.indexOf('.'); i !== -1; i = name.indexOf('.', i + 1)) out.push({ schema: name.slice(0, i), name: name.slice(i + 1) });
  return out;
}

/**
 * The one table a caller's name denotes among those the catalog listed: its qualified name
 * exactly, else `schema.name`, else a bare name found in exactly one schema. 404-like 422 when
 * none, 422 naming the choices when several.
 */
export function pickTable(tables: readonly TableInfo[], name: string): TableInfo {
  const exact = tables.filter((t) => t.qualifiedName === name);
  const qualified = exact.length ? exact : tables.filter((t) => `${t.schema}.${t.name}` === name);
  const found = qualified.length ? qualified : tables.filter((t) => t.name === name);
  if (found.length === 1) return found[0]!;
  if (found.length === 0) throw dbInvalid('table', `No table or view named "${name}" that this connection can read (GET …/tables lists them).`);
  throw dbInvalid('table', `"${name}" names several tables: ${found.map((t) => t.qualifiedName).join(', ')}; give the qualified name.`);
}
