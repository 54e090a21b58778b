import pg from 'pg';
import { pgSslOptions } from '../../config/sslMode.ts';
import { scrub } from '../../logging/redact.ts';
import { isRefusal } from '../../net/outboundGuard.ts';
import { engineOver, type DbEngine, type DbSession } from './engine.ts';
import { DbConnectorError, SessionFailure } from './errors.ts';
import { pgGuardedSocket } from './guardedSocket.ts';
import { TABLE_LIST_CAP, type NetworkTarget, type RowSink, type SessionLimits, type StreamOutcome, type TableInfo, type TableKind, type TableList } from './types.ts';

/*
 * PostgreSQL sessions (pg). Read-only three ways over: the session starts with
 * default_transaction_read_only=on, every session opens BEGIN READ ONLY, and every statement
 * goes through the extended query protocol, which refuses several statements in one string
 * (the simple protocol would run `commit; insert …` after the read-only transaction). The
 * server's statement_timeout stops slow statements; a client-side timer backs it up.
 */

/** Types parsed into JSON values; every other type keeps the text PostgreSQL sends (numeric, dates, intervals stay exact). */
const PARSED = new Set([16, 21, 23, 26, 700, 701, 114, 3802, 17, 199, 1000, 1005, 1007, 1009, 1015, 1016, 1021, 1022, 3807]);
const int8 = (v: string): number | string => (Number.isSafeInteger(Number(v)) ? Number(v) : v);
const types = {
  getTypeParser: (oid: number, format?: string) => {
    if (oid === 20) return int8;
    return PARSED.has(oid) ? pg.types.getTypeParser(oid, (format ?? 'text') as 'text') : (v: string) => v;
  },
} as unknown as pg.CustomTypesConfig;

const typeNames = new Map(Object.entries(pg.types.builtins).map(([name, oid]) => [oid as number, name.toLowerCase()]));

const KINDS: Record<string, TableKind> = { r: 'table', p: 'table', v: 'view', m: 'materialized_view', f: 'foreign_table' };

/** Tables and views the role may read, each with its columns (one round trip). */
const TABLES_SQL = `
SELECT n.nspname AS schema, c.relname AS name, c.relkind AS kind,
       CASE WHEN c.relkind IN ('r', 'm', 'f') AND c.reltuples >= 0 THEN c.reltuples::int8 END AS estimate,
       (SELECT coalesce(json_agg(json_build_array(a.attname, format_type(a.atttypid, a.atttypmod), NOT a.attnotnull) ORDER BY a.attnum), '[]')
          FROM pg_catalog.pg_attribute a
         WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) AS columns
  FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition
   AND n.nspname <> 'information_schema' AND n.nspname !~ '^pg_'
   AND has_table_privilege(c.oid, 'SELECT')
   AND ($1::text[] IS NULL OR (n.nspname || '.' || c.relname) = ANY($1) OR c.relname = ANY($2))
 ORDER BY n.nspname, c.relname
 LIMIT $3`;

/** A driver error as a SessionFailure with a caller-fit message; errors of our own (the sink's 413) pass unchanged. */
function failure(e: unknown, target: NetworkTarget, limits: SessionLimits): Error {
  if (e instanceof DbConnectorError) return e;
  const err = e as { code?: string; message?: string };
  const message = scrub(err.message ?? String(e), target.password);
  if (e instanceof SessionFailure) return e;
  if (isRefusal(e)) return new SessionFailure('refused', `The host is refused: ${message}.`, 'host');
  switch (err.code) {
    case '28P01':
      return new SessionFailure('auth', `PostgreSQL refused the credentials: ${message}.`, 'password');
    case '28000':
      return new SessionFailure('auth', `PostgreSQL refused the connection: ${message}.`, 'user');
    case '3D000':
      return new SessionFailure('auth', `PostgreSQL refused the database: ${message}.`, 'database');
    case '57014':
      return new SessionFailure('timeout', `The statement ran longer than the statement timeout (${limits.statementTimeoutMs} ms, CNS_DB_STATEMENT_TIMEOUT_MS) and was stopped.`);
    case '25006':
      return new SessionFailure('read_only', `PostgreSQL refused a write: the connector's sessions are read-only (${message}).`);
  }
  if (err.code && /^[0-9A-Z]{5}$/.test(err.code)) return new SessionFailure('statement', `PostgreSQL refused the statement: ${message}.`);
  if (/SASL|password/i.test(message)) return new SessionFailure('auth', `PostgreSQL asked for a password: ${message}.`, 'password');
  const what = message === 'timeout expired' ? `no answer within ${limits.connectTimeoutMs / 1000} s` : message;
  return new SessionFailure('network', `PostgreSQL at ${target.host}:${target.port} could not be reached: ${what}.`, 'host');
}

class PostgresSession implements DbSession {
  private dead = false;

  constructor(
    private readonly client: pg.Client,
    private readonly target: NetworkTarget,
    private readonly limits: SessionLimits,
  ) {}

