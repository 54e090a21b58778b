import type { ChunkHit } from './searchIndex.ts';

/** The constant of reciprocal-rank fusion (Cormack et al.): damps the weight of the very first ranks. */
export const RRF_K = 60;

/**
 * Reciprocal-rank fusion of ranked lists: each chunk scores the sum of 1 / (RRF_K + rank) over
 * the lists it appears in, so neither BM25's nor cosine's scale matters, only the orders.
 */
export function fuse(lists: ChunkHit[][], topK: number): ChunkHit[] {
  const byId = new Map<number, { hit: ChunkHit; score: number }>();
  for (const list of lists) {
    list.forEach((hit, rank) => {
      const entry = byId.get(hit.chunkId);
      const add = 1 / (RRF_K + rank + 1);
      if (entry) {
        entry.score += add;
        // Prefer the lexical snippet (it has the matched terms marked by FTS5).
        if (!entry.hit.snippet.includes('**') && hit.snippet.includes('**')) entry.hit = { ...entry.hit, snippet: hit.snippet };
      } else byId.set(hit.chunkId, { hit, score: add });
    });
  }
  return [...byId.values()]
    .sort((a, b) => b.score - a.score)
    .slice(0, topK)
    .map(({ hit, score }) => ({ ...hit, score }));
}

/** Words of a query as FTS5 sees them (letters and digits); each is quoted, so no query syntax leaks through. */
export function queryTerms(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  return [...new Set(words)].slice(0, 32);
}

/** FTS5 expressions for chunks with every word, and (for more than one word) with any of them. */
export function ftsQueries(terms: string[]): { all: string; any: string | null } {
  const quoted = terms.map((t) => `"${t}"`);
  return { all: quoted.join(' '), any: quoted.length > 1 ? quoted.join(' OR ') : null };
}

/** A snippet for a chunk found by meaning only: the passage around the first query word, words marked. */
export function markSnippet(text: string, terms: string[], width = 200): string {
  const lower = text.toLowerCase();
  let at = -1;
  for (const t of terms) {
    const i = lower.indexOf(t);
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  const start = at < 0 ? 0 : Math.max(0, at - width / 4);
  let s = text.slice(start, start + width);
  if (start > 0) s = '…' + s;
  if (start + width < text.length) s += '…';
  if (terms.length === 0) return s;
  const re = new RegExp(`(${terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`, 'giu');
  return s.replace(re, '**$1**');
}
