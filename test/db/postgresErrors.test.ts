import test from 'ava';
import pg from 'pg';
import { errorCode, isConnectionLost, isRetryableTransactionError } from '../../src/db/postgres/errorKinds.ts';
import { openPostgresPool } from '../../src/db/postgres/pool.ts';
import { freshPostgresDatabase, POSTGRES_ADMIN_URL, type TestDatabase } from '../helpers/postgresDatabases.ts';

/** src/db/postgres/errorKinds.ts, on errors this machine's PostgreSQL really raises. */

let db: TestDatabase;
/** A connection to the admin database, outside every pool under test: it watches and terminates. */
let admin: pg.Client;
const pools: pg.Pool[] = [];

test.before(async () => {
  db = await freshPostgresDatabase();
  admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
});
test.after.always(async () => {
  await Promise.all(pools.map((p) => p.end()));
  await admin?.end();
  await db?.drop();
});

function open(options: Partial<Parameters<typeof openPostgresPool>[1]> = {}): pg.Pool {
  const pool = openPostgresPool(db.url, { statementTimeoutMs: 5000, ...options });
  pools.push(pool);
  return pool;
}

/** Polls until `check` holds, failing after a deadline (no fixed sleeps). */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`still not ${what} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The server process behind a connection (for a pool: the one the query got). */
const pidOf = async (on: pg.Pool | pg.PoolClient) => (await on.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;

/** Two connections of a new pool after `setup`, released (and closed) when the test ends. */
async function twoConnections(t: import('ava').ExecutionContext, setup: string): Promise<[pg.PoolClient, pg.PoolClient]> {
  const pool = open({ max: 2 });
  await pool.query(setup);
  const [a, b] = await Promise.all([pool.connect(), pool.connect()]);
  t.teardown(() => {
    a.release(true);
    b.release(true);
  });
  return [a, b];
}

const stateOf = async (pid: number) => (await admin.query<{ state: string; wait: string | null }>('SELECT state, wait_event_type AS wait FROM pg_stat_activity WHERE pid = $1', [pid])).rows[0];

test('a statement past statement_timeout: 57014, neither retryable nor a lost connection', async (t) => {
  const pool = open({ statementTimeoutMs: 200 });
  const started = Date.now();
  const e = await t.throwsAsync(pool.query('SELECT pg_sleep(5)'));
  t.is(errorCode(e), '57014');
  t.true(Date.now() - started < 4000);
  t.false(isRetryableTransactionError(e));
  t.false(isConnectionLost(e));
  // The connection survives a cancelled statement.
  t.is((await pool.query('SELECT 1 AS one')).rows[0].one, 1);
});

test('the running statement of a connection an admin terminates: 57P01, connection lost; the pool opens a new one', async (t) => {
  const pool = open({ max: 1 });
  const client = await pool.connect();
  const pid = await pidOf(client);
  const running = client.query('SELECT pg_sleep(30)');
  running.catch(() => undefined);
  await until('running pg_sleep', async () => (await stateOf(pid))?.state === 'active');
  t.deepEqual((await admin.query('SELECT pg_terminate_backend($1) AS done', [pid])).rows, [{ done: true }]);
  const e = await t.throwsAsync(running);
  t.is(errorCode(e), '57P01');
  t.true(isConnectionLost(e));
  t.false(isRetryableTransactionError(e));
  // The same client is done for: the next query says so, and that counts as lost too.
  const after = await t.throwsAsync(client.query('SELECT 1'));
  t.true(isConnectionLost(after), after?.message);
  client.release(e);
  const next = await pidOf(pool);
  t.not(next, pid);
});

test('an idle pooled connection killed by the server neither ends the process nor reaches the next caller', async (t) => {
  const idleErrors: Error[] = [];
  const pool = open({ max: 1, onIdleError: (err) => idleErrors.push(err) });
  const pid = await pidOf(pool);
  t.is(pool.idleCount, 1);
  await admin.query('SELECT pg_terminate_backend($1)', [pid]);
  await until('dropped from the pool', () => pool.totalCount === 0);
  t.is(idleErrors.length, 1);
  t.true(isConnectionLost(idleErrors[0]), idleErrors[0]!.message);
  t.not(await pidOf(pool), pid);
});

test('two SERIALIZABLE transactions that read what the other writes: 40001, retryable', async (t) => {
  const [a, b] = await twoConnections(t, 'CREATE TABLE skew (k text PRIMARY KEY, v int NOT NULL)');
  for (const c of [a, b]) await c.query('BEGIN ISOLATION LEVEL SERIALIZABLE');
  await a.query('SELECT count(*) FROM skew');
  await b.query('SELECT count(*) FROM skew');
  await a.query("INSERT INTO skew VALUES ('a', 1)");
  await b.query("INSERT INTO skew VALUES ('b', 1)");
  await a.query('COMMIT');
  const e = await t.throwsAsync(b.query('COMMIT'));
  t.is(errorCode(e), '40001');
  t.true(isRetryableTransactionError(e));
  t.false(isConnectionLost(e));
});

test('two transactions locking two rows in opposite order: 40P01, retryable', async (t) => {
  const [a, b] = await twoConnections(t, "CREATE TABLE locks (k text PRIMARY KEY, v int NOT NULL); INSERT INTO locks VALUES ('x', 0), ('y', 0)");
  const pidA = await pidOf(a);
  await a.query('BEGIN');
  await b.query('BEGIN');
  // b checks for the deadlock first (a superuser's setting), so it is b that is rolled back.
  await b.query("SET LOCAL deadlock_timeout = '50ms'");
  await a.query("UPDATE locks SET v = 1 WHERE k = 'x'");
  await b.query("UPDATE locks SET v = 1 WHERE k = 'y'");
  const aWaits = a.query("UPDATE locks SET v = 2 WHERE k = 'y'");
  await until('a waiting for the lock of y', async () => (await stateOf(pidA))?.wait === 'Lock');
  const e = await t.throwsAsync(b.query("UPDATE locks SET v = 2 WHERE k = 'x'"));
  t.is(errorCode(e), '40P01');
  t.true(isRetryableTransactionError(e));
  t.false(isConnectionLost(e));
  await b.query('ROLLBACK');
  await aWaits; // b's rollback freed y
  await a.query('COMMIT');
  t.deepEqual((await a.query('SELECT k, v FROM locks ORDER BY k')).rows, [{ k: 'x', v: 1 }, { k: 'y', v: 2 }]);
});

test('the codes that only a broken network or server gives, by their code', (t) => {
  const err = (code: string) => Object.assign(new Error(code), { code });
  for (const code of ['57P02', '57P03', '08006', '08003', '08001', 'ECONNRESET', 'EPIPE']) t.true(isConnectionLost(err(code)), code);
  t.true(isConnectionLost(new Error('Connection terminated unexpectedly')));
  for (const code of ['57014', '40001', '23505', '28P01', 'ECONNREFUSED']) t.false(isConnectionLost(err(code)), code);
  t.false(isRetryableTransactionError(err('23505')));
  t.false(isRetryableTransactionError(new Error('no code')));
  t.false(isConnectionLost(null));
});
