/** The shapes shared by the database connectors: engines, tables, columns and row streams. */

export const ENGINES = ['postgres', 'mysql', 'sqlite'] as const;
export type EngineName = (typeof ENGINES)[number];

/**
 * How a connection encrypts: `disable`, `require` (TLS without checking the certificate, as
 * libpq's sslmode=require) or `verify-full` (TLS, certificate and host name checked).
 */
export const SSL_MODES = ['disable', 'require', 'verify-full'] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** Where a network engine connects; the password in the clear, held only for the session. */
export interface NetworkTarget {
  host: string;
  port: number;
  database: string;
  user: string;
  password: string | null;
  ssl: SslMode;
}

/** The bounds every session runs under. */
export interface SessionLimits {
  /** Stops any one statement after this long (the database's own timeout, plus a client-side backstop). */
  statementTimeoutMs: number;
  /** How long connecting (TCP, TLS, authentication) may take. */
  connectTimeoutMs: number;
  /** Loopback addresses are refused unless the operator allows them (CNS_DB_ALLOW_LOOPBACK). */
  allowLoopback: boolean;
}

export interface ColumnInfo {
  name: string;
  /** The database's own type name (`integer`, `varchar(20)`, `TEXT`), or null when it gives none. */
  type: string | null;
  nullable: boolean | null;
}

export type TableKind = 'table' | 'view' | 'materialized_view' | 'foreign_table';

export interface TableInfo {
  /** PostgreSQL schema, the MySQL database, `main` for SQLite. */
  schema: string;
  name: string;
  /** What preview and save take: `schema.name` for PostgreSQL, the bare name for MySQL and SQLite. */
  qualifiedName: string;
  kind: TableKind;
  /** Rows, from the catalog's statistics (never a scan of the table); null when unknown. */
  rowEstimate: number | null;
  /** True when rowEstimate was counted exactly (small SQLite files only). */
  rowCountExact: boolean;
  columns: ColumnInfo[];
}

/** A table list, capped (a database with thousands of tables answers the first ones by name). */
export interface TableList {
  tables: TableInfo[];
  truncated: boolean;
}

/**
 * Where rows go while a statement streams: the columns once, before any row, then each row as
 * values in column order. Called synchronously as rows arrive; a throw stops the statement.
 */
export interface RowSink {
  columns(columns: ColumnInfo[]): void;
  row(values: unknown[]): void;
}

export interface StreamOutcome {
  rows: number;
  /** True when the statement had more rows than the limit (the rest were not read). */
  truncated: boolean;
}

export const TABLE_LIST_CAP = 1000;
