import type { ConnectorContext, KnownItems, PullPage, SourceChange } from '../../runtime/connector.ts';
import { sanitizeName } from '../notion/names.ts';
import { agendaItem } from './agenda.ts';
import { listEvents, type EventsPage } from './api.ts';
import { calendarConfig } from './config.ts';
import { parseCalendarCursor, serializeCalendarCursor, type CalendarCursor, type CalendarState } from './cursor.ts';
import { eventDays, eventItem, eventSourceId, inWindow, type EventMeta } from './events.ts';
import { windowOf, type SyncWindow } from './window.ts';

/** The events of the sync as the run goes: known ones, then this run's changes applied. */
type EventState = Map<string, EventMeta>;

function knownEvents(known: KnownItems): EventState {
  const state: EventState = new Map();
  for (const k of known.all()) if (k.meta.kind === 'event') state.set(k.sourceId, k.meta as unknown as EventMeta);
  return state;
}

/** A calendar's folder: its name, with its id added when another calendar of the sync has that name. */
function folderOf(summary: string, calendarId: string, taken: Map<string, string>): string {
  const base = summary.trim() === '' ? sanitizeName(calendarId) : sanitizeName(summary);
  const owner = taken.get(base.toLowerCase());
  const name = owner === undefined || owner === calendarId ? base : `${base} (${sanitizeName(calendarId)})`;
  taken.set(name.toLowerCase(), calendarId);
  return name;
}

/** One page of events as changes: upserts for events in the window, deletes for cancelled ones and those that left it. */
function pageChanges(page: EventsPage, calendarId: string, folder: string, w: SyncWindow, events: EventState, seen: Set<string> | null): SourceChange[] {
  const changes: SourceChange[] = [];
  for (const e of page.items) {
    const sourceId = eventSourceId(calendarId, e.id);
    if (e.status === 'cancelled' || !inWindow(e, w)) {
      if (events.delete(sourceId)) changes.push({ kind: 'delete', sourceId });
      continue;
    }
    const item = eventItem(calendarId, folder, e);
    seen?.add(sourceId);
    events.set(sourceId, item.meta as unknown as EventMeta);
    changes.push({ kind: 'upsert', item });
  }
  return changes;
}

/**
 * One calendar: the changes since its sync token when it has one for this window (cancelled
 * events deleted, events that left the window deleted), else the whole window (events no longer
 * listed deleted). A sync token Google no longer honours (410), or a renamed calendar (its
 * events move to the new folder), means the whole window. Returns the calendar's new state.
 */
async function* syncCalendar(
  ctx: ConnectorContext,
  calendarId: string,
  previous: CalendarState | undefined,
  w: SyncWindow,
  taken: Map<string, string>,
  events: EventState,
): AsyncGenerator<SourceChange[], CalendarState> {
  if (previous) {
    let folder: string | null = null;
    let token: string | null = null;
    let restart = false;
    for await (const page of listEvents(ctx.http, calendarId, { kind: 'changes', syncToken: previous.syncToken })) {
      if (page === null) {
        restart = true;
        break;
      }
      if (folder === null) {
        const scratch = new Map(taken);
        folder = folderOf(page.summary, calendarId, scratch);
        if (folder !== previous.folder) {
          restart = true;
          break;
        }
        taken.set(folder.toLowerCase(), calendarId);
      }
      const changes = pageChanges(page, calendarId, folder, w, events, null);
      if (changes.length) yield changes;
      token = page.nextSyncToken ?? token;
    }
    if (!restart && folder !== null && token !== null) return { syncToken: token, folder };
  }

  let folder: string | null = null;
  let token: string | null = null;
  const seen = new Set<string>();
  const window = { kind: 'window' as const, timeMin: new Date(w.fromMs).toISOString(), timeMax: new Date(w.toMs).toISOString() };
  for await (const page of listEvents(ctx.http, calendarId, window)) {
    if (page === null) continue;
    folder ??= folderOf(page.summary, calendarId, taken);
    const changes = pageChanges(page, calendarId, folder, w, events, seen);
    if (changes.length) yield changes;
    token = page.nextSyncToken ?? token;
  }
  const gone: SourceChange[] = [];
  for (const [sourceId, m] of events) {
    if (m.calendar === calendarId && !seen.has(sourceId)) {
      events.delete(sourceId);
      gone.push({ kind: 'delete', sourceId });
    }
  }
  if (gone.length) yield gone;
  return { syncToken: token ?? '', folder: folder ?? sanitizeName(calendarId) };
}

/** The agendas as the events now are: one node per day with events, none for days without. */
function agendaChanges(known: KnownItems, events: EventState, w: SyncWindow, enabled: boolean, withCalendar: boolean): SourceChange[] {
  const changes: SourceChange[] = [];
  const byDay = new Map<string, EventMeta[]>();
  if (enabled) for (const m of events.values()) for (const day of eventDays(m, w)) byDay.set(day, [...(byDay.get(day) ?? []), m]);
  for (const k of known.all()) if (k.meta.kind === 'agenda' && !byDay.has(String(k.meta.day))) changes.push({ kind: 'delete', sourceId: k.sourceId });
  for (const [day, list] of [...byDay].sort(([a], [b]) => a.localeCompare(b))) changes.push({ kind: 'upsert', item: agendaItem(day, list, withCalendar) });
  return changes;
}

/**
 * A Google Calendar pull: the events of `calendar_ids` in a window of `days_back` and
 * `days_ahead` days as JSON, at `<calendar>/<start date> <summary>.json`, and with `agenda`
 * a Markdown agenda per day (`Agenda/<date>.md`).
 *
 * The window moves with the days, which a sync token cannot follow (it keeps the first
 * request's window): each calendar is listed whole once a day, when the window has moved, and
 * through its sync token in between. The source ids are the events' own (per calendar), so a
 * full listing after an expired token (410 Gone) updates the nodes here, never duplicates them.
 */
export async function* pullGoogleCalendar(ctx: ConnectorContext, cursor: string | null): AsyncGenerator<PullPage> {
  const cfg = calendarConfig(ctx.config);
  const prev = parseCalendarCursor(cursor);
  // Pages before the last keep the cursor the run started from: a run cut short starts over.
  const startCursor = prev ? serializeCalendarCursor(prev) : null;
  const w = windowOf(Date.now(), cfg.daysBack, cfg.daysAhead);
  const sameWindow = prev !== null && prev.from === w.from && prev.to === w.to;
  const next: CalendarCursor = { v: 1, from: w.from, to: w.to, agenda: cfg.agenda, calendars: {} };
  const events = knownEvents(ctx.known);

  const dropped: SourceChange[] = [];
  for (const [sourceId, m] of events) {
    if (!cfg.calendarIds.includes(m.calendar)) {
      events.delete(sourceId);
      dropped.push({ kind: 'delete', sourceId });
    }
  }
  if (dropped.length) yield { changes: dropped, cursor: startCursor };

  const taken = new Map<string, string>();
  for (const calendarId of cfg.calendarIds) {
    const run = syncCalendar(ctx, calendarId, sameWindow ? prev.calendars[calendarId] : undefined, w, taken, events);
    for (;;) {
      const step = await run.next();
      if (step.done) {
        next.calendars[calendarId] = step.value;
        break;
      }
      yield { changes: step.value, cursor: startCursor };
    }
  }

  yield { changes: agendaChanges(ctx.known, events, w, cfg.agenda, cfg.calendarIds.length > 1), cursor: serializeCalendarCursor(next) };
}
