import type mysql from 'mysql2';
import { scrub } from '../../logging/redact.ts';
import { isRefusal } from '../../net/outboundGuard.ts';
import { engineOver, type DbEngine, type DbSession } from './engine.ts';
import { DbConnectorError, SessionFailure } from './errors.ts';
import { mysqlGuardedSocket } from './guardedSocket.ts';
import { TABLE_LIST_CAP, type ColumnInfo, type NetworkTarget, type RowSink, type SessionLimits, type StreamOutcome, type TableInfo, type TableList } from './types.ts';

/*
 * MySQL and MariaDB sessions (mysql2). Read-only by SET SESSION TRANSACTION READ ONLY plus
 * START TRANSACTION READ ONLY; one statement per call (multipleStatements stays off, so
 * `commit; insert …` is a syntax error); a statement timeout on the server (MariaDB's
 * max_statement_time, MySQL's max_execution_time) backed by a client-side timer. Note that a
 * read-only transaction does not stop SELECT … INTO OUTFILE: statementCheck.ts refuses INTO.
 */

interface Driver {
  mysql: typeof mysql;
  /** Column type codes by name (mysql2's Types, lower-cased). */
  typeNames: Map<number, string>;
}

/** mysql2 (~100 ms of CPU to load) is imported by the first MySQL session: most processes never open one. */
let driver: Promise<Driver> | undefined;
const loadDriver = () =>
  (driver ??= import('mysql2').then(({ default: mysql }) => ({
    mysql,
    typeNames: new Map(Object.entries((mysql as unknown as { Types: Record<string, number> }).Types).map(([name, code]) => [code, name.toLowerCase()])),
  })));

type Field = { name: string; columnType?: number; type?: number };

const timeoutMessage = (limits: SessionLimits) => `The statement ran longer than the statement timeout (${limits.statementTimeoutMs} ms, CNS_DB_STATEMENT_TIMEOUT_MS) and was stopped.`;

/** A driver error as a SessionFailure with a caller-fit message; errors of our own (the sink's 413) pass unchanged. */
function failure(e: unknown, target: NetworkTarget, limits: SessionLimits): Error {
  if (e instanceof DbConnectorError) return e;
  if (e instanceof SessionFailure) return e;
  const err = e as { errno?: number; code?: string; message?: string; fatal?: boolean };
  const message = scrub(err.message ?? String(e), target.password);
  if (isRefusal(e)) return new SessionFailure('refused', `The host is refused: ${message}.`, 'host');
  switch (err.errno) {
    case 1045:
    case 1698:
      return new SessionFailure('auth', `The server refused the credentials: ${message}.`, 'password');
    case 1044:
    case 1049:
      return new SessionFailure('auth', `The server refused the database: ${message}.`, 'database');
    // MariaDB's max_statement_time (e.code is undefined for it) and MySQL's max_execution_time.
    case 1969:
    case 3024:
      return new SessionFailure('timeout', timeoutMessage(limits));
    case 1792:
      return new SessionFailure('read_only', `The server refused a write: the connector's sessions are read-only (${message}).`);
  }
  if (typeof err.errno === 'number' && err.errno >= 1000 && !err.fatal) return new SessionFailure('statement', `The server refused the statement: ${message}.`);
  const what = err.code === 'ETIMEDOUT' ? `no answer within ${limits.connectTimeoutMs / 1000} s` : message;
  return new SessionFailure('network', `MySQL at ${target.host}:${target.port} could not be reached: ${what}.`, 'host');
}

class MysqlSession implements DbSession {
  private dead = false;

  constructor(
    private readonly conn: mysql.Connection,
    private readonly target: NetworkTarget,
    private readonly limits: SessionLimits,
    private readonly typeNames: Map<number, string>,
  ) {}

  async catalog(only?: { schema: string | null; name: string }[]): Promise<TableList> {
    const names = only?.filter((o) => o.schema === null || o.schema === this.target.database).map((o) => o.name);
    if (names && names.length === 0) return { tables: [], truncated: false };
    const filter = names ? ' AND TABLE_NAME IN (?)' : '';
    const rows = await this.all(
      `SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE, TABLE_ROWS FROM information_schema.TABLES
        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE IN ('BASE TABLE', 'VIEW', 'SYSTEM VERSIONED')${filter}
        ORDER BY TABLE_NAME LIMIT ?`,
      names ? [names, TABLE_LIST_CAP + 1] : [TABLE_LIST_CAP + 1],
    );
    const truncated = rows.length > TABLE_LIST_CAP;
    const listed = rows.slice(0, TABLE_LIST_CAP);
    const columns = new Map<string, ColumnInfo[]>();
    if (listed.length) {
      const cols = await this.all(
        `SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE FROM information_schema.COLUMNS
          WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME IN (?) ORDER BY TABLE_NAME, ORDINAL_POSITION`,
        [listed.map((r) => r[1])],
      );
      for (const [table, name, type, nullable] of cols) {
        if (!columns.has(table as string)) columns.set(table as string, []);
        columns.get(table as string)!.push({ name: name as string, type: type as string, nullable: nullable === 'YES' });
      }
    }
    const tables: TableInfo[] = listed.map(([schema, name, type, estimate]) => ({
      schema: schema as string,
      name: name as string,
      qualifiedName: name as string,
      kind: type === 'VIEW' ? 'view' : 'table',
      // InnoDB's TABLE_ROWS is an estimate from its statistics; views have none.
      rowEstimate: estimate === null || estimate === undefined ? null : Number(estimate),
      rowCountExact: false,
      columns: columns.get(name as string) ?? [],
    }));
    return { tables, truncated };
  }

