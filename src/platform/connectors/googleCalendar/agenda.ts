import { createHash } from 'node:crypto';
import type { SourceItem } from '../../runtime/connector.ts';
import type { EventMeta } from './events.ts';

/** The folder of the agendas, beside the calendars' folders. */
export const AGENDA_FOLDER = 'Agenda';

export const agendaSourceId = (day: string) => `agenda/${day}`;

/** `HH:MM` of a date-time as it is written (the event's own offset), on `day`; `…` when it is on another day. */
const clock = (value: string, day: string): string => (value.slice(0, 10) === day ? value.slice(11, 16) : '…');

function line(m: EventMeta, day: string, withCalendar: boolean): string {
  const when = m.allDay ? 'All day' : `${clock(m.start, day)}–${clock(m.end, day)}`;
  const what = m.summary.trim() === '' ? '(no title)' : m.summary.replace(/\s+/g, ' ').trim();
  return `- ${when} ${what}${withCalendar ? ` (${m.folder})` : ''}${m.location ? ` — ${m.location.replace(/\s+/g, ' ')}` : ''}`;
}

/**
 * A day's agenda as Markdown: its date as a heading, then one line per event, all-day events
 * first, then by start time; the calendar named when the sync has several.
 */
export function agendaItem(day: string, events: EventMeta[], withCalendar: boolean): SourceItem {
  const heading = new Date(`${day}T00:00:00Z`).toLocaleDateString('en-GB', { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
  const sorted = [...events].sort((a, b) => Number(b.allDay) - Number(a.allDay) || Date.parse(a.start) - Date.parse(b.start) || a.summary.localeCompare(b.summary));
  const content = `# ${heading}\n\n${sorted.map((m) => line(m, day, withCalendar)).join('\n')}\n`;
  return {
    sourceId: agendaSourceId(day),
    path: `${AGENDA_FOLDER}/${day}.md`,
    type: 'markdown',
    content,
    sourceVersion: createHash('sha256').update(content).digest('hex').slice(0, 16),
    meta: { kind: 'agenda', day },
  };
}
