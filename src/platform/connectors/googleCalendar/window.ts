const DAY_MS = 86_400_000;

/** The span of days a sync keeps: UTC dates, `to` exclusive, with the instants Google is asked with. */
export interface SyncWindow {
  from: string;
  to: string;
  fromMs: number;
  toMs: number;
}

/** `YYYY-MM-DD` of an instant (UTC). */
export const utcDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The day after `date` (`YYYY-MM-DD`), or `n` days later. */
export const addDays = (date: string, n = 1): string => utcDate(Date.parse(`${date}T00:00:00Z`) + n * DAY_MS);

/** From the start of the day `daysBack` ago to the end of the day `daysAhead` from now (whole UTC days). */
export function windowOf(now: number, daysBack: number, daysAhead: number): SyncWindow {
  const from = utcDate(now - daysBack * DAY_MS);
  const to = utcDate(now + (daysAhead + 1) * DAY_MS);
  return { from, to, fromMs: Date.parse(`${from}T00:00:00Z`), toMs: Date.parse(`${to}T00:00:00Z`) };
}
