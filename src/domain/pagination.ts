/** A window into a list (`limit`/`offset`) and the items it selected with the list's full size. */
export interface Page {
  limit: number;
  offset: number;
}

export interface Paged<T> {
  items: T[];
  total: number;
}

/**
 * The number of items a list answers: `limit` as an integer between 1 and `max`, `fallback`
 * when absent or not a number. The one clamp of every list that takes a limit from a caller.
 */
export function clampLimit(limit: number | undefined, fallback: number, max = 1000): number {
  const n = limit === undefined || !Number.isFinite(limit) ? fallback : Math.trunc(limit);
  return Math.min(Math.max(n, 1), max);
}
