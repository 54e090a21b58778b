import type { EmbeddingsClient } from './embeddings.ts';
import { ftsQueries, fuse, markSnippet, queryTerms } from './hybrid.ts';
import type { ChunkHit, SearchIndex } from './searchIndex.ts';

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
export async function runSearch(index: SearchIndex, embeddings: EmbeddingsClient | null, req: SearchRequest, overFetch: number): Promise<SearchOutcome> {
  const terms = queryTerms(req.query);
  const want = req.topK + overFetch;
  const fts = ftsQueries(terms);
  const lexical = () => (terms.length ? index.lexical(fts.all, fts.any, req.prefix, req.mode === 'hybrid' ? Math.max(want, 30) : want) : []);
  if (req.mode === 'lexical' || !embeddings || !index.hasVectors()) {
    const warning = req.mode !== 'lexical' ? 'no embedding provider is configured (or no vectors yet): lexical results' : null;
    return { hits: lexical(), mode: 'lexical', warning };
  }
  // The provider computes the query's vector while the lexical list is ranked here.
  const pending = queryVector(embeddings, req.query);
  pending.catch(() => undefined);
  const lexicalHits = req.mode === 'hybrid' ? lexical() : [];
  let vector: Float32Array;
  try {
    vector = await pending;
  } catch (err) {
    return { hits: req.mode === 'hybrid' ? lexicalHits : lexical(), mode: 'lexical', warning: `the embedding provider failed (${(err as Error).message}): lexical results` };
  }
  const candidates = req.prefix === '' ? Math.max(want * 2, 50) : Math.min(4096, Math.max(want * 20, 200));
  const near = index.nearest(vector, req.prefix, req.mode === 'hybrid' ? Math.max(want, 50) : want, candidates).map(({ text, ...hit }) => ({ ...hit, snippet: markSnippet(text, terms) }));
  if (req.mode === 'vector') return { hits: near, mode: 'vector', warning: null };
  return { hits: fuse([lexicalHits, near], want), mode: 'hybrid', warning: null };
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
