import { invalidField } from '../../../errors/domainError.ts';
import type { SyncConfig } from '../../runtime/connector.ts';

export interface CalendarConfig {
  /** Calendar ids (`primary`, an address, `…@group.calendar.google.com`), in the order given. */
  calendarIds: string[];
  daysBack: number;
  daysAhead: number;
  /** A Markdown agenda per day beside the events. */
  agenda: boolean;
}

export const DEFAULT_DAYS_BACK = 30;
export const DEFAULT_DAYS_AHEAD = 90;
/** Ten years either way: a window is listed in full once a day, so it should stay a window. */
const MAX_DAYS = 3_650;
const MAX_CALENDARS = 50;

function list(v: unknown): string[] {
  const raw = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : [];
  return raw.filter((x): x is string => typeof x === 'string').map((x) => x.trim()).filter((x) => x !== '');
}

function days(v: unknown, fallback: number): number {
  if (v === undefined || v === null || v === '') return fallback;
  const n = Number(v);
  return Number.isInteger(n) && n >= 0 && n <= MAX_DAYS ? n : fallback;
}

export function calendarConfig(config: SyncConfig): CalendarConfig {
  const ids = [...new Set(list(config.calendar_ids))];
  return {
    calendarIds: ids.length ? ids : ['primary'],
    daysBack: days(config.days_back, DEFAULT_DAYS_BACK),
    daysAhead: days(config.days_ahead, DEFAULT_DAYS_AHEAD),
    agenda: config.agenda === true || config.agenda === 'true',
  };
}

export function validateCalendarConfig(config: SyncConfig): void {
  for (const field of ['days_back', 'days_ahead'] as const) {
    const v = config[field];
    if (v === undefined || v === null || v === '') continue;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > MAX_DAYS) throw invalidField(field, `${field} is a whole number of days from 0 to ${MAX_DAYS}`);
  }
  const ids = list(config.calendar_ids);
  if (ids.length > MAX_CALENDARS) throw invalidField('calendar_ids', `at most ${MAX_CALENDARS} calendars per sync`);
  const bad = ids.find((id) => id.length > 255 || /[\s/]/.test(id));
  if (bad !== undefined) throw invalidField('calendar_ids', `"${bad}" is not a calendar id (primary, an email address, or an id from the calendar's settings)`);
}
