import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migratedTemplate } from './migratedPostgres.ts';
import { databaseUrl, POSTGRES_ADMIN_URL, quotedName } from './postgresDatabases.ts';

/**
 * The PostgreSQL databases of the suite's servers, reused across test processes. Creating a
 * database copies the template through the WAL and dropping one forces a checkpoint: about 1 s
 * and 2-3 s on this machine's disk, per server, while every other test waits on the same disk.
 * Instead a server claims an idle database of the pool (named after the template, so of the same
 * schema), which is emptied first (TRUNCATE of every table but the migrations' ledger): each
 * server still starts on a database of its own with no rows in it. The claim is a session
 * advisory lock held by one admin connection per test process, so a process that dies releases
 * its databases with its connection. `npm run test:postgres` and CI drop the pool afterwards
 * (scripts/drop-test-databases.ts).
 */

export interface ServerDatabase {
  name: string;
  url: string;
  /** Gives the database back to the pool (its rows stay until the next claim empties it). */
  release(): Promise<void>;
}

const LEDGER = 'schema_migrations';

/** The pool's databases: `cns_p_<the template's hash>_<random>`. */
export async function poolPrefix(): Promise<string> {
  return `cns_p_${(await migratedTemplate()).replace(/^cns_tpl_/, '')}_`;
}

let holder: Promise<pg.Client> | undefined;
/** The connection that holds this process's claims; it never keeps the process alive by itself. */
function claims(): Promise<pg.Client> {
  return (holder ??= (async () => {
    const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, application_name: 'cns-test-pool' });
    await client.connect();
    socketOf(client)?.unref();
    client.on('error', () => (holder = undefined)); // the next claim connects again
    return client;
  })());
}

function socketOf(client: pg.Client): { ref(): void; unref(): void } | undefined {
  return (client as unknown as { connection?: { stream?: { ref(): void; unref(): void } } }).connection?.stream;
}

/** A statement on the holder, which stays referenced while it waits for the answer. */
async function onHolder<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<pg.QueryResult<R>> {
  const client = await claims();
  const socket = socketOf(client);
  socket?.ref();
  try {
    return await client.query<R>(text, values);
  } finally {
    socket?.unref();
  }
}

const held = new Set<string>();
let turn: Promise<unknown> = Promise.resolve();

/** An empty migrated database for one server; claims in this process go one at a time (advisory locks are re-entrant per session). */
export function claimServerDatabase(): Promise<ServerDatabase> {
  const claim = turn.then(claimNow);
  turn = claim.catch(() => undefined);
  return claim;
}

async function claimNow(): Promise<ServerDatabase> {
  const prefix = await poolPrefix();
  const { rows } = await onHolder<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1) ORDER BY datname', [prefix]);
  for (const { datname } of rows) {
    if (held.has(datname) || !(await tryLock(datname))) continue;
    try {
      await emptyPoolDatabase(datname);
      return claimed(datname);
    } catch (e) {
      await unlock(datname);
      if ((e as { code?: string }).code === '3D000') continue; // dropped since the listing (scripts/drop-test-databases.ts)
      throw e;
    }
  }
  const name = `${prefix}${randomBytes(4).toString('hex')}`;
  if (!(await tryLock(name))) throw new Error(`pool database ${name} is locked before it exists`);
  try {
    await onHolder(`CREATE DATABASE ${quotedName(name)} TEMPLATE ${quotedName(await migratedTemplate())}`);
  } catch (e) {
    await unlock(name);
    throw e;
  }
  return claimed(name);
}

function claimed(name: string): ServerDatabase {
  held.add(name);
  let released: Promise<void> | undefined;
  return {
    name,
    url: databaseUrl(name),
    release: () =>
      (released ??= (async () => {
        held.delete(name);
        await unlock(name);
      })()),
  };
}

export const lockKey = (name: string) => `cns-test-pool:${name}`;
async function tryLock(name: string): Promise<boolean> {
  const { rows } = await onHolder<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [lockKey(name)]);
  return rows[0]!.ok;
}
async function unlock(name: string): Promise<void> {
  await onHolder('SELECT pg_advisory_unlock(hashtext($1))', [lockKey(name)]);
}

/**
 * Ends what a previous user left connected (a child process that outlived its test), then deletes
 * every row but the ledger's and restarts the sequences, in one round trip. DELETE with triggers
 * off (no foreign-key checks, no change notices) takes milliseconds where TRUNCATE, which makes
 * new files for every table and index, takes a fifth of a second.
 */
const EMPTY = `DO $$
DECLARE t text;
BEGIN
  PERFORM pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid();
  PERFORM set_config('session_replication_role', 'replica', true);
  FOR t IN SELECT format('%I', tablename) FROM pg_tables WHERE schemaname = 'public' AND tablename <> '${LEDGER}' LOOP
    EXECUTE 'DELETE FROM ' || t;
  END LOOP;
  PERFORM setval(format('%I.%I', schemaname, sequencename)::regclass, 1, false) FROM pg_sequences WHERE schemaname = 'public';
END $$`;

export async function emptyPoolDatabase(name: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl(name), application_name: 'cns-test-pool' });
  await client.connect();
  try {
    await client.query(EMPTY);
  } finally {
    await client.end();
  }
}

/** Drops every database of the pool that no process holds (any template's); answers how many. */
export async function dropIdlePoolDatabases(): Promise<number> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, application_name: 'cns-test-pool' });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>("SELECT datname FROM pg_database WHERE starts_with(datname, 'cns_p_')");
    let dropped = 0;
    for (const { datname } of rows) {
      const { rows: lock } = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [lockKey(datname)]);
      if (!lock[0]!.ok) continue; // in use by a test process
      await client.query(`DROP DATABASE IF EXISTS ${quotedName(datname)} WITH (FORCE)`);
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [lockKey(datname)]);
      dropped++;
    }
    return dropped;
  } finally {
    await client.end();
  }
}
