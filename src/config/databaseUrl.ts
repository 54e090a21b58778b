import type { ConnectionOptions } from 'node:tls';
import { PG_SSL_MODES, pgSslOptions, type PgSslMode } from './sslMode.ts';

/** What pg's Client and Pool take to reach the metadata database (a subset of pg.ClientConfig). */
export interface PostgresConnection {
  host: string;
  port: number;
  user: string;
  password: string | undefined;
  database: string;
  ssl: false | ConnectionOptions;
}

export interface DatabaseUrl {
  connection: PostgresConnection;
  sslmode: PgSslMode;
  /** The URL with the password as `****`: what logs and error messages show. */
  redacted: string;
}

const SCHEMES = new Set(['postgres:', 'postgresql:']);
/** The query parameters this service understands; libpq's others would be silently ignored by pg, so they are refused. */
const PARAMETERS = new Set(['sslmode']);

/** An error about CNS_DATABASE_URL; its message never holds the password. */
const invalid = (why: string) => new Error(`CNS_DATABASE_URL ${why}`);

/**
 * Parses a CNS_DATABASE_URL value (`postgres://user:pass@host:5432/db?sslmode=require`). Host, user
 * and database are required: libpq would default them from the environment and the OS user, and
 * a service's metadata should not land in whichever database that guesses. A host may be a Unix
 * socket folder written percent-encoded (`%2Fvar%2Frun%2Fpostgresql`), as libpq reads it.
 */
export function parseDatabaseUrl(value: string): DatabaseUrl {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    // Not the parser's message: its `input` holds the whole value, password included.
    throw invalid('is not a valid URL: expected postgres://user:password@host:5432/database');
  }
  if (!SCHEMES.has(url.protocol)) {
    const shown = /^[a-z][a-z0-9+.-]*:\/\//i.test(value.trim()) ? ` (got ${url.protocol}//)` : '';
    throw invalid(`must start with postgres:// or postgresql://${shown}`);
  }
  const host = decoded(url.hostname, 'host').replace(/^\[(.*)\]$/, '$1');
  const user = decoded(url.username, 'user');
  const database = decoded(url.pathname.replace(/^\//, ''), 'database');
  if (host === '') throw invalid('names no host');
  if (user === '') throw invalid('names no user (postgres://user@host/database)');
  if (database === '' || database.includes('/')) throw invalid('must name one database as its path (postgres://user@host/database)');
  const port = url.port === '' ? 5432 : Number(url.port);
  if (port === 0) throw invalid('has port 0');
  const sslmode = sslModeOf(url.searchParams);
  const redactedUrl = new URL(url.href);
  if (redactedUrl.password !== '') redactedUrl.password = '****';
  return {
    connection: { host, port, user, password: url.password === '' ? undefined : decoded(url.password, 'password'), database, ssl: pgSslOptions(sslmode) },
    sslmode,
    redacted: redactedUrl.href,
  };
}

function decoded(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw invalid(`has a malformed percent-encoding in its ${what}`);
  }
}

/** The sslmode parameter, `disable` when absent (pg's default: no TLS unless asked). */
function sslModeOf(params: URLSearchParams): PgSslMode {
  const unknown = [...new Set(params.keys())].filter((k) => !PARAMETERS.has(k));
  if (unknown.length > 0) throw invalid(`has unknown parameters: ${unknown.join(', ')} (only sslmode is understood)`);
  const modes = params.getAll('sslmode');
  if (modes.length > 1) throw invalid('gives sslmode more than once');
  if (modes.length === 0) return 'disable';
  const mode = modes[0]!;
  if (!(PG_SSL_MODES as readonly string[]).includes(mode)) throw invalid(`has sslmode=${mode}: expected one of ${PG_SSL_MODES.join(', ')}`);
  return mode as PgSslMode;
}
