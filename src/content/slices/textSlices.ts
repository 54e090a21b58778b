import { Lru } from '../lru.ts';
import { buildLineIndex, type LineIndex } from './lineIndex.ts';

interface Entry {
  bytes: Buffer;
  index: Promise<LineIndex> | null;
}

/**
 * The content of recently sliced blobs with their line indexes, by blob id: paging through a
 * 50 MB text reads and indexes it once, then each page is an index look-up and a walk of at most
 * a few hundred lines (git objects are deflated whole: there is no seeking into them). Blobs are
 * immutable, so an entry is never stale. Bounded by `maxBytes` (a blob larger than half of it is
 * sliced without being kept).
 */
export class TextSlices {
  private readonly lru: Lru<string, Entry>;

  constructor(private readonly maxBytes = 256 * 1024 * 1024) {
    this.lru = new Lru<string, Entry>(Infinity, maxBytes);
  }

  /** The bytes of `key` (a content hash), read by `load` when not held. */
  async bytes(key: string | null, load: () => Promise<Buffer>): Promise<{ bytes: Buffer; lines: () => Promise<LineIndex> }> {
    const held = key ? this.lru.get(key) : undefined;
    const entry: Entry = held ?? { bytes: await load(), index: null };
    if (!held && key && entry.bytes.length <= this.maxBytes / 2) this.lru.set(key, entry, entry.bytes.length + 1024);
    return {
      bytes: entry.bytes,
      lines: () => {
        entry.index ??= buildLineIndex(entry.bytes);
        return entry.index;
      },
    };
  }
}

/**
 * The process's slices, shared by every surface that reads ranges (REST cat, the tools library's
 * cat and so MCP and agents): keys are content hashes with sizes, so sharing is always correct.
 */
export const textSlices = new TextSlices();
