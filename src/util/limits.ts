/**
 * The number of items a list answers: `limit` as an integer between 1 and `max`, `fallback`
 * when absent or not a number. The one clamp of every list that takes a limit from a caller.
 */
export function clampLimit(limit: number | undefined, fallback: number, max = 1000): number {
  const n = limit === undefined || !Number.isFinite(limit) ? fallback : Math.trunc(limit);
  return Math.min(Math.max(n, 1), max);
}
