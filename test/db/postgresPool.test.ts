import test from 'ava';
import type pg from 'pg';
import { openPostgresPool } from '../../src/db/postgres/pool.ts';
import { checkPostgres, PostgresStartupError, startupFailure, type StartupFailureKind } from '../../src/db/postgres/startupCheck.ts';
import { closedPort, fakePostgres } from '../helpers/fakePostgres.ts';
import { freshPostgresDatabase, type TestDatabase } from '../helpers/postgresDatabases.ts';

/** src/db/postgres/pool.ts and startupCheck.ts against this machine's PostgreSQL 15 and fake servers. */

/** The server trusts 127.0.0.1, so any password passes; this one must never be shown. */
const SECRET = 'pw-Zq8vLk2mR7';
let db: TestDatabase;
const pools: pg.Pool[] = [];

test.before(async () => {
  db = await freshPostgresDatabase();
});
test.after.always(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await db?.drop();
});

const withPassword = (url: string) => url.replace('postgres@', `postgres:${SECRET}@`);
function open(url: string, options: Partial<Parameters<typeof openPostgresPool>[1]> = {}): pg.Pool {
  const pool = openPostgresPool(url, { statementTimeoutMs: 3000, ...options });
  pools.push(pool);
  return pool;
}

/** checkPostgres's refusal for a URL: its kind and one line, with no password in it. */
async function refusal(t: import('ava').ExecutionContext, url: string, options: Partial<Parameters<typeof openPostgresPool>[1]> = {}): Promise<{ kind: StartupFailureKind; message: string }> {
  const e = await t.throwsAsync(checkPostgres(open(url, options)), { instanceOf: PostgresStartupError });
  t.false(e!.message.includes(SECRET), e!.message);
  t.false(e!.message.includes('\n'), e!.message);
  return { kind: e!.kind, message: e!.message };
}

test('checkPostgres answers the server version; every connection of the pool has its statement_timeout', async (t) => {
  const pool = open(withPassword(db.url), { max: 3, statementTimeoutMs: 1234 });
  t.true((await checkPostgres(pool)).serverVersionNum >= 150000);
  // Three connections at once, so each is a different one.
  const clients = await Promise.all([pool.connect(), pool.connect(), pool.connect()]);
  const seen = await Promise.all(clients.map((c) => c.query<{ t: string; pid: number; app: string }>("SELECT current_setting('statement_timeout') AS t, pg_backend_pid() AS pid, current_setting('application_name') AS app")));
  for (const c of clients) c.release();
  t.deepEqual(seen.map((r) => r.rows[0]!.t), ['1234ms', '1234ms', '1234ms']);
  t.is(new Set(seen.map((r) => r.rows[0]!.pid)).size, 3);
  t.is(seen[0]!.rows[0]!.app, 'cns');
});

test('the pool is bounded: past max a caller waits until a connection is released', async (t) => {
  const pool = open(db.url, { max: 2 });
  const [a, b] = await Promise.all([pool.connect(), pool.connect()]);
  let third: pg.PoolClient | undefined;
  const waiting = pool.connect().then((c) => (third = c));
  t.is(pool.totalCount, 2);
  t.is(pool.waitingCount, 1);
  t.is(third, undefined);
  a!.release();
  await waiting;
  t.truthy(third);
  t.is(pool.totalCount, 2);
  third!.release();
  b!.release();
});

