import test from 'ava';
import pg from 'pg';
import { POSTGRES_ADMIN_URL } from '../helpers/postgresDatabases.ts';
import { claimServerDatabase, emptyPoolDatabase, lockKey, poolPrefix } from '../helpers/serverDatabasePool.ts';

// The suite's servers on PostgreSQL share a pool of databases: each claim must still be a database
// of its own, empty, of the current schema, and one held by another process is never handed out.
// Serial: a claim of one test here could take the database another has just released.

async function query<R extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

test.serial('a claimed database is of the pool, migrated and empty; emptying it again deletes every row, restarts the sequences and ends its connections', async (t) => {
  const db = await claimServerDatabase();
  t.teardown(() => db.release());
  t.true(db.name.startsWith(await poolPrefix()));
  t.deepEqual(await query(db.url, 'SELECT count(*)::int AS n FROM organizations'), [{ n: 0 }]);
  const ledger = await query<{ n: number }>(db.url, 'SELECT count(*)::int AS n FROM schema_migrations');
  t.true(ledger[0]!.n > 0);
  await query(db.url, "INSERT INTO organizations (id, name, created_at, updated_at) VALUES ('o1', 'left behind', '', '')");
  t.deepEqual(await query(db.url, "SELECT nextval('ingest_rules_seq_seq')::text AS seq"), [{ seq: '1' }]);
  const pinned = new pg.Client({ connectionString: db.url }); // a connection its user left open
  await pinned.connect();
  const ended = new Promise<void>((resolve) => pinned.on('error', () => resolve()));

  await emptyPoolDatabase(db.name); // what the next claim of a released database does first
  t.deepEqual(await query(db.url, 'SELECT count(*)::int AS n FROM organizations'), [{ n: 0 }]);
  t.deepEqual(await query(db.url, 'SELECT count(*)::int AS n FROM schema_migrations'), ledger);
  t.deepEqual(await query(db.url, "SELECT nextval('ingest_rules_seq_seq')::text AS seq"), [{ seq: '1' }]);
  await ended;
  await pinned.end().catch(() => undefined);
});

test.serial('a released database is free for the next claim of any process', async (t) => {
  const db = await claimServerDatabase();
  const other = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await other.connect();
  t.teardown(() => other.end());
  const tryLock = async () => (await other.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [lockKey(db.name)])).rows[0]!.ok;
  t.false(await tryLock());
  await db.release();
  t.true(await tryLock());
  await other.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey(db.name)]);
});

test.serial('two servers of one process, or of two processes, never get the same database', async (t) => {
  const [a, b] = await Promise.all([claimServerDatabase(), claimServerDatabase()]);
  t.teardown(() => Promise.all([a.release(), b.release()]));
  t.not(a.name, b.name);

  // Another process holds a database (its claim is a session lock): it is skipped.
  const other = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await other.connect();
  t.teardown(() => other.end());
  await a.release();
  await other.query('SELECT pg_advisory_lock(hashtext($1))', [lockKey(a.name)]);
  const c = await claimServerDatabase();
  t.teardown(() => c.release());
  t.not(c.name, a.name);
  t.not(c.name, b.name);
});
