import type { MetadataChanges } from './metadataChanges.ts';

/**
 * Metadata rows a look-up read, kept while no cached table has changed (metadataChanges.ts): the
 * whole map is dropped at the first look-up after a change, so a revoked key or a removed member
 * counts from the next request (on PostgreSQL, once the change's notification has arrived from
 * another process). For the look-ups every request repeats; no time-based expiry. Each caller
 * gets its own shallow copy, and only found rows are kept.
 */
export class MetadataCache<K, V extends object> {
  private readonly map = new Map<K, V>();
  private generation: number | null = null;

  constructor(
    private readonly changes: MetadataChanges,
    private readonly maxEntries: number,
    private readonly copy: (value: V) => V = (v) => ({ ...v }),
  ) {}

  /** The kept row for `key`, or what `load` reads now (kept if found and nothing changed meanwhile). */
  async get(key: K, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const generation = this.changes.generation();
    if (generation === null) return load();
    if (generation !== this.generation) {
      this.map.clear();
      this.generation = generation;
    }
    const kept = this.map.get(key);
    if (kept !== undefined) return this.copy(kept);
    const value = await load();
    // A change that came while the row was read may have changed it: answer it, keep it not.
    if (value === undefined || this.changes.generation() !== generation || this.generation !== generation) return value;
    // Oldest first: a bound on memory, not a policy (a full map is rare, a change empties it).
    if (this.map.size >= this.maxEntries) this.map.delete(this.map.keys().next().value as K);
    this.map.set(key, value);
    return this.copy(value);
  }
}
