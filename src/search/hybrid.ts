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

/** Words of a snippet: FTS5's `unicode61` tokenizer splits at anything but letters and digits. */
const WORD = /[\p{L}\p{N}]+/gu;
const SNIPPET_WORDS = 24;

/**
 * Whether a word of the text matches a query term as FTS5's porter stemming would, closely enough
 * to mark it: the same word, or one a prefix of the other sharing at least four letters and all
 * but two of the shorter ("search" and "searching", "policy" and "policies", not "the" and "them").
 */
export function matchesTerm(word: string, term: string): boolean {
  if (word === term) return true;
  const [short, long] = word.length <= term.length ? [word, term] : [term, word];
  return short.length >= 4 && long.startsWith(short.slice(0, Math.max(4, short.length - 2)));
}

/**
 * Where a mark would corrupt the chunk's own Markdown: inside its `**strong**` spans (already
 * bold: `**` inside would close them, and `****` means nothing) and inside code (`…`, fences),
 * where the asterisks would show as text.
 */
function unmarkable(text: string): [number, number][] {
  const ranges: [number, number][] = [];
  for (const m of text.matchAll(/(`+)[\s\S]*?[^`]\1(?!`)/g)) ranges.push([m.index!, m.index! + m[0].length]);
  for (const m of text.matchAll(/\*\*(?=[^\s*])[\s\S]*?[^\s*]\*\*/g)) ranges.push([m.index! + 2, m.index! + m[0].length - 2]);
  return ranges;
}

/** A word that touches a `**` of the text (an unpaired one included) is left as written. */
const touchesStrong = (text: string, at: number, end: number) => text.startsWith('**', at - 2) || text.startsWith('**', end);

/**
 * The passage of a chunk to show for a query: the window of 24 words with the most distinct query
 * terms (then the most matches, then the most context around them), the matching words marked `**like this**`,
 * `…` where the chunk goes on. A chunk found by meaning alone shows its beginning. The marks only
 * add `**` pairs around whole words: a match already bold or in code stays as the text has it.
 */
export function bestSnippet(text: string, terms: string[]): string {
  const words = [...text.matchAll(WORD)].map((m) => ({ at: m.index!, end: m.index! + m[0].length, term: terms.findIndex((t) => matchesTerm(m[0].toLowerCase(), t)) }));
  if (words.length === 0) return text;
  let best = 0;
  let bestScore = -1;
  for (let start = 0; start < Math.max(1, words.length - SNIPPET_WORDS + 1); start++) {
    const window = words.slice(start, start + SNIPPET_WORDS);
    const hits = window.flatMap((w, i) => (w.term >= 0 ? [i] : []));
    // Distinct terms first, then matches, then matches away from the window's edges (context on both sides).
    const margin = hits.length ? Math.min(10, hits[0]!, window.length - 1 - hits[hits.length - 1]!) : 0;
    const score = new Set(hits.map((i) => window[i]!.term)).size * 10_000 + hits.length * 100 + margin;
    if (score > bestScore) {
      bestScore = score;
      best = start;
    }
  }
  const shown = words.slice(best, best + SNIPPET_WORDS);
  // From the chunk's start (or to its end) when the window reaches it, so leading and trailing punctuation stays.
  const from = best === 0 ? 0 : shown[0]!.at;
  const to = best + SNIPPET_WORDS >= words.length ? text.length : shown[shown.length - 1]!.end;
  let out = from > 0 ? '…' : '';
  let at = from;
  const keep = unmarkable(text);
  for (const w of shown) {
    if (w.term < 0 || touchesStrong(text, w.at, w.end) || keep.some(([a, b]) => w.at < b && w.end > a)) continue;
    out += text.slice(at, w.at) + '**' + text.slice(w.at, w.end) + '**';
    at = w.end;
  }
  return out + text.slice(at, to) + (to < text.length ? '…' : '');
}
