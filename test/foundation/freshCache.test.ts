import test from 'ava';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/database.ts';
import { FreshCache } from '../../src/db/freshCache.ts';

/** src/db/freshCache.ts: rows kept while the database is unchanged, by this connection or any other. */

interface Row {
  id: string;
  name: string;
}

function setup(t: import('ava').ExecutionContext) {
  const dir = mkdtempSync(join(tmpdir(), 'cns-fresh-'));
  const db = openDatabase(join(dir, 'cns.db'));
  db.exec('CREATE TABLE t (id TEXT PRIMARY KEY, name TEXT NOT NULL)');
  db.prepare('INSERT INTO t VALUES (?, ?)').run('a', 'one');
  const other = new Database(join(dir, 'cns.db'));
  other.pragma('busy_timeout = 5000');
  t.teardown(() => {
    other.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  let reads = 0;
  const cache = new FreshCache<string, Row>(db, 2);
  const find = (id: string) =>
    cache.get(id, () => {
      reads++;
      return db.prepare('SELECT * FROM t WHERE id = ?').get(id) as Row | undefined;
    });
  return { db, other, find, reads: () => reads };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

test('a kept row is read once while nothing changes, and each caller gets its own copy', async (t) => {
  const { find, reads } = setup(t);
  const first = find('a')!;
  first.name = 'changed by a caller';
  await nextTurn();
  t.deepEqual(find('a'), { id: 'a', name: 'one' });
  t.is(reads(), 1);
});

test("this connection's write counts at once, in the same turn", (t) => {
  const { db, find } = setup(t);
  t.is(find('a')!.name, 'one');
  db.prepare('UPDATE t SET name = ? WHERE id = ?').run('two', 'a');
  t.is(find('a')!.name, 'two');
  db.prepare('DELETE FROM t WHERE id = ?').run('a');
  t.is(find('a'), undefined);
});

test("another connection's commit counts from the next turn of the event loop", async (t) => {
  const { other, find } = setup(t);
  t.is(find('a')!.name, 'one');
  other.prepare('UPDATE t SET name = ? WHERE id = ?').run('two', 'a');
  // Its commit can only become known to this process in a later turn (a request, an answer, a message).
  await nextTurn();
  t.is(find('a')!.name, 'two');
  other.prepare('DELETE FROM t WHERE id = ?').run('a');
  await Promise.resolve();
  await nextTurn();
  t.is(find('a'), undefined);
});

test('inside a transaction nothing is kept or reused: reads see the transaction', (t) => {
  const { db, other, find, reads } = setup(t);
  t.is(find('a')!.name, 'one');
  other.prepare('UPDATE t SET name = ? WHERE id = ?').run('two', 'a');
  const inside = db.transaction(() => {
    const seen = find('a')!.name;
    db.prepare('UPDATE t SET name = ? WHERE id = ?').run('three', 'a');
    return [seen, find('a')!.name];
  });
  t.deepEqual(inside.immediate(), ['two', 'three']);
  t.is(reads(), 3);
});

test('only found rows are kept, and at most maxEntries of them', async (t) => {
  const { db, find, reads } = setup(t);
  db.prepare('INSERT INTO t VALUES (?, ?), (?, ?)').run('b', 'bee', 'c', 'sea');
  await nextTurn();
  const before = reads();
  t.is(find('missing'), undefined);
  t.is(find('missing'), undefined);
  t.is(reads() - before, 2);
  for (const id of ['a', 'b', 'c']) find(id);
  find('c');
  find('b');
  t.is(reads() - before, 5, 'b and c kept');
  find('a');
  t.is(reads() - before, 6, 'a was dropped to stay within two rows');
});
