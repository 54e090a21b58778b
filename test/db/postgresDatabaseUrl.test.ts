import test from 'ava';
import { parseDatabaseUrl } from '../../src/config/databaseUrl.ts';
import { pgSslOptions } from '../../src/config/sslMode.ts';

/** src/config/databaseUrl.ts: CNS_DATABASE_URL as pg's connection pieces, and its redacted form. */

const SECRET = 's3cret-Pa55';

test('a full URL: every piece, the password decoded, the redacted form with ****', (t) => {
  const u = parseDatabaseUrl(`postgres://cns:${encodeURIComponent(`${SECRET}@/:`)}@db.example.com:6543/cns_meta?sslmode=require`);
  t.deepEqual(u.connection, { host: 'db.example.com', port: 6543, user: 'cns', password: `${SECRET}@/:`, database: 'cns_meta', ssl: { rejectUnauthorized: false } });
  t.is(u.sslmode, 'require');
  t.is(u.redacted, 'postgres://cns:****@db.example.com:6543/cns_meta?sslmode=require');
});

test('postgresql:// too; port 5432, no password and no TLS by default', (t) => {
  const u = parseDatabaseUrl('postgresql://alice@127.0.0.1/meta');
  t.deepEqual(u.connection, { host: '127.0.0.1', port: 5432, user: 'alice', password: undefined, database: 'meta', ssl: false });
  t.is(u.sslmode, 'disable');
  t.is(u.redacted, 'postgresql://alice@127.0.0.1/meta');
});

test('an IPv6 host loses its brackets; a percent-encoded socket folder and names are decoded', (t) => {
  t.is(parseDatabaseUrl('postgres://u@[::1]:5433/d').connection.host, '::1');
  const socket = parseDatabaseUrl('postgres://u%20x@%2Fvar%2Frun%2Fpostgresql/my%20db').connection;
  t.like(socket, { host: '/var/run/postgresql', user: 'u x', database: 'my db' });
});

test('every sslmode maps as pg does in its libpq-compatible mode', (t) => {
  const ssl = (mode: string) => parseDatabaseUrl(`postgres://u@h/d?sslmode=${mode}`).connection.ssl;
  t.false(ssl('disable'));
  t.false(ssl('allow'));
  t.deepEqual(ssl('prefer'), { rejectUnauthorized: false });
  t.deepEqual(ssl('require'), { rejectUnauthorized: false });
  const ca = ssl('verify-ca');
  t.true(ca !== false && ca.rejectUnauthorized === true && ca.checkServerIdentity?.('h', {} as never) === undefined);
  t.deepEqual(ssl('verify-full'), { rejectUnauthorized: true });
  // The database connectors' three modes keep what they mapped to before the function was shared.
  t.deepEqual([pgSslOptions('disable'), pgSslOptions('require'), pgSslOptions('verify-full')], [false, { rejectUnauthorized: false }, { rejectUnauthorized: true }]);
});

test('refusals name the problem and never the password', (t) => {
  const cases: [string, RegExp][] = [
    [`mysql://u:${SECRET}@h/d`, /must start with postgres:\/\/ or postgresql:\/\/ \(got mysql:\/\/\)$/],
    [`u:${SECRET}@h/d`, /must start with postgres:\/\/ or postgresql:\/\/$/],
    [`http://u:${SECRET}@h/d`, /\(got http:\/\/\)/],
    [`postgres://u:${SECRET}@h:99999/d`, /is not a valid URL/],
    [`postgres://u:${SECRET}@a:1,b:2/d`, /is not a valid URL/],
    [`postgres://u:${SECRET}@h/d?sslmode=always`, /sslmode=always: expected one of disable, allow, prefer, require, verify-ca, verify-full/],
    [`postgres://u:${SECRET}@h/d?sslmode=require&sslmode=disable`, /sslmode more than once/],
    [`postgres://u:${SECRET}@h/d?sslrootcert=/x&application_name=y`, /unknown parameters: sslrootcert, application_name \(only sslmode is understood\)/],
    [`postgres://u:${SECRET}@h/`, /must name one database/],
    [`postgres://u:${SECRET}@h/a/b`, /must name one database/],
    [`postgres://:${SECRET}@h/d`, /names no user/],
    [`postgres:///d`, /names no host/],
    [`postgres://u:${SECRET}@h:0/d`, /port 0/],
    [`postgres://u:${SECRET}%zz@h/d`, /malformed percent-encoding in its password/],
  ];
  for (const [value, message] of cases) {
    const e = t.throws(() => parseDatabaseUrl(value), { message }, value);
    t.true(e?.message.startsWith('CNS_DATABASE_URL '), value);
    t.false(e?.message.includes(SECRET), value);
    t.is(e?.cause, undefined, value); // URL's own error carries the whole input
  }
});
