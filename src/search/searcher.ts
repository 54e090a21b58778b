import type { EmbeddingsClient } from './embeddings.ts';
import { bestSnippet, ftsQueries, fuse, queryTerms } from './hybrid.ts';
import type { ChunkHit } from './searchIndex.ts';
import type { SearchReader } from './searchReader.ts';

/** A project index's queries, as `SearchReader` answers them, from wherever they run (see `QueryPool`). */
export interface SearchQueries {
  hasVectors(): boolean;
  lexical(...args: Parameters<SearchReader['lexical']>): Promise<ChunkHit[]>;
  nearest(...args: Parameters<SearchReader['nearest']>): Promise<ChunkHit[]>;
  chunkTexts(ids: number[]): Promise<(string | null)[]>;
  /** grep's candidates (SearchReader.grepCandidates). */
  grepCandidates(...args: Parameters<SearchReader['grepCandidates']>): Promise<ReturnType<SearchReader['grepCandidates']>>;
}

export type SearchMode = 'lexical' | 'vector' | 'hybrid';

export interface SearchRequest {
  query: string;
  topK: number;
  mode: SearchMode;
  /** Only chunks of nodes at or beneath this path ('' = the whole project). */
  prefix: string;
}

export interface SearchOutcome {
  hits: ChunkHit[];
  /** The mode that answered: hybrid falls back to lexical when the provider is not reachable. */
  mode: SearchMode;
  warning: string | null;
}

/** Query vectors of recent queries: an agent repeating a query does not pay the provider twice. */
const queryCache = new Map<string, Float32Array>();

/**
 * Runs one query on a project's index. Lexical: FTS5 BM25 over the query's words. Vector:
 * the query's embedding against the vec0 table (cosine). Hybrid: both, fused by reciprocal
 * rank. Candidates are over-fetched so that the caller's filters (current state, rights) still
 * leave `topK` results.
 */
export async function runSearch(index: SearchQueries, embeddings: EmbeddingsClient | null, req: SearchRequest, overFetch: number): Promise<SearchOutcome> {
  const terms = queryTerms(req.query);
  const want = req.topK + overFetch;
  const fts = ftsQueries(terms);
  const lexical = async () => (terms.length ? index.lexical(fts.all, fts.any, req.prefix, req.mode === 'hybrid' ? Math.max(want, 30) : want, terms) : []);
  if (req.mode === 'lexical' || !embeddings || !index.hasVectors()) {
    const warning = req.mode !== 'lexical' ? 'no embedding provider is configured (or no vectors yet): lexical results' : null;
    return { hits: await lexical(), mode: 'lexical', warning };
  }
  // The lexical list is ranked (in a query thread) while the provider computes the query's vector.
  const pendingLexical = req.mode === 'hybrid' ? lexical() : Promise.resolve([]);
  pendingLexical.catch(() => undefined);
  let vector: Float32Array;
  try {
    vector = await queryVector(embeddings, req.query);
  } catch (err) {
    return { hits: req.mode === 'hybrid' ? await pendingLexical : await lexical(), mode: 'lexical', warning: `the embedding provider failed (${(err as Error).message}): lexical results` };
  }
  const candidates = req.prefix === '' ? Math.max(want * 2, 50) : Math.min(4096, Math.max(want * 20, 200));
  const [lexicalHits, near] = await Promise.all([pendingLexical, index.nearest(vector, req.prefix, req.mode === 'hybrid' ? Math.max(want, 50) : want, candidates)]);
  const hits = req.mode === 'vector' ? near : fuse([lexicalHits, near], want);
  // Chunks found by meaning only get their snippet now, for the few kept.
  const bare = hits.filter((h) => !h.snippet);
  const texts = bare.length ? await index.chunkTexts(bare.map((h) => h.chunkId)) : [];
  bare.forEach((h, i) => (h.snippet = bestSnippet(texts[i] ?? '', terms)));
  return { hits, mode: req.mode, warning: null };
}

async function queryVector(embeddings: EmbeddingsClient, query: string): Promise<Float32Array> {
  const key = `${embeddings.model}\u0000${query}`;
  const cached = queryCache.get(key);
  if (cached) return cached;
  const [v] = await embeddings.embed([query]);
  if (queryCache.size >= 1000) queryCache.delete(queryCache.keys().next().value!);
  queryCache.set(key, v!);
  return v!;
}
