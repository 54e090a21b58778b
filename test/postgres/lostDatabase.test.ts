import test from 'ava';
import pg from 'pg';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { tcpProxy } from '../helpers/tcpProxy.ts';
import { migratedDatabases } from '../helpers/migratedPostgres.ts';

/**
 * The metadata database failing under a running service: requests that need it are answered 503
 * with a code of their own (no password, no stack), and the service recovers by itself when the
 * database is back. The path used reads the metadata store without a credential: a public
 * address (GET /p/{key}) whose unknown key is a 404 once the publishes table answers.
 */

const SECRET = 'pw-Lm3sW8qZr5';
const migrated = migratedDatabases(test.after.always);

/** Polls until `check` holds, failing after a deadline (no fixed sleeps). */
async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`still not ${what} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const published = (s: TestServer) => s.api('GET', '/p/pk_nothing_published_here');

test('the database goes away while serving: 503 DATABASE_UNAVAILABLE with Retry-After, then recovery without a restart', async (t) => {
  const d = await migrated();
  const proxy = await tcpProxy({ host: '127.0.0.1', port: 5432 });
  t.teardown(() => proxy.close());
  const server = await startTestServer({}, { CNS_DATABASE_URL: `postgres://postgres:${SECRET}@127.0.0.1:${proxy.port}/${d.name}` });
  t.teardown(() => server.stop());

  t.is((await published(server)).status, 404);
  t.like((await server.api('GET', '/healthz')).body.data, { database: true, metadata_engine: 'postgres' });

  // Every connection cut (the pool's idle ones and the listener's) and nothing listening: as a server that stopped.
  await proxy.down();
  const lost = await published(server);
  t.is(lost.status, 503);
  t.is(lost.body.code, 'DATABASE_UNAVAILABLE');
  t.is(lost.headers.get('retry-after'), '2');
  t.false(JSON.stringify(lost.body).includes(SECRET));
  t.false(JSON.stringify(lost.body).includes(String(proxy.port)), 'names no address');
  const health = await server.api('GET', '/healthz');
  t.is(health.status, 503);
  t.like(health.body, { code: 'DATABASE_UNAVAILABLE', data: { status: 'degraded', database: false } });

  // Back on the same address: the pool opens new connections on demand, no restart.
  await proxy.up();
  await until('answered again', async () => ((await published(server)).status === 404 ? true : undefined));
  t.is((await server.api('GET', '/healthz')).status, 200);
  // The change listener reconnects too (metadataChanges.ts): a session of its own is back on the database.
  const admin = new pg.Client({ connectionString: d.url });
  await admin.connect();
  t.teardown(() => admin.end());
  await until('the listener reconnected', async () => {
    const { rows } = await admin.query("SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND application_name = 'cns-changes'", [d.name]);
    return rows.length === 1 ? true : undefined;
  });
  t.pass();
});

test('sessions terminated by an administrator: the next request gets a fresh connection', async (t) => {
  const d = await migrated();
  const server = await startTestServer({}, { CNS_DATABASE_URL: d.url });
  t.teardown(() => server.stop());
  t.is((await published(server)).status, 404);
  const admin = new pg.Client({ connectionString: d.url });
  await admin.connect();
  t.teardown(() => admin.end());
  const { rows } = await admin.query<{ n: number }>("SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND application_name LIKE 'cns%'", [d.name]);
  t.true(rows[0]!.n >= 1);
  // A pooled connection may fail once (it was killed while idle or just as it was taken): 503, never a 500.
  const first = await published(server);
  t.true(first.status === 404 || (first.status === 503 && first.body.code === 'DATABASE_UNAVAILABLE'), JSON.stringify(first.body));
  await until('answered again', async () => ((await published(server)).status === 404 ? true : undefined));
  t.pass();
});

test('a statement past CNS_DATABASE_STATEMENT_TIMEOUT_MS: 503 DATABASE_TIMEOUT, and the connection serves the next request', async (t) => {
  const d = await migrated();
  const server = await startTestServer({}, { CNS_DATABASE_URL: d.url, CNS_DATABASE_STATEMENT_TIMEOUT_MS: '300' });
  t.teardown(() => server.stop());
  t.is((await published(server)).status, 404);
  // Slow for real: the table the request reads is locked by another session, so its SELECT waits until the server stops it.
  const locker = new pg.Client({ connectionString: d.url });
  await locker.connect();
  t.teardown(() => locker.end());
  await locker.query('BEGIN');
  await locker.query('LOCK TABLE publishes IN ACCESS EXCLUSIVE MODE');
  const started = Date.now();
  const slow = await published(server);
  t.is(slow.status, 503);
  t.is(slow.body.code, 'DATABASE_TIMEOUT');
  t.is(slow.headers.get('retry-after'), '1');
  t.true(Date.now() - started >= 300);
  await locker.query('ROLLBACK');
  t.is((await published(server)).status, 404);
});
