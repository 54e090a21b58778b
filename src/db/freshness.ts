import type { Statement } from 'better-sqlite3';
import type { Db } from './database.ts';

/**
 * Whether rows this process read earlier still stand, for the look-ups every request repeats
 * (freshCache.ts). `generation()` changes whenever the database may have changed since it was
 * last asked:
 *
 * - by this connection: `total_changes()` counts every row it inserted, updated or deleted
 *   (triggers included, rolled-back ones too); reading it runs no transaction (~0.1 µs), so it is
 *   read on every call and a write is seen by the very next look-up, in the same turn;
 * - by any other connection (another worker process, a CLI, a worker thread): `PRAGMA
 *   data_version` changes when one of them committed. It is a read transaction (as costly as a
 *   small statement), so it is read once per turn of the event loop: from the first look-up of
 *   a turn until its ticks and microtasks are drained (a request's whole chain of awaits, up to
 *   its first real I/O). Whatever made this process start the turn (a request, an answer, a
 *   message saying that another process committed) came before that first look-up, so a commit
 *   it may depend on is seen; look-ups later in the turn see the database as it was at the first
 *   one, as if the turn had run a few microseconds earlier.
 *
 * Inside a transaction it answers null: reads there must see the transaction's own snapshot.
 */
export class DbFreshness {
  private readonly dataVersion: Statement;
  private readonly totalChanges: Statement;
  private version = -1;
  private changes = -1;
  private gen = 0;
  private checkedThisTurn = false;
  private readonly endTurn = () => {
    this.checkedThisTurn = false;
  };

  private constructor(private readonly db: Db) {
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.totalChanges = db.prepare('SELECT total_changes()').pluck();
  }

  private static readonly byDb = new WeakMap<Db, DbFreshness>();

  /** One per connection, shared by every cache over it. */
  static of(db: Db): DbFreshness {
    let f = DbFreshness.byDb.get(db);
    if (!f) {
      f = new DbFreshness(db);
      DbFreshness.byDb.set(db, f);
    }
    return f;
  }

  /** Changes whenever the database may have changed since the last call; null inside a transaction. */
  generation(): number | null {
    if (this.db.inTransaction) return null;
    const changes = this.totalChanges.get() as number;
    if (changes !== this.changes) {
      this.changes = changes;
      this.gen++;
    }
    if (!this.checkedThisTurn) {
      this.checkedThisTurn = true;
      // Runs after the ticks and microtasks queued until then (and those they queue), before Node
      // takes the next I/O callback, timer or immediate.
      process.nextTick(this.endTurn);
      const version = this.dataVersion.get() as number;
      if (version !== this.version) {
        this.version = version;
        this.gen++;
      }
    }
    return this.gen;
  }
}
