import type { SourceItem } from '../../runtime/connector.ts';
import { sanitizeName } from '../notion/names.ts';
import type { CalendarEvent, EventTime } from './api.ts';
import { addDays, type SyncWindow } from './window.ts';

/** What an event's item keeps for later runs: enough to write agendas and find its calendar. */
export interface EventMeta {
  kind: 'event';
  calendar: string;
  folder: string;
  summary: string;
  /** `YYYY-MM-DD` (all day) or an RFC 3339 date-time. */
  start: string;
  end: string;
  allDay: boolean;
  location: string | null;
}

/** An event's source id: the same event may be in two synced calendars (an invitation and its organizer's). */
export const eventSourceId = (calendarId: string, eventId: string) => `${calendarId}/${eventId}`;

const timeOf = (t: EventTime | undefined): string | null => t?.dateTime ?? t?.date ?? null;

/** Epoch ms of a start or end (an all-day date as the start of that UTC day). */
function instant(value: string): number {
  return Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value);
}

/** Whether the event is in the window (it overlaps it); one without a start is not. */
export function inWindow(e: CalendarEvent, w: SyncWindow): boolean {
  const start = timeOf(e.start);
  if (start === null) return false;
  const end = timeOf(e.end) ?? start;
  return instant(start) < w.toMs && Math.max(instant(end), instant(start) + 1) > w.fromMs;
}

/**
 * An event as a JSON node (the event as Google gives it) at `<calendar>/<start date> <summary>.json`,
 * the start date as the event states it (its own time zone's day).
 */
export function eventItem(calendarId: string, folder: string, e: CalendarEvent): SourceItem {
  const start = timeOf(e.start)!;
  const summary = typeof e.summary === 'string' ? e.summary : '';
  const meta: EventMeta = {
    kind: 'event',
    calendar: calendarId,
    folder,
    summary,
    start,
    end: timeOf(e.end) ?? start,
    allDay: e.start?.date !== undefined && e.start.dateTime === undefined,
    location: typeof e.location === 'string' && e.location !== '' ? e.location : null,
  };
  return {
    sourceId: eventSourceId(calendarId, e.id),
    path: `${folder}/${start.slice(0, 10)} ${summary.trim() === '' ? '(no title)' : sanitizeName(summary)}.json`,
    type: 'json',
    content: e,
    // The etag changes with every change of the event; `updated` when a test double leaves it out.
    sourceVersion: e.etag ?? e.updated ?? start,
    meta: { ...meta },
  };
}

/** Longest run of days one event appears on in the agendas. */
const MAX_EVENT_DAYS = 62;

/**
 * The days (`YYYY-MM-DD`) an event takes place on, within the window: an all-day event's end date
 * is exclusive; a timed event ending at midnight does not take the next day.
 */
export function eventDays(m: EventMeta, w: SyncWindow): string[] {
  const first = m.start.slice(0, 10);
  let last = m.end.slice(0, 10);
  if (m.allDay || /T00:00(:00(\.0+)?)?/.test(m.end)) last = last > first ? addDays(last, -1) : first;
  if (last < first) last = first;
  const days: string[] = [];
  for (let d = first, n = 0; d <= last && n < MAX_EVENT_DAYS; d = addDays(d), n++) if (d >= w.from && d < w.to) days.push(d);
  return days;
}
