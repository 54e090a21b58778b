/**
 * Fuzzy matching of file paths for quick open: the query's characters in order (case-ignored),
 * preferably all in the file's name, in runs, at the start of words. Written to answer a
 * keystroke on 100,000 paths in a few milliseconds: a cheap in-order test first (indexOf per
 * character), the scoring only for paths that pass, and only the best `limit` kept.
 */

export interface Match {
  /** Index of the path in the list searched. */
  index: number;
  score: number;
  /** Positions of the matched characters in the path (for highlighting). */
  positions: number[];
}

/** Scores `q` (lower case, no spaces) against `path` (and `lower`, its lower case); null when the characters are not all there in order. */
export function scorePath(q: string, path: string, lower: string): { score: number; positions: number[] } | null {
  const positions: number[] = [];
  const score = bestScore(q, path, lower, positions);
  return Number.isNaN(score) ? null : { score, positions };
}

/** The score (NaN: no match), filling `positions` when given: the name alone is tried first, a match there beats one spread over folders. */
function bestScore(q: string, path: string, lower: string, positions?: number[]): number {
  const nameStart = lower.lastIndexOf('/') + 1;
  const inName = matchFrom(q, path, lower, nameStart, positions);
  if (!Number.isNaN(inName)) return inName + 40;
  if (positions) positions.length = 0;
  return matchFrom(q, path, lower, 0, positions);
}

function matchFrom(q: string, path: string, lower: string, from: number, positions?: number[]): number {
  let score = 0;
  let at = from;
  let prev = -2;
  for (let i = 0; i < q.length; i++) {
    const c = q[i]!;
    let found = lower.indexOf(c, at);
    if (found < 0) return NaN;
    // A word start a little further on is worth more than a letter in the middle of a word.
    if (!isWordStart(path, found) && prev !== found - 1) {
      const next = nextWordStart(path, lower, c, found + 1);
      if (next >= 0 && next - found < 24 && restInOrder(q, i + 1, lower, next + 1)) found = next;
    }
    score += 1;
    if (found === prev + 1) score += 6;
    if (isWordStart(path, found)) score += 8;
    score -= Math.min(3, (found - at) * 0.1);
    positions?.push(found);
    prev = found;
    at = found + 1;
  }
  // Shorter paths first among equals; an exact name ranks highest.
  score -= path.length * 0.02;
  if (from > 0 && lower.length - from === q.length) score += 20;
  return score;
}

function isWordStart(path: string, i: number): boolean {
  if (i === 0) return true;
  const before = path[i - 1]!;
  if (before === '/' || before === '-' || before === '_' || before === '.' || before === ' ') return true;
  const c = path[i]!;
  return c >= 'A' && c <= 'Z' && before >= 'a' && before <= 'z';
}

function nextWordStart(path: string, lower: string, c: string, from: number): number {
  for (let i = lower.indexOf(c, from); i >= 0; i = lower.indexOf(c, i + 1)) if (isWordStart(path, i)) return i;
  return -1;
}

/** Whether q[from..] still occurs in order in `lower` from position `at` (so a jump ahead never loses the match). */
function restInOrder(q: string, from: number, lower: string, at: number): boolean {
  for (let i = from; i < q.length; i++) {
    at = lower.indexOf(q[i]!, at);
    if (at < 0) return false;
    at++;
  }
  return true;
}

/** Whether every character of `q` occurs in `lower` in order: the cheap test before scoring. */
export function inOrder(q: string, lower: string): boolean {
  let at = 0;
  for (let i = 0; i < q.length; i++) {
    at = lower.indexOf(q[i]!, at);
    if (at < 0) return false;
    at++;
  }
  return true;
}

/** Normalizes what was typed: lower case, no spaces. */
export function normalizeQuery(text: string): string {
  return text.toLowerCase().replace(/\s+/g, '');
}

/**
 * The best `limit` matches of `q` among `paths` (with `lower`, their lower case), best first,
 * looking only at `among` (indexes) when given: the survivors of a shorter query this one extends.
 * Returns the matches and every index that passed (to narrow the next keystroke's search).
 */
export function findPaths(q: string, paths: readonly string[], lower: readonly string[], limit: number, among?: readonly number[]): { matches: Match[]; passed: number[] } {
  const passed: number[] = [];
  const best: Match[] = [];
  const consider = (i: number) => {
    if (!inOrder(q, lower[i]!)) return;
    passed.push(i);
    const score = bestScore(q, paths[i]!, lower[i]!);
    if (Number.isNaN(score)) return;
    if (best.length === limit && score <= best[best.length - 1]!.score) return;
    // Insertion into a short sorted list: `limit` is small.
    let at = best.length;
    while (at > 0 && best[at - 1]!.score < score) at--;
    best.splice(at, 0, { index: i, score, positions: [] });
    if (best.length > limit) best.pop();
  };
  if (among) for (const i of among) consider(i);
  else for (let i = 0; i < paths.length; i++) consider(i);
  // Positions (for highlighting) only for what is shown.
  for (const m of best) bestScore(q, paths[m.index]!, lower[m.index]!, m.positions);
  return { matches: best, passed };
}
