import type { ChunkHit } from './searchIndex.ts';
import { SearchReader } from './searchReader.ts';

/** What a query thread is asked, and answers. */
export type Ops = {
  lexical: { args: Parameters<SearchReader['lexical']>; result: ChunkHit[] };
  nearest: { args: Parameters<SearchReader['nearest']>; result: ChunkHit[] };
  texts: { args: Parameters<SearchReader['chunkTexts']>; result: (string | null)[] };
  grep: { args: Parameters<SearchReader['grepCandidates']>; result: ReturnType<SearchReader['grepCandidates']> };
  forget: { args: []; result: null };
};
export type QueryRequest = { [K in keyof Ops]: { id: number; file: string; op: K; args: Ops[K]['args'] } }[keyof Ops];
export type QueryReply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };

/** Readers by index file, least recently used first: a thread keeps a few dozen projects' indexes open. */
export class ReaderCache {
  private readonly readers = new Map<string, SearchReader>();

  constructor(private readonly max = 32) {}

  get(file: string): SearchReader {
    let r = this.readers.get(file);
    if (r) this.readers.delete(file);
    else r = new SearchReader(file);
    this.readers.set(file, r);
    if (this.readers.size > this.max) {
      const [oldest, reader] = this.readers.entries().next().value!;
      reader.close();
      this.readers.delete(oldest);
    }
    return r;
  }

  forget(file: string): void {
    this.readers.get(file)?.close();
    this.readers.delete(file);
  }

  closeAll(): void {
    for (const r of this.readers.values()) r.close();
    this.readers.clear();
  }
}

export function answerQuery(cache: ReaderCache, m: QueryRequest): unknown {
  switch (m.op) {
    case 'forget':
      cache.forget(m.file);
      return null;
    case 'lexical':
      return cache.get(m.file).lexical(...m.args);
    case 'nearest':
      return cache.get(m.file).nearest(...m.args);
    case 'texts':
      return cache.get(m.file).chunkTexts(...m.args);
    case 'grep':
      return cache.get(m.file).grepCandidates(...m.args);
  }
}
