import type { ConnectionOptions } from 'node:tls';

/** libpq's sslmode values (PostgreSQL 15, "SSL Support" in the libpq chapter). */
export const PG_SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;
export type PgSslMode = (typeof PG_SSL_MODES)[number];

/**
 * pg's `ssl` option for a libpq sslmode, as pg-connection-string maps it in its libpq-compatible
 * mode. pg connects once and never falls back, so libpq's two "try both" modes keep their first
 * attempt: `allow` connects in the clear, `prefer` with TLS (a server without TLS then refuses,
 * which checkPostgres names). No certificate file is read: verify-ca and verify-full check the
 * chain against Node's CAs (NODE_EXTRA_CA_CERTS adds a private one); verify-ca skips the host name.
 */
export function pgSslOptions(mode: PgSslMode): false | ConnectionOptions {
  switch (mode) {
    case 'disable':
    case 'allow':
      return false;
    case 'prefer':
    case 'require':
      return { rejectUnauthorized: false };
    case 'verify-ca':
      return { rejectUnauthorized: true, checkServerIdentity: () => undefined };
    case 'verify-full':
      return { rejectUnauthorized: true };
  }
}
