import type pg from 'pg';
import { scrub } from '../../logging/redact.ts';
import { errorCode } from './errorKinds.ts';

export type StartupFailureKind = 'unreachable' | 'authentication' | 'database' | 'tls' | 'schema' | 'other';

/** Why the metadata database could not be used, in one line an operator can act on (never the password). */
export class PostgresStartupError extends Error {
  constructor(
    readonly kind: StartupFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'PostgresStartupError';
  }
}

/** Where the pool connects, as the messages name it. */
export interface StartupTarget {
  host: string;
  port: number;
  user: string;
  database: string;
  password?: string;
  connectTimeoutMs?: number;
}

const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'the host name could not be looked up',
  EHOSTUNREACH: 'no route to the host',
  ENETUNREACH: 'no route to the network',
  ETIMEDOUT: 'the connection timed out',
};

/** Certificate failures Node reports by code: the server has TLS but this machine does not trust it. */
const UNTRUSTED = /CERT|^ERR_TLS_CERT_ALTNAME_INVALID$|^UNABLE_TO_/;

/**
 * Runs one query on a new pool so that a wrong URL stops the start at once, named, instead of
 * at the first request. Answers the server's version number (150020 for 15.20).
 */
export async function checkPostgres(pool: pg.Pool): Promise<{ serverVersionNum: number }> {
  const o = pool.options;
  const target: StartupTarget = {
    host: o.host ?? 'localhost',
    port: o.port ?? 5432,
    user: o.user ?? '',
    database: o.database ?? '',
    password: typeof o.password === 'string' ? o.password : undefined,
    connectTimeoutMs: o.connectionTimeoutMillis,
  };
  try {
    const { rows } = await pool.query<{ v: string }>("SELECT current_setting('server_version_num') AS v");
    return { serverVersionNum: Number(rows[0]!.v) };
  } catch (e) {
    throw startupFailure(e, target);
  }
}

/** A driver's error at start-up as a PostgresStartupError. */
export function startupFailure(err: unknown, t: StartupTarget): PostgresStartupError {
  const code = errorCode(err);
  const raw = err instanceof Error ? err.message : String(err);
  const said = scrub(raw, t.password ?? null);
  const at = `${t.host}:${t.port}`;
  const fail = (kind: StartupFailureKind, message: string) => new PostgresStartupError(kind, message.replace(/\s*\n\s*/g, ' '));
  if (code !== undefined && Object.hasOwn(UNREACHABLE, code)) return fail('unreachable', `cannot reach PostgreSQL at ${at} (${UNREACHABLE[code]})`);
  // pg's connect timer destroys the socket; the pool then says "…due to connection timeout".
  if (/connection timeout|^timeout expired$/.test(raw)) {
    const within = t.connectTimeoutMs ? ` within ${t.connectTimeoutMs / 1000} s` : '';
    return fail('unreachable', `cannot reach PostgreSQL at ${at} (no answer${within})`);
  }
  if (code === '28P01' || code === '28000') return fail('authentication', `PostgreSQL refused the credentials of user ${t.user} (${said})`);
  // pg's SCRAM code says this when the server wants a password and none was given.
  if (/^SASL: .*password must be a string/.test(raw)) return fail('authentication', `PostgreSQL refused the credentials of user ${t.user} (it asks for a password and CNS_DATABASE_URL gives none)`);
  if (code === '3D000') return fail('database', `PostgreSQL has no database ${t.database}: create it with \`createdb -h ${t.host} -p ${t.port} -U ${t.user} ${t.database}\``);
  if (raw === 'The server does not support SSL connections') return fail('tls', `PostgreSQL at ${at} does not accept TLS connections: use sslmode=disable in CNS_DATABASE_URL, or turn ssl on in the server`);
  if (code !== undefined && UNTRUSTED.test(code)) return fail('tls', `PostgreSQL at ${at} presented a certificate this machine does not trust (${said}): use sslmode=require to skip the check, or add its CA with NODE_EXTRA_CA_CERTS`);
  return fail('other', `PostgreSQL at ${at} failed the start-up check: ${said}${code ? ` (${code})` : ''}`);
}
