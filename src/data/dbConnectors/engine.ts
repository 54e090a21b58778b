import { checkReadOnlyStatement } from './statementCheck.ts';
import { nameCandidates, pickTable, quotedTable } from './tableNames.ts';
import type { ColumnInfo, EngineName, RowSink, StreamOutcome, TableInfo, TableList } from './types.ts';
import { rowObject, uniqueNames } from './values.ts';

/**
 * One read-only session with a database: its catalog and one statement at a time. Each engine
 * (postgres.ts, mysql.ts, sqlite.ts) opens sessions its own way; everything above a session is
 * the same for all of them (below).
 */
export interface DbSession {
  /** Tables and views this session may read; with `only`, just those schema/name pairs (null schema: any). */
  catalog(only?: { schema: string | null; name: string }[]): Promise<TableList>;
  /** Runs one statement, handing at most `limit` rows to `sink`; a further row ends it as truncated. */
  stream(sql: string, limit: number, sink: RowSink): Promise<StreamOutcome>;
  /** Ends the session (rolling its read-only transaction back); never throws. */
  close(): Promise<void>;
}

export interface SessionOpener {
  readonly engine: EngineName;
  open(): Promise<DbSession>;
}

export interface Preview {
  table: TableInfo;
  columns: ColumnInfo[];
  rows: Record<string, unknown>[];
  truncated: boolean;
}

/** What the connectors ask of a database, whichever engine it is. */
export interface DbEngine {
  readonly engine: EngineName;
  /** Connects, runs a trivial statement in a read-only session and disconnects. */
  test(): Promise<void>;
  /** Schemas, tables and views with row estimates and columns. */
  listTables(): Promise<TableList>;
  /** The first `limit` rows of a table the catalog lists (`LIMIT`, never a full scan). */
  preview(table: string, limit: number): Promise<Preview>;
  /** Streams the first `limit` rows of a table the catalog lists. */
  readTable(table: string, limit: number, sink: RowSink): Promise<StreamOutcome & { table: TableInfo }>;
  /** Streams the rows of a user's statement, which must be one read-only SELECT/WITH (checked first). */
  query(sql: string, limit: number, sink: RowSink): Promise<StreamOutcome>;
}

async function within<T>(opener: SessionOpener, work: (s: DbSession) => Promise<T>): Promise<T> {
  const session = await opener.open();
  try {
    return await work(session);
  } finally {
    // Not awaited: the answer does not wait for the server to tear the session down (~10 ms for PostgreSQL).
    void session.close();
  }
}

/** The table a caller named, resolved through the session's own catalog. */
async function resolveTable(session: DbSession, name: string): Promise<TableInfo> {
  return pickTable((await session.catalog(nameCandidates(name))).tables, name);
}

/** `SELECT *` of a resolved table with one row more than wanted, so that truncation is known without a count. */
const firstRowsSql = (engine: EngineName, t: TableInfo, limit: number) => `SELECT * FROM ${quotedTable(engine, t)} LIMIT ${Math.trunc(limit) + 1}`;

/** A DbEngine over an engine's sessions: every call opens its own session and closes it. */
export function engineOver(opener: SessionOpener): DbEngine {
  const engine = opener.engine;
  return {
    engine,
    test: () => within(opener, (s) => s.stream('SELECT 1', 1, { columns() {}, row() {} }).then(() => undefined)),
    listTables: () => within(opener, (s) => s.catalog()),
    preview: (name, limit) =>
      within(opener, async (s) => {
        const table = await resolveTable(s, name);
        let names: string[] = [];
        const rows: Record<string, unknown>[] = [];
        const { truncated } = await s.stream(firstRowsSql(engine, table, limit), limit, {
          columns: (cols) => {
            names = uniqueNames(cols.map((c) => c.name));
          },
          row: (values) => {
            rows.push(rowObject(names, values));
          },
        });
        // The catalog's types (varchar(20), numeric(10,2)) say more than a driver's type codes.
        const columns = table.columns.length === names.length ? table.columns.map((c, i) => ({ ...c, name: names[i]! })) : names.map((n) => ({ name: n, type: null, nullable: null }));
        return { table, columns, rows, truncated };
      }),
    readTable: (name, limit, sink) =>
      within(opener, async (s) => {
        const table = await resolveTable(s, name);
        return { table, ...(await s.stream(firstRowsSql(engine, table, limit), limit, sink)) };
      }),
    query: async (sql, limit, sink) => {
      // Checked before any connection is opened: a refused statement costs the database nothing.
      const statement = checkReadOnlyStatement(sql, engine);
      return within(opener, (s) => s.stream(statement, limit, sink));
    },
  };
}
