import { createHash } from 'node:crypto';

/**
 * Rendezvous (highest random weight) hashing: the candidate with the highest hash of
 * (key, candidate). Every process that knows the same candidates picks the same one, and when a
 * candidate leaves only its keys move.
 */
export function rendezvous(key: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestScore = -1n;
  for (const c of candidates) {
    const score = createHash('sha1').update(key).update('\0').update(c).digest().readBigUInt64BE(0);
    if (score > bestScore) {
      best = c;
      bestScore = score;
    }
  }
  return best;
}

/** The first `n` candidates by the same score as rendezvous(): the nodes that hold a key's copies, best first. */
export function rendezvousRank(key: string, candidates: readonly string[], n: number): string[] {
  const score = (c: string) => createHash('sha1').update(key).update('\0').update(c).digest().readBigUInt64BE(0);
  return candidates
    .map((c) => ({ c, s: score(c) }))
    .sort((a, b) => (a.s === b.s ? 0 : a.s > b.s ? -1 : 1))
    .slice(0, Math.max(0, n))
    .map((x) => x.c);
}
