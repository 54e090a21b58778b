import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { openSqliteMetadata, type MetadataStore } from '../../src/db/metadata/metadataStore.ts';
import type { Db } from '../../src/db/database.ts';

/** A migrated service database, its content-core connection and a metadata store over it. */
function opened(t: { teardown(fn: () => unknown): void }): { db: Db; metadata: MetadataStore } {
  const dir = mkdtempSync(join(tmpdir(), 'cns-metadata-'));
  const file = join(dir, 'cns.db');
  const db = openDatabase(file);
  const metadata = openSqliteMetadata(file);
  t.teardown(async () => {
    await metadata.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { db, metadata };
}

test('a transaction commits all its statements, or none when it throws', async (t) => {
  const { db, metadata } = opened(t);
  await metadata.transaction(async (trx) => {
    await trx.insertInto('analytics_salts').values({ day: '2026-01-01', salt: 'a' }).execute();
    await trx.insertInto('analytics_salts').values({ day: '2026-01-02', salt: 'b' }).execute();
  });
  await t.throwsAsync(
    metadata.transaction(async (trx) => {
      await trx.insertInto('analytics_salts').values({ day: '2026-01-03', salt: 'c' }).execute();
      await trx.insertInto('analytics_salts').values({ day: '2026-01-01', salt: 'again' }).execute(); // the primary key refuses it
    }),
    { any: true, code: 'SQLITE_CONSTRAINT_PRIMARYKEY' },
  );
  t.deepEqual(db.prepare('SELECT day FROM analytics_salts ORDER BY day').pluck().all(), ['2026-01-01', '2026-01-02'], 'the content connection sees the committed rows, not the rolled back one');
  t.deepEqual((await metadata.db.selectFrom('analytics_salts').select('day').orderBy('day').execute()).map((r) => r.day), ['2026-01-01', '2026-01-02']);
});

test('transactions at once take turns: no read-modify-write is lost', async (t) => {
  const { metadata } = opened(t);
  await metadata.db.insertInto('analytics_salts').values({ day: 'n', salt: '0' }).execute();
  await Promise.all(
    Array.from({ length: 25 }, () =>
      metadata.transaction(async (trx) => {
        const { salt } = await trx.selectFrom('analytics_salts').select('salt').where('day', '=', 'n').executeTakeFirstOrThrow();
        await new Promise((r) => setImmediate(r)); // another transaction would read here if they interleaved
        await trx.updateTable('analytics_salts').set({ salt: String(Number(salt) + 1) }).where('day', '=', 'n').execute();
      }),
    ),
  );
  t.is((await metadata.db.selectFrom('analytics_salts').select('salt').where('day', '=', 'n').executeTakeFirstOrThrow()).salt, '25');
});

test('while the content connection holds the write lock, a metadata transaction waits without holding the event loop', async (t) => {
  const { db, metadata } = opened(t);
  db.prepare('BEGIN IMMEDIATE').run();
  db.prepare("INSERT INTO analytics_salts (day, salt) VALUES ('held', 'x')").run();
  let done = false;
  const written = metadata
    .transaction(async (trx) => {
      const seen = await trx.selectFrom('analytics_salts').select('day').execute();
      await trx.insertInto('analytics_salts').values({ day: 'after', salt: 'y' }).execute();
      return seen.map((r) => r.day);
    })
    .finally(() => (done = true));
  let turns = 0;
  const deadline = Date.now() + 5000;
  while (turns < 20 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1));
    turns++;
  }
  t.is(turns, 20, 'timers ran while the metadata transaction waited');
  t.false(done);
  db.prepare('COMMIT').run();
  t.deepEqual(await written, ['held'], 'it began after the other commit, on its data');
  t.deepEqual(db.prepare('SELECT day FROM analytics_salts ORDER BY day').pluck().all(), ['after', 'held']);
});

test('a list bound as one parameter matches the same rows on any length, empty included', async (t) => {
  const { metadata } = opened(t);
  const { oneOf } = await import('../../src/db/metadata/oneOf.ts');
  await metadata.db.insertInto('analytics_salts').values(['a', 'b', 'c'].map((day) => ({ day, salt: day }))).execute();
  const days = async (list: string[]) =>
    (await metadata.db.selectFrom('analytics_salts').select('day').where(oneOf(metadata.engine, sql.ref('day'), list)).orderBy('day').execute()).map((r) => r.day);
  t.deepEqual(await days([]), []);
  t.deepEqual(await days(['c', 'a', 'zz']), ['a', 'c']);
  const many = Array.from({ length: 40_000 }, (_, i) => `d${i}`).concat('b');
  t.deepEqual(await days(many), ['b'], 'past either engine’s limit of parameters per statement');
});
