import type { SourceHttp } from '../../runtime/connector.ts';

/** Google Calendar API v3's public address (paths start with /calendar/v3); `CNS_GOOGLE_CALENDAR_API_URL` replaces it. */
export const CALENDAR_API_BASE = 'https://www.googleapis.com';

/** An event's start or end: `date` for all-day events, `dateTime` (RFC 3339 with offset) otherwise. */
export interface EventTime {
  date?: string;
  dateTime?: string;
  timeZone?: string;
}

/** An event as events.list gives it (only what the connector reads; the node keeps the whole). */
export interface CalendarEvent {
  id: string;
  etag?: string;
  status?: 'confirmed' | 'tentative' | 'cancelled';
  summary?: string;
  location?: string;
  start?: EventTime;
  end?: EventTime;
  updated?: string;
  [key: string]: unknown;
}

/** One answer page of events.list. */
export interface EventsPage {
  /** The calendar's name. */
  summary: string;
  items: CalendarEvent[];
  /** On the last page only. */
  nextSyncToken: string | null;
}

/** Google's largest events.list page. */
const PAGE_SIZE = 2_500;

export type ListMode = { kind: 'window'; timeMin: string; timeMax: string } | { kind: 'changes'; syncToken: string };

/**
 * A calendar's events, page by page: a window (recurring events expanded into their instances,
 * `singleEvents`), or the changes since a sync token. Google refuses timeMin/timeMax with a
 * sync token (the token carries the first request's restrictions), so only the first listing
 * names the window. Yields null instead of a page when Google no longer honours the sync
 * token (410 Gone, `fullSyncRequired`): the caller lists the window again.
 */
export async function* listEvents(http: SourceHttp, calendarId: string, mode: ListMode): AsyncGenerator<EventsPage | null> {
  let pageToken: string | undefined;
  do {
    const res = await http.request({
      url: `/calendar/v3/calendars/${encodeURIComponent(calendarId)}/events`,
      query: {
        singleEvents: true,
        maxResults: PAGE_SIZE,
        ...(mode.kind === 'window' ? { timeMin: mode.timeMin, timeMax: mode.timeMax } : { syncToken: mode.syncToken }),
        pageToken,
      },
      accept: mode.kind === 'changes' ? [410] : undefined,
    });
    if (res.status === 410) {
      yield null;
      return;
    }
    const body = res.json<{ summary?: string; items?: CalendarEvent[]; nextPageToken?: string; nextSyncToken?: string }>();
    pageToken = body.nextPageToken || undefined;
    yield { summary: body.summary ?? calendarId, items: body.items ?? [], nextSyncToken: body.nextSyncToken ?? null };
  } while (pageToken);
}
