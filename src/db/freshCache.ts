import type { Db } from './database.ts';
import { DbFreshness } from './freshness.ts';

/**
 * Rows a look-up read, kept while the database has not changed (freshness.ts): the whole map is
 * dropped at the first look-up after any commit, this process's or another's, so a revoked key,
 * a removed member or a new version counts from the very next request. No time-based expiry.
 *
 * For the look-ups every request repeats (a user, a key, a project and role, a node by path): a
 * statement is a read transaction of its own (~10 µs); the freshness check is one per turn of the
 * event loop. Each caller gets its own shallow copy, so a caller that changes its record
 * cannot change the kept one. Only found rows are kept: an unknown key or path costs what it did.
 */
export class FreshCache<K, V extends object> {
  private readonly freshness: DbFreshness;
  private readonly map = new Map<K, V>();
  private generation: number | null = null;

  constructor(
    db: Db,
    private readonly maxEntries: number,
    private readonly copy: (value: V) => V = (v) => ({ ...v }),
  ) {
    this.freshness = DbFreshness.of(db);
  }

  /** The kept row for `key` or what `load` reads now (kept if found). */
  get(key: K, load: () => V | undefined): V | undefined {
    const generation = this.freshness.generation();
    // Inside a transaction: its own snapshot, never kept.
    if (generation === null) return load();
    if (generation !== this.generation) {
      this.map.clear();
      this.generation = generation;
    }
    const kept = this.map.get(key);
    if (kept !== undefined) return this.copy(kept);
    const value = load();
    if (value === undefined) return undefined;
    // Oldest first: a bound on memory, not a policy (a full map is rare, a change empties it).
    if (this.map.size >= this.maxEntries) this.map.delete(this.map.keys().next().value as K);
    this.map.set(key, value);
    return this.copy(value);
  }
}