  async catalog(only?: { schema: string | null; name: string }[]): Promise<TableList> {
    const qualified = only ? only.filter((o) => o.schema !== null).map((o) => `${o.schema}.${o.name}`) : null;
    const bare = only ? only.filter((o) => o.schema === null).map((o) => o.name) : null;
    const rows = await this.all(TABLES_SQL, [qualified, bare, TABLE_LIST_CAP + 1]);
    const truncated = rows.length > TABLE_LIST_CAP;
    const tables: TableInfo[] = rows.slice(0, TABLE_LIST_CAP).map(([schema, name, kind, estimate, columns]) => ({
      schema: schema as string,
      name: name as string,
      qualifiedName: `${schema}.${name}`,
      kind: KINDS[kind as string] ?? 'table',
      // reltuples: the planner's estimate from the last ANALYZE or VACUUM; null before the first.
      rowEstimate: estimate === null ? null : Number(estimate),
      rowCountExact: false,
      columns: (columns as [string, string, boolean][]).map(([n, type, nullable]) => ({ name: n, type, nullable })),
    }));
    return { tables, truncated };
  }

  private async all(sql: string, params: unknown[]): Promise<unknown[][]> {
    const rows: unknown[][] = [];
    await this.run(sql, params, Number.MAX_SAFE_INTEGER, { columns() {}, row: (r) => rows.push(r) });
    return rows;
  }

  stream(sql: string, limit: number, sink: RowSink): Promise<StreamOutcome> {
    return this.run(sql, undefined, limit, sink);
  }

  private run(sql: string, values: unknown[] | undefined, limit: number, sink: RowSink): Promise<StreamOutcome> {
    if (this.dead) return Promise.reject(new SessionFailure('network', 'The session was closed.'));
    return new Promise((resolve, reject) => {
      // Extended protocol always: one statement per string, whatever the string holds.
      const query = new pg.Query({ text: sql, values, rowMode: 'array', queryMode: 'extended' } as pg.QueryConfig);
      let rows = 0;
      let settled = false;
      let columnsSent = false;
      const settle = (outcome: StreamOutcome | Error, stopConnection: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(backstop);
        // Stopping a statement midway: the connection is dropped, the server ends the statement.
        if (stopConnection) this.kill();
        if (outcome instanceof Error) reject(failure(outcome, this.target, this.limits));
        else resolve(outcome);
      };
      const columns = (fields: { name: string; dataTypeID: number }[] | undefined) => {
        if (columnsSent) return;
        columnsSent = true;
        sink.columns((fields ?? []).map((f) => ({ name: f.name, type: typeNames.get(f.dataTypeID) ?? null, nullable: null })));
      };
      query.on('row', (row: unknown[], result?: { fields?: { name: string; dataTypeID: number }[] }) => {
        if (settled) return;
        try {
          columns(result?.fields);
          if (rows >= limit) return settle({ rows, truncated: true }, true);
          sink.row(row);
          rows++;
        } catch (e) {
          settle(e as Error, true);
        }
      });
      query.on('end', (result?: { fields?: { name: string; dataTypeID: number }[] }) => {
        if (settled) return;
        try {
          columns(result?.fields);
          settle({ rows, truncated: false }, false);
        } catch (e) {
          settle(e as Error, true);
        }
      });
      query.on('error', (e: Error) => settle(e, false));
      // The server's statement_timeout stops the statement; this stops waiting for a server that does not.
      const backstop = setTimeout(() => settle(new SessionFailure('timeout', `The statement ran longer than the statement timeout (${this.limits.statementTimeoutMs} ms, CNS_DB_STATEMENT_TIMEOUT_MS) and was stopped.`), true), this.limits.statementTimeoutMs + 2000);
      this.client.query(query);
    });
  }

  private kill(): void {
    this.dead = true;
    (this.client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  }

  async close(): Promise<void> {
    if (this.dead) return;
    this.dead = true;
    // Ending the connection ends its read-only transaction.
    await this.client.end().catch(() => undefined);
  }
}

/** A PostgreSQL database as a DbEngine: one connection per call. */
export function postgresEngine(target: NetworkTarget, limits: SessionLimits): DbEngine {
  return engineOver({
    engine: 'postgres',
    async open() {
      const client = new pg.Client({
        host: target.host,
        port: target.port,
        database: target.database,
        user: target.user,
        password: target.password ?? undefined,
        ssl: pgSslOptions(target.ssl),
        connectionTimeoutMillis: limits.connectTimeoutMs,
        statement_timeout: limits.statementTimeoutMs,
        options: '-c default_transaction_read_only=on -c TimeZone=UTC',
        application_name: 'cns-db-connector',
        types,
        stream: pgGuardedSocket(limits.allowLoopback),
      } as pg.ClientConfig);
      // Errors of an idle connection would otherwise be thrown as unhandled 'error' events.
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.query('BEGIN READ ONLY');
      } catch (e) {
        await client.end().catch(() => undefined);
        throw failure(e, target, limits);
      }
      return new PostgresSession(client, target, limits);
    },
  });
}