test('options are checked', (t) => {
  t.throws(() => openPostgresPool(db.url, { statementTimeoutMs: 0 }), { message: /statementTimeoutMs must be a whole number above 0/ });
  t.throws(() => openPostgresPool(db.url, { statementTimeoutMs: 100, max: 1.5 }), { message: /max must be/ });
  t.throws(() => openPostgresPool('mysql://u@h/d', { statementTimeoutMs: 100 }), { message: /postgres:\/\// });
});

test('unreachable: nothing listening, no such host, a server that never answers', async (t) => {
  const port = await closedPort();
  t.deepEqual(await refusal(t, `postgres://postgres:${SECRET}@127.0.0.1:${port}/x`), { kind: 'unreachable', message: `cannot reach PostgreSQL at 127.0.0.1:${port} (connection refused)` });
  const dns = await refusal(t, `postgres://postgres:${SECRET}@no-such-host.invalid/x`);
  t.is(dns.kind, 'unreachable');
  t.regex(dns.message, /^cannot reach PostgreSQL at no-such-host\.invalid:5432 \((no such host|the host name could not be looked up)\)$/);
  const silent = await fakePostgres('silent');
  t.teardown(() => silent.close());
  const started = Date.now();
  t.deepEqual(await refusal(t, `postgres://postgres:${SECRET}@127.0.0.1:${silent.port}/x`, { connectTimeoutMs: 300 }), { kind: 'unreachable', message: `cannot reach PostgreSQL at 127.0.0.1:${silent.port} (no answer within 0.3 s)` });
  t.true(Date.now() - started < 3000);
});

test('authentication: an unknown role (28000, real) and a wrong password (28P01, from a fake server)', async (t) => {
  const role = await refusal(t, db.url.replace('postgres@', `cns_no_such_role:${SECRET}@`));
  t.deepEqual(role, { kind: 'authentication', message: 'PostgreSQL refused the credentials of user cns_no_such_role (role "cns_no_such_role" does not exist)' });
  const fake = await fakePostgres({ error: { code: '28P01', message: 'password authentication failed for user "meta"' } });
  t.teardown(() => fake.close());
  t.deepEqual(await refusal(t, `postgres://meta:${SECRET}@127.0.0.1:${fake.port}/cns`), {
    kind: 'authentication',
    message: 'PostgreSQL refused the credentials of user meta (password authentication failed for user "meta")',
  });
});

test('a missing database names the createdb that makes it', async (t) => {
  t.deepEqual(await refusal(t, withPassword(db.url).replace(db.name, 'cns_no_such_db')), {
    kind: 'database',
    message: 'PostgreSQL has no database cns_no_such_db: create it with `createdb -h 127.0.0.1 -p 5432 -U postgres cns_no_such_db`',
  });
});

test('sslmode=require against a server without TLS says so', async (t) => {
  const { rows } = await open(db.url).query<{ ssl: string }>('SHOW ssl');
  if (rows[0]!.ssl === 'on') return t.pass('this server has TLS; nothing to refuse');
  t.deepEqual(await refusal(t, `${withPassword(db.url)}?sslmode=require`), {
    kind: 'tls',
    message: 'PostgreSQL at 127.0.0.1:5432 does not accept TLS connections: use sslmode=disable in CNS_DATABASE_URL, or turn ssl on in the server',
  });
});

test('an untrusted certificate, a missing password and anything else are one line too, without the password', (t) => {
  const target = { host: 'db', port: 5432, user: 'u', database: 'd', password: SECRET };
  const cert = Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
  t.like(startupFailure(cert, target), { kind: 'tls', message: 'PostgreSQL at db:5432 presented a certificate this machine does not trust (self-signed certificate): use sslmode=require to skip the check, or add its CA with NODE_EXTRA_CA_CERTS' });
  const odd = Object.assign(new Error(`line one ${SECRET}\nline two`), { code: '53300' });
  t.like(startupFailure(odd, target), { kind: 'other', message: 'PostgreSQL at db:5432 failed the start-up check: line one [redacted] line two (53300)' });
  const noPassword = new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string');
  t.like(startupFailure(noPassword, target), { kind: 'authentication', message: 'PostgreSQL refused the credentials of user u (it asks for a password and CNS_DATABASE_URL gives none)' });
  // Node tries each address of a name in turn and reports them together.
  const both = Object.assign(new AggregateError([Object.assign(new Error('connect ECONNREFUSED ::1:5432'), { code: 'ECONNREFUSED' })]), {});
  t.like(startupFailure(both, target), { kind: 'unreachable', message: 'cannot reach PostgreSQL at db:5432 (connection refused)' });
});