  private async all(sql: string, values: unknown[]): Promise<unknown[][]> {
    const rows: unknown[][] = [];
    await this.run(sql, values, Number.MAX_SAFE_INTEGER, { columns() {}, row: (r) => rows.push(r) });
    return rows;
  }

  stream(sql: string, limit: number, sink: RowSink): Promise<StreamOutcome> {
    return this.run(sql, undefined, limit, sink);
  }

  private run(sql: string, values: unknown[] | undefined, limit: number, sink: RowSink): Promise<StreamOutcome> {
    if (this.dead) return Promise.reject(new SessionFailure('network', 'The session was closed.'));
    return new Promise((resolve, reject) => {
      let rows = 0;
      let settled = false;
      let columnsSent = false;
      const settle = (outcome: StreamOutcome | Error, stopConnection: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(backstop);
        if (stopConnection) this.kill();
        if (outcome instanceof Error) reject(failure(outcome, this.target, this.limits));
        else resolve(outcome);
      };
      const columns = (fields: Field[] | undefined) => {
        if (columnsSent) return;
        columnsSent = true;
        sink.columns((fields ?? []).map((f) => ({ name: f.name, type: this.typeNames.get(f.columnType ?? f.type ?? -1) ?? null, nullable: null })));
      };
      const query = this.conn.query({ sql, values, rowsAsArray: true });
      query.on('fields', (fields: Field[]) => {
        if (settled) return;
        try {
          columns(fields);
        } catch (e) {
          settle(e as Error, true);
        }
      });
      query.on('result', (row: unknown) => {
        if (settled) return;
        try {
          // A statement without a result set (there should be none here) answers a header, not a row.
          if (!Array.isArray(row)) return;
          if (rows >= limit) return settle({ rows, truncated: true }, true);
          sink.row(row);
          rows++;
        } catch (e) {
          settle(e as Error, true);
        }
      });
      query.on('end', () => {
        if (settled) return;
        try {
          columns([]);
          settle({ rows, truncated: false }, false);
        } catch (e) {
          settle(e as Error, true);
        }
      });
      query.on('error', (e: Error) => settle(e, false));
      const backstop = setTimeout(() => settle(new SessionFailure('timeout', timeoutMessage(this.limits)), true), this.limits.statementTimeoutMs + 2000);
    });
  }

  private kill(): void {
    this.dead = true;
    this.conn.destroy();
  }

  async close(): Promise<void> {
    if (this.dead) return;
    this.dead = true;
    // Ending the connection rolls its read-only transaction back.
    await new Promise<void>((resolve) => this.conn.end(() => resolve()));
  }
}

const exec = (conn: mysql.Connection, sql: string) => new Promise<void>((resolve, reject) => conn.query(sql, (e) => (e ? reject(e) : resolve())));

/** A MySQL or MariaDB database as a DbEngine: one connection per call. */
export function mysqlEngine(target: NetworkTarget, limits: SessionLimits): DbEngine {
  return engineOver({
    engine: 'mysql',
    async open() {
      const { mysql, typeNames } = await loadDriver();
      const verify = target.ssl === 'verify-full';
      const conn = mysql.createConnection({
        host: target.host,
        port: target.port,
        database: target.database,
        user: target.user,
        password: target.password ?? '',
        ssl: target.ssl === 'disable' ? undefined : { rejectUnauthorized: verify, verifyIdentity: verify },
        connectTimeout: limits.connectTimeoutMs,
        multipleStatements: false,
        charset: 'utf8mb4',
        // Dates as the server writes them, DECIMAL as exact strings, BIGINT as numbers when safe.
        dateStrings: true,
        supportBigNumbers: true,
        bigNumberStrings: false,
        stream: mysqlGuardedSocket(target.host, target.port, limits.allowLoopback),
      });
      // Errors of an idle connection would otherwise be thrown as unhandled 'error' events.
      conn.on('error', () => undefined);
      try {
        await new Promise<void>((resolve, reject) => conn.connect((e) => (e ? reject(e) : resolve())));
        const seconds = limits.statementTimeoutMs / 1000;
        await exec(conn, `SET SESSION max_statement_time = ${seconds}`).catch(async (e: { errno?: number }) => {
          // MySQL has no max_statement_time (1193 unknown variable): its own limit for SELECTs.
          if (e.errno !== 1193) throw e;
          await exec(conn, `SET SESSION max_execution_time = ${Math.ceil(limits.statementTimeoutMs)}`);
        });
        await exec(conn, 'SET SESSION TRANSACTION READ ONLY');
        await exec(conn, 'START TRANSACTION READ ONLY');
      } catch (e) {
        conn.destroy();
        throw failure(e, target, limits);
      }
      return new MysqlSession(conn, target, limits, typeNames);
    },
  });
}
