import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/database.ts';
import { writeTurn } from '../../src/db/writeTurn.ts';

test('waiting for another process’s write lock leaves the event loop free, then writes; the busy timeout is kept', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cns-write-turn-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'cns.db');
  const mine = openDatabase(file);
  const other = openDatabase(file); // another worker's connection
  t.teardown(() => {
    mine.close();
    other.close();
  });
  mine.exec('CREATE TABLE t (x INTEGER)');
  other.prepare('BEGIN IMMEDIATE').run();
  other.prepare('INSERT INTO t VALUES (1)').run();

  let turns = 0;
  let seen = 0;
  const written = writeTurn(mine, () => {
    seen = (mine.prepare('SELECT count(*) AS n FROM t').get() as { n: number }).n;
    mine.prepare('INSERT INTO t VALUES (2)').run();
    return 'done';
  });
  // The event loop turns while the lock is held elsewhere (SQLite's busy handler would sleep in the call).
  const deadline = Date.now() + 5000;
  while (turns < 20 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1));
    turns++;
    t.is(mine.pragma('busy_timeout', { simple: true }), 5000, 'other code on this connection keeps the busy timeout');
  }
  t.is(turns, 20);
  other.prepare('COMMIT').run();
  t.is(await written, 'done');
  t.is(seen, 1, 'the write ran after the other commit, on its data');
  t.deepEqual(mine.prepare('SELECT x FROM t ORDER BY x').pluck().all(), [1, 2]);
  t.false(mine.inTransaction);
});

test('a failure inside rolls back and is thrown; the next turn writes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cns-write-turn-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const db = openDatabase(join(dir, 'cns.db'));
  t.teardown(() => db.close());
  db.exec('CREATE TABLE t (x INTEGER)');
  await t.throwsAsync(
    writeTurn(db, () => {
      db.prepare('INSERT INTO t VALUES (1)').run();
      throw new Error('refused');
    }),
    { message: 'refused' },
  );
  t.false(db.inTransaction);
  await writeTurn(db, () => db.prepare('INSERT INTO t VALUES (2)').run());
  t.deepEqual(db.prepare('SELECT x FROM t').pluck().all(), [2]);
});
