import type pg from 'pg';
import type { Db } from '../database.ts';
import { runPostgresMigrations } from '../postgres/migrate.ts';

/** What `cns db copy` did: rows per table copied (in the order copied), and the tables that stay in SQLite. */
export interface CopyReport {
  tables: { table: string; rows: number }[];
  /** SQLite tables that PostgreSQL has no place for: the content index, rebuilt from git (docs/architecture.md). */
  stayed: string[];
}

export class CopyRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CopyRefusedError';
  }
}

interface TargetColumn {
  name: string;
  /** GENERATED ALWAYS identities take a copied value only with OVERRIDING SYSTEM VALUE; their sequence is moved past it after. */
  identity: boolean;
  required: boolean;
}

/** PostgreSQL's limit on the parameters of one statement. */
const MAX_PARAMETERS = 65_535;
const BATCH_ROWS = 1000;

/**
 * Copies every metadata record of a SQLite `cns.db` into an empty PostgreSQL database: the schema
 * is made by the PostgreSQL migrations, tables are filled parents first (their foreign keys), in
 * batches of up to 1,000 rows, all in ONE transaction, so a failure leaves the target as empty as
 * it was and the copy can simply be run again. Counts are compared per table after the commit.
 * The source is only read.
 */
export async function copyToPostgres(source: Db, pool: pg.Pool, progress: (table: string, rows: number) => void = () => {}): Promise<CopyReport> {
  await runPostgresMigrations(pool);
  const client = await pool.connect();
  try {
    const targets = await targetTables(client);
    for (const table of targets.keys()) {
      const { rows } = await client.query<{ any: boolean }>(`SELECT EXISTS (SELECT 1 FROM ${quote(table)}) AS any`);
      if (rows[0]!.any) throw new CopyRefusedError(`the target database already holds records (table ${table}): cns db copy fills only an empty database`);
    }
    const sourceTables = new Set((source.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[]).map((r) => r.name));
    const missing = [...targets.keys()].filter((t) => !sourceTables.has(t));
    if (missing.length) throw new CopyRefusedError(`the SQLite database has no table ${missing.join(', ')}: open it once with this version of cns (it migrates on start), then copy`);
    const order = await parentsFirst(client, [...targets.keys()]);

    const report: CopyReport = { tables: [], stayed: [...sourceTables].filter((t) => !targets.has(t) && t !== 'schema_migrations').sort() };
    await client.query('BEGIN');
    try {
      for (const table of order) {
        const rows = await copyTable(source, client, table, targets.get(table)!);
        report.tables.push({ table, rows });
        progress(table, rows);
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    }
    for (const { table, rows } of report.tables) {
      const { rows: counted } = await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${quote(table)}`);
      if (Number(counted[0]!.n) !== rows) throw new Error(`verification failed: ${table} has ${counted[0]!.n} rows in PostgreSQL, ${rows} in SQLite`);
    }
    return report;
  } finally {
    client.release();
  }
}

async function copyTable(source: Db, client: pg.PoolClient, table: string, columns: TargetColumn[]): Promise<number> {
  const info = source.prepare(`PRAGMA table_info(${quote(table)})`).all() as { name: string; pk: number }[];
  const sourceColumns = new Set(info.map((c) => c.name));
  const lost = [...sourceColumns].filter((c) => !columns.some((t) => t.name === c));
  if (lost.length) throw new CopyRefusedError(`table ${table}: PostgreSQL has no column ${lost.join(', ')} (this cns's schemas differ; nothing was copied)`);
  const copied = columns.filter((c) => sourceColumns.has(c.name));
  const unfilled = columns.filter((c) => c.required && !sourceColumns.has(c.name));
  if (unfilled.length) throw new CopyRefusedError(`table ${table}: SQLite has no value for ${unfilled.map((c) => c.name).join(', ')} (this cns's schemas differ; nothing was copied)`);
  const names = copied.map((c) => quote(c.name)).join(', ');
  const perBatch = Math.max(1, Math.min(BATCH_ROWS, Math.floor(MAX_PARAMETERS / copied.length)));
  const overriding = copied.some((c) => c.identity) ? ' OVERRIDING SYSTEM VALUE' : '';
  // rowid order: the order the rows were made in, which identities (seq columns) follow too; a
  // table WITHOUT ROWID in the order of its key.
  const definition = (source.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) as { sql: string }).sql;
  const key = /WITHOUT\s+ROWID\s*$/i.test(definition)
    ? info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => quote(c.name)).join(', ')
    : 'rowid';
  const select = source.prepare(`SELECT ${names} FROM ${quote(table)} ORDER BY ${key}`).raw(true);
  let batch: unknown[][] = [];
  let total = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const values = batch.map((_, r) => `(${copied.map((__, c) => `$${r * copied.length + c + 1}`).join(', ')})`).join(', ');
    await client.query(`INSERT INTO ${quote(table)} (${names})${overriding} VALUES ${values}`, batch.flat());
    total += batch.length;
    batch = [];
  };
  for (const row of select.iterate() as IterableIterator<unknown[]>) {
    batch.push(row);
    if (batch.length === perBatch) await flush();
  }
  await flush();
  for (const c of copied.filter((x) => x.identity)) {
    // The next identity follows the copied ones (setval with is_called false when the table is empty).
    await client.query(`SELECT setval(pg_get_serial_sequence($1, $2), coalesce((SELECT max(${quote(c.name)}) FROM ${quote(table)}), 0) + 1, false)`, [table, c.name]);
  }
  return total;
}

/** The target's tables (but the migrations' own) with their columns. */
async function targetTables(client: pg.PoolClient): Promise<Map<string, TargetColumn[]>> {
  const { rows } = await client.query<{ table_name: string; column_name: string; is_identity: string; is_nullable: string; column_default: string | null }>(
    `SELECT c.table_name, c.column_name, c.is_identity, c.is_nullable, c.column_default
       FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.table_name <> 'schema_migrations'
      ORDER BY c.table_name, c.ordinal_position`,
  );
  const tables = new Map<string, TargetColumn[]>();
  for (const r of rows) {
    const identity = r.is_identity === 'YES';
    const list = tables.get(r.table_name) ?? [];
    list.push({ name: r.column_name, identity, required: r.is_nullable === 'NO' && r.column_default === null && !identity });
    tables.set(r.table_name, list);
  }
  return tables;
}

/** The tables ordered so that every table comes after those its foreign keys name. */
async function parentsFirst(client: pg.PoolClient, tables: string[]): Promise<string[]> {
  const { rows } = await client.query<{ child: string; parent: string }>(
    `SELECT DISTINCT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent
       FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
      WHERE c.contype = 'f' AND n.nspname = current_schema()`,
  );
  const parents = new Map<string, Set<string>>(tables.map((t) => [t, new Set()]));
  for (const r of rows) if (r.child !== r.parent) parents.get(unquote(r.child))?.add(unquote(r.parent));
  const done = new Set<string>();
  const order: string[] = [];
  const visit = (t: string, path: Set<string>) => {
    if (done.has(t)) return;
    if (path.has(t)) throw new Error(`foreign keys form a cycle through ${t}`);
    path.add(t);
    for (const p of [...(parents.get(t) ?? [])].sort()) visit(p, path);
    path.delete(t);
    done.add(t);
    order.push(t);
  };
  for (const t of [...tables].sort()) visit(t, new Set());
  return order;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
const unquote = (name: string) => name.replace(/^"(.*)"$/, '$1').replace(/""/g, '"');
