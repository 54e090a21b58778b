/** Share of the interval by which each run time is moved at random, so that syncs set up together drift apart. */
const JITTER = 0.1;

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The first run of a sync just set to an interval: somewhere in its first interval, so that many
 * syncs switched on together do not all run at the same moment.
 */
export function firstRunAt(now: number, intervalS: number): string {
  return iso(now + Math.round(Math.random() * intervalS * 1000));
}

/**
 * The run after the one due at `due`: one interval later, give or take half the jitter. After a
 * stop longer than an interval the missed runs are not made up: one runs now, the next an
 * interval from now.
 */
export function nextRunAt(due: number, now: number, intervalS: number): string {
  const interval = intervalS * 1000;
  const next = due + interval + Math.round((Math.random() - 0.5) * JITTER * interval);
  return iso(next > now ? next : now + interval);
}
