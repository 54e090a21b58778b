import { Lru } from './lru.ts';

/**
 * Blob contents by object id, shared by all projects. Blobs are immutable and content-addressed,
 * so a cached entry can never be stale; only ids taken from a project's own index are looked up.
 */
export class BlobCache {
  private readonly lru: Lru<string, Buffer>;
  private readonly maxItemBytes: number;

  constructor(maxBytes: number) {
    this.lru = new Lru<string, Buffer>(Infinity, maxBytes);
    this.maxItemBytes = Math.max(1, Math.floor(maxBytes / 16));
  }

  get(oid: string): Buffer | undefined {
    return this.lru.get(oid);
  }

  set(oid: string, bytes: Buffer): void {
    if (bytes.length <= this.maxItemBytes) this.lru.set(oid, bytes, bytes.length + 64);
  }

  clear(): void {
    this.lru.clear();
  }
}
