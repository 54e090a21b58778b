import type { Statement } from 'better-sqlite3';
import type { Db } from './database.ts';

/** As long as the busy timeout of openDatabase(): then the wait blocks, as any other write would. */
const WAIT_MS = 5000;
/** The longest pause between two attempts; a content batch holds the lock for a few ms. */
const MAX_PAUSE_MS = 4;

interface Statements {
  /** The busy timeout to restore (a PRAGMA acts when prepared, not when run: it is set with db.pragma each time). */
  timeout: number;
  begin: Statement;
  commit: Statement;
  rollback: Statement;
}
const prepared = new WeakMap<Db, Statements>();

function statements(db: Db): Statements {
  let s = prepared.get(db);
  if (!s) {
    const timeout = Number(db.pragma('busy_timeout', { simple: true }));
    s = {
      timeout,
      begin: db.prepare('BEGIN IMMEDIATE'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
    };
    prepared.set(db, s);
  }
  return s;
}

const isBusy = (e: unknown) => (e as { code?: string }).code === 'SQLITE_BUSY';

/**
 * Begins a write transaction (BEGIN IMMEDIATE) without holding the event loop while another
 * connection holds the write lock. SQLite's own busy handler sleeps inside the call (1, 2, 5,
 * 10… ms), and while one process of the box (a worker of `cns serve --workers N`) or another
 * connection of this one (the metadata store's) commits, this process would stop serving
 * anything, reads included, and oversleep the lock by several ms. Here a refused BEGIN returns
 * at once and is retried after a short timer. After WAIT_MS the attempt blocks like every other
 * write (the busy timeout).
 */
export async function beginImmediate(db: Db): Promise<void> {
  if (db.inTransaction) throw new Error('beginImmediate: already inside a transaction');
  const s = statements(db);
  const deadline = Date.now() + WAIT_MS;
  for (let attempt = 0; ; attempt++) {
    if (Date.now() >= deadline) {
      s.begin.run();
      return;
    }
    db.pragma('busy_timeout = 0');
    try {
      s.begin.run();
      return;
    } catch (e) {
      if (!isBusy(e)) throw e;
    } finally {
      // Restored before any await: other code of this process shares the connection.
      db.pragma(`busy_timeout = ${s.timeout}`);
    }
    await new Promise((r) => setTimeout(r, Math.min(MAX_PAUSE_MS, 1 + (attempt >> 2)) * (0.5 + Math.random())));
  }
}

/** Ends the transaction beginImmediate() began: committed, or rolled back when `failed`. */
export function endTransaction(db: Db, failed: boolean): void {
  const s = statements(db);
  try {
    if (!failed) return void s.commit.run();
  } catch (e) {
    if (db.inTransaction) s.rollback.run();
    throw e;
  }
  if (db.inTransaction) s.rollback.run();
}

/**
 * Runs `fn` in a write transaction, as `db.transaction(fn).immediate()` does, but waits for the
 * write lock without holding the event loop (beginImmediate). `fn` runs synchronously once the
 * lock is held; nested `db.transaction()` calls in it are savepoints, as before.
 */
export async function writeTurn<T>(db: Db, fn: () => T): Promise<T> {
  await beginImmediate(db);
  let result: T;
  try {
    result = fn();
  } catch (e) {
    endTransaction(db, true);
    throw e;
  }
  endTransaction(db, false);
  return result;
}
