import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../../src/db/database.ts';
import { MetadataCache } from '../../src/db/metadata/metadataCache.ts';
import { openSqliteMetadata, type MetadataDb, type MetadataStore } from '../../src/db/metadata/metadataStore.ts';
import type { PostgresChanges } from '../../src/db/metadata/metadataChanges.ts';
import { openPostgresMetadata } from '../../src/db/metadata/postgresMetadata.ts';
import { runPostgresMigrations } from '../../src/db/postgres/migrate.ts';
import { openPostgresPool } from '../../src/db/postgres/pool.ts';
import { ENGINES, type Engine } from '../helpers/metadataEngines.ts';
import { freshPostgresDatabase } from '../helpers/postgresDatabases.ts';

// Cached metadata rows on both engines (db/metadata/metadataChanges.ts): this process's writes
// empty the cache at once, another process's as soon as it is known (the next turn on SQLite,
// the notification on PostgreSQL), and a PostgreSQL listener that lost its connection keeps
// nothing until it is back.

interface Two {
  a: MetadataStore;
  b: MetadataStore;
  url: string | null;
}

const SEED = `
  INSERT INTO users (id, email, password_hash, created_at, updated_at) VALUES ('usr_1', 'a@example.com', 'x', '2026-01-01', '2026-01-01');
  INSERT INTO organizations (id, name, created_at, updated_at) VALUES ('org_1', 'Org', '2026-01-01', '2026-01-01');
  INSERT INTO projects (id, org_id, name, created_at, updated_at) VALUES ('prj_1', 'org_1', 'Ann', '2026-01-01', '2026-01-01');`;

/** Two stores on one database, as two processes would have. */
async function twoStores(t: { teardown(fn: () => unknown): void }, engine: Engine): Promise<Two> {
  let open: () => MetadataStore;
  let url: string | null = null;
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'cns-changes-'));
    const file = join(dir, 'cns.db');
    const raw = openDatabase(file);
    raw.exec(SEED);
    raw.close();
    open = () => openSqliteMetadata(file);
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  } else {
    const database = await freshPostgresDatabase();
    url = database.url;
    const migrating = openPostgresPool(database.url, { statementTimeoutMs: 10_000, max: 1 });
    await runPostgresMigrations(migrating);
    // Before the stores listen: the seed's notifications must not empty their caches later.
    await migrating.query(SEED);
    await migrating.end();
    open = () => openPostgresMetadata(openPostgresPool(database.url, { statementTimeoutMs: 10_000, max: 4 }));
    t.teardown(() => database.drop());
  }
  const a = open();
  const b = open();
  // Registered after the drop, so run before it (teardowns run last-in, first-out).
  t.teardown(async () => {
    await a.close();
    await b.close();
  });
  for (const s of [a, b]) await until('the listener', () => s.changes.generation() !== null);
  return { a, b, url };
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function userCache(store: MetadataStore) {
  let loads = 0;
  const cache = new MetadataCache<string, { name: string }>(store.changes, 100);
  return {
    get loads() {
      return loads;
    },
    name: async (id: string) =>
      (
        await cache.get(id, () => {
          loads++;
          return sql<{ name: string }>`SELECT name FROM projects WHERE id = ${id}`.execute(store.db).then((r) => r.rows[0]);
        })
      )?.name,
  };
}

// Through the query builder, as the stores write (its plugin counts this process's writes).
const rename = (store: MetadataStore | MetadataDb, name: string) => ('db' in store ? store.db : store).updateTable('projects').set({ name } as never).where('id', '=', 'prj_1').execute();

for (const engine of ENGINES) {
  test(`${engine}: a row is read once, and this process's own write is seen by its very next look-up`, async (t) => {
    const { a } = await twoStores(t, engine);
    const users = userCache(a);
    t.is(await users.name('prj_1'), 'Ann');
    t.is(await users.name('prj_1'), 'Ann');
    t.is(users.loads, 1, 'the second look-up is the kept row');
    await rename(a, 'Anna');
    t.is(await users.name('prj_1'), 'Anna', 'no wait for a notification');
    t.is(users.loads, 2);
    // Through a transaction as well.
    await a.transaction((trx) => rename(trx, 'Annie'));
    t.is(await users.name('prj_1'), 'Annie');
    t.is(await users.name('nobody'), undefined, 'an unknown id is not kept');
    t.is(await users.name('nobody'), undefined);
    t.is(users.loads, 5);
  });

  test(`${engine}: another process's write is seen once it is known`, async (t) => {
    const { a, b } = await twoStores(t, engine);
    const users = userCache(a);
    t.is(await users.name('prj_1'), 'Ann');
    await rename(b, 'Bea');
    let seen: string | undefined;
    await until('the other process’s write', async () => (seen = await users.name('prj_1')) === 'Bea', 5000);
    t.is(seen, 'Bea');
    const loads = users.loads;
    t.is(await users.name('prj_1'), 'Bea');
    t.is(users.loads, loads, 'kept again afterwards');
  });
}

test('postgres: while its listener is down nothing is kept, and a change made meanwhile is seen after', async (t) => {
  const { a, b, url } = await twoStores(t, 'postgres');
  const users = userCache(a);
  t.is(await users.name('prj_1'), 'Ann');
  const admin = new pg.Client({ connectionString: url! });
  await admin.connect();
  t.teardown(() => admin.end());
  // The listeners of both stores: both reconnect on their own.
  const { rowCount } = await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'cns-changes' AND datname = current_database()");
  t.is(rowCount, 2);
  await until('the listener to notice', () => a.changes.generation() === null, 5000);
  await rename(b, 'Cleo');
  const loads = users.loads;
  t.is(await users.name('prj_1'), 'Cleo', 'read from the database while no one listens');
  t.is(await users.name('prj_1'), 'Cleo');
  t.true(users.loads >= loads + 1);
  await until('the listener to come back', () => a.changes.generation() !== null, 10_000);
  t.is(await users.name('prj_1'), 'Cleo');
  const after = users.loads;
  t.is(await users.name('prj_1'), 'Cleo');
  t.is(users.loads, after, 'kept again once listening');
  await rename(b, 'Dora');
  await until('a change after the reconnection', async () => (await users.name('prj_1')) === 'Dora', 5000);
  t.pass();
});

test('postgres: this process counts its own writes to cached tables, and only those, without waiting for the notification', async (t) => {
  const { a } = await twoStores(t, 'postgres');
  const changes = a.changes as PostgresChanges;
  const before = changes.writes;
  await rename(a, 'Eve');
  t.is(changes.writes, before + 1, 'an update of projects');
  await a.db.deleteFrom('tools').where('id', '=', 'none').execute();
  await a.db.updateTable('webhooks').set({ active: 0 } as never).where('id', '=', 'none').execute();
  t.is(changes.writes, before + 1, 'tables no cache holds do not count');
  await a.transaction((trx) => rename(trx, 'Fay'));
  t.is(changes.writes, before + 3, 'the statement, then the commit');
  await a.transaction((trx) => trx.selectFrom('tools').select('id').execute());
  t.is(changes.writes, before + 3, 'a transaction that wrote no cached table');
});
