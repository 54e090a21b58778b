/** Per calendar: its sync token and the folder its events fill (a new name means a full listing). Without a token: a full listing. */
export interface CalendarState {
  syncToken: string;
  folder: string;
}

/**
 * The cursor of a Google Calendar sync: the window (UTC dates, `to` exclusive) the sync tokens
 * were taken for, whether agendas are written, and each calendar's state.
 */
export interface CalendarCursor {
  v: 1;
  from: string;
  to: string;
  agenda: boolean;
  calendars: Record<string, CalendarState>;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function parseCalendarCursor(cursor: string | null): CalendarCursor | null {
  if (!cursor) return null;
  try {
    const c = JSON.parse(cursor) as Partial<CalendarCursor>;
    if (c.v !== 1 || typeof c.from !== 'string' || !DATE.test(c.from) || typeof c.to !== 'string' || !DATE.test(c.to) || !c.calendars || typeof c.calendars !== 'object') return null;
    const calendars: Record<string, CalendarState> = {};
    for (const [id, s] of Object.entries(c.calendars)) if (s && typeof s.syncToken === 'string' && s.syncToken !== '' && typeof s.folder === 'string') calendars[id] = { syncToken: s.syncToken, folder: s.folder };
    return { v: 1, from: c.from, to: c.to, agenda: c.agenda === true, calendars };
  } catch {
    // An unreadable cursor means a full pull, never a failed sync.
    return null;
  }
}

export const serializeCalendarCursor = (c: CalendarCursor): string => JSON.stringify(c);
