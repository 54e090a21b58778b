import type { DbEngine } from './engine.ts';
import { mysqlEngine } from './mysql.ts';
import { postgresEngine } from './postgres.ts';
import { sqliteEngine } from './sqlite.ts';
import { sqliteFileIn } from './sqliteFiles.ts';
import type { EngineName, SessionLimits, SslMode } from './types.ts';

/** What an engine needs to reach a database: a saved connection's fields with its password in the clear. */
export interface ConnectionSpec {
  engine: EngineName;
  host: string | null;
  port: number | null;
  database: string | null;
  user: string | null;
  password: string | null;
  ssl: SslMode;
  file: string | null;
}

export interface ConnectorSettings {
  allowLoopback: boolean;
  /** CNS_DB_SQLITE_DIR; null turns SQLite connections off. */
  sqliteDir: string | null;
  statementTimeoutMs: number;
  maxRows: number;
}

/** Connecting (TCP, TLS, authentication) may take this long: a wrong host fails fast with a clear message. */
export const CONNECT_TIMEOUT_MS = 5000;

export const DEFAULT_PORTS: Record<Exclude<EngineName, 'sqlite'>, number> = { postgres: 5432, mysql: 3306 };

/** The engine for a connection under the current settings (an SQLite file is resolved inside its folder again). */
export function engineFor(spec: ConnectionSpec, settings: ConnectorSettings, connectTimeoutMs = CONNECT_TIMEOUT_MS): DbEngine {
  const limits: SessionLimits = { statementTimeoutMs: settings.statementTimeoutMs, connectTimeoutMs, allowLoopback: settings.allowLoopback };
  if (spec.engine === 'sqlite') return sqliteEngine(sqliteFileIn(settings.sqliteDir ?? undefined, spec.file), limits);
  const target = {
    host: spec.host!,
    port: spec.port ?? DEFAULT_PORTS[spec.engine],
    database: spec.database!,
    user: spec.user!,
    password: spec.password,
    ssl: spec.ssl,
  };
  return spec.engine === 'postgres' ? postgresEngine(target, limits) : mysqlEngine(target, limits);
}
