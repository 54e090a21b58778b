/** A small LRU map bounded by entry count and, optionally, by a weight (e.g. bytes). */
export class Lru<K, V> {
  private readonly map = new Map<K, { value: V; weight: number }>();
  private total = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxWeight = Infinity,
    private readonly onEvict?: (key: K, value: V) => void,
  ) {}

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const e = this.map.get(key);
    if (!e) return undefined;
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  peek(key: K): V | undefined {
    return this.map.get(key)?.value;
  }

  set(key: K, value: V, weight = 0): void {
    const old = this.map.get(key);
    if (old) {
      this.total -= old.weight;
      this.map.delete(key);
    }
    if (weight > this.maxWeight) return;
    this.map.set(key, { value, weight });
    this.total += weight;
    this.evict();
  }

  delete(key: K): void {
    const e = this.map.get(key);
    if (!e) return;
    this.map.delete(key);
    this.total -= e.weight;
  }

  clear(): void {
    this.map.clear();
    this.total = 0;
  }

  *keys(): IterableIterator<K> {
    for (const k of this.map.keys()) yield k;
  }

  *values(): IterableIterator<V> {
    for (const e of this.map.values()) yield e.value;
  }

  private evict(): void {
    while (this.map.size > this.maxEntries || this.total > this.maxWeight) {
      const [key, e] = this.map.entries().next().value as [K, { value: V; weight: number }];
      this.map.delete(key);
      this.total -= e.weight;
      this.onEvict?.(key, e.value);
    }
  }
}
