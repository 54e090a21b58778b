import test from 'ava';
import nock from 'nock';
import { googleCalendarConnector } from '../../../src/platform/connectors/googleCalendar.ts';
import { addDays, utcDate } from '../../../src/platform/connectors/googleCalendar/window.ts';
import type { SourceChange, SourceItem } from '../../../src/platform/runtime/connector.ts';
import { harness, pullAll, TOKEN } from './fixtures/github/connectorHarness.ts';
import { CALENDAR_HOST, FakeCalendar } from './fixtures/google/fakeCalendar.ts';

// The Google Calendar connector over the runtime's real SourceHttp against calendars on nock
// (FakeCalendar: Calendar API v3's wire format). Days are relative to today, as the window is.

test.before(() => {
  nock.disableNetConnect();
});
test.afterEach.always(() => {
  nock.cleanAll();
});

const TEAM = 'c_team01@group.calendar.google.com';
const upserts = (changes: SourceChange[]) => Object.fromEntries(changes.flatMap((c) => (c.kind === 'upsert' ? [[c.item.path, c.item]] : []))) as Record<string, SourceItem>;
const deletes = (changes: SourceChange[]) => changes.flatMap((c) => (c.kind === 'delete' ? [c.sourceId] : [])).sort();
const today = () => utcDate(Date.now());
const day = (n: number) => addDays(today(), n);
const lists = (fake: FakeCalendar) => fake.seen.filter((s) => s.path.endsWith('/events'));

/** A personal calendar and a team calendar, with events inside and outside the default window (30 days back, 90 ahead). */
function calendars() {
  const fake = new FakeCalendar();
  fake.addCalendar('primary', 'ada.lovelace@example.com');
  fake.addCalendar(TEAM, 'Team');
  const standup = fake.add('primary', { summary: 'Standup', start: `${day(0)}T09:30:00+01:00`, end: `${day(0)}T09:45:00+01:00` });
  const offsite = fake.add('primary', { summary: 'Offsite', start: day(2), end: day(4), location: 'Lake house' });
  const old = fake.add('primary', { summary: 'Long ago', start: `${day(-40)}T10:00:00Z`, end: `${day(-40)}T11:00:00Z` });
  const far = fake.add('primary', { summary: 'Far ahead', start: `${day(100)}T10:00:00Z`, end: `${day(100)}T11:00:00Z` });
  const review = fake.add(TEAM, { summary: 'Design review', start: `${day(1)}T14:00:00Z`, end: `${day(1)}T15:00:00Z`, location: 'Room 4' });
  const untitled = fake.add(TEAM, { summary: '', start: `${day(-3)}T08:00:00Z`, end: `${day(-3)}T08:30:00Z` });
  fake.intercept();
  return { fake, standup, offsite, old, far, review, untitled };
}

const config = { path: 'cal', calendar_ids: ['primary', TEAM] };

test.serial('first pull: every event of each calendar in the window as JSON (the event as Google gives it), a folder per calendar; window asked once, paged', async (t) => {
  const c = calendars();
  c.fake.pageSize = 1;
  const h = harness(googleCalendarConnector, CALENDAR_HOST, config);
  const run = await pullAll(googleCalendarConnector, h, null);
  const items = upserts(run.changes);
  t.deepEqual(Object.keys(items).sort(), [
    `Team/${day(-3)} (no title).json`,
    `Team/${day(1)} Design review.json`,
    `ada.lovelace@example.com/${day(0)} Standup.json`,
    `ada.lovelace@example.com/${day(2)} Offsite.json`,
  ]);
  const standup = items[`ada.lovelace@example.com/${day(0)} Standup.json`]!;
  t.is(standup.sourceId, `primary/${c.standup}`);
  t.is(standup.type, 'json');
  t.deepEqual(standup.content, c.fake.calendars.get('primary')!.events.get(c.standup)!.event);
  t.like(standup.meta, { kind: 'event', calendar: 'primary', folder: 'ada.lovelace@example.com', summary: 'Standup', allDay: false, location: null });
  t.like(items[`ada.lovelace@example.com/${day(2)} Offsite.json`]!.meta, { allDay: true, start: day(2), end: day(4), location: 'Lake house' });
  t.is(items[`Team/${day(1)} Design review.json`]!.sourceId, `${TEAM}/${c.review}`);
  t.deepEqual(deletes(run.changes), []);

  const asked = lists(c.fake);
  t.deepEqual([...new Set(asked.map((s) => s.path))], ['/calendar/v3/calendars/primary/events', `/calendar/v3/calendars/${encodeURIComponent(TEAM)}/events`]);
  for (const s of asked) {
    t.like(s.query, { singleEvents: 'true', maxResults: '2500', timeMin: `${day(-30)}T00:00:00.000Z`, timeMax: `${day(91)}T00:00:00.000Z` });
    t.is(s.query.syncToken, undefined);
    t.is(s.headers.authorization, `Bearer ${TOKEN}`);
  }
  t.deepEqual(asked.filter((s) => s.path.includes('primary')).map((s) => s.query.pageToken), [undefined, '1']);
  const cursor = JSON.parse(run.cursor!);
  t.like(cursor, { v: 1, from: day(-30), to: day(91), agenda: false });
  t.deepEqual(Object.keys(cursor.calendars), ['primary', TEAM]);
  t.is(cursor.calendars.primary.folder, 'ada.lovelace@example.com');
  t.truthy(cursor.calendars[TEAM].syncToken);
  t.is(h.counters.httpCalls, c.fake.seen.length);
});

test.serial('incremental: only the sync token is sent; a changed event moves (same id), a new one comes, a cancelled one and one moved out of the window are deleted', async (t) => {
  const c = calendars();
  const h = harness(googleCalendarConnector, CALENDAR_HOST, config);
  const first = await pullAll(googleCalendarConnector, h, null);
  const tokens = JSON.parse(first.cursor!).calendars;

  c.fake.update('primary', c.standup, { summary: 'Daily standup' });
  const lunch = c.fake.add('primary', { summary: 'Lunch', start: `${day(5)}T12:00:00Z`, end: `${day(5)}T13:00:00Z` });
  c.fake.cancel(TEAM, c.review);
  c.fake.update(TEAM, c.untitled, { start: { dateTime: `${day(-60)}T08:00:00Z` }, end: { dateTime: `${day(-60)}T09:00:00Z` } });
  c.fake.update('primary', c.far, { summary: 'Still far' });
  c.fake.seen.length = 0;
  const run = await pullAll(googleCalendarConnector, h, first.cursor);

  for (const s of lists(c.fake)) {
    t.is(s.query.timeMin, undefined, 'Google refuses a window with a sync token');
    t.is(s.query.timeMax, undefined);
    t.is(s.query.singleEvents, 'true');
  }
  t.deepEqual(lists(c.fake).map((s) => s.query.syncToken), [tokens.primary.syncToken, tokens[TEAM].syncToken]);
  const items = upserts(run.changes);
  t.deepEqual(Object.keys(items).sort(), [`ada.lovelace@example.com/${day(0)} Daily standup.json`, `ada.lovelace@example.com/${day(5)} Lunch.json`]);
  t.is(items[`ada.lovelace@example.com/${day(0)} Daily standup.json`]!.sourceId, `primary/${c.standup}`);
  t.is(items[`ada.lovelace@example.com/${day(5)} Lunch.json`]!.sourceId, `primary/${lunch}`);
  t.deepEqual(deletes(run.changes), [`${TEAM}/${c.review}`, `${TEAM}/${c.untitled}`].sort());
  t.false(h.known.items.has(`primary/${c.far}`), 'a change outside the window is not kept');
  t.not(JSON.parse(run.cursor!).calendars.primary.syncToken, tokens.primary.syncToken);

  // Nothing changed: one call per calendar, nothing written.
  c.fake.seen.length = 0;
  const quiet = await pullAll(googleCalendarConnector, h, run.cursor);
  t.is(c.fake.seen.length, 2);
  t.deepEqual(quiet.changes, []);
});

test.serial('a sync token Google no longer honours (410 Gone) is a full listing of the window: the same source ids, the vanished deleted', async (t) => {
  const c = calendars();
  const h = harness(googleCalendarConnector, CALENDAR_HOST, config);
  const first = await pullAll(googleCalendarConnector, h, null);
  const before = new Map([...h.known.items].map(([id, k]) => [id, k.path]));

  c.fake.cancel('primary', c.offsite);
  c.fake.expireTokens();
  c.fake.seen.length = 0;
  const run = await pullAll(googleCalendarConnector, h, first.cursor);
  const primary = lists(c.fake).filter((s) => s.path.includes('primary'));
  t.is(primary[0]!.query.syncToken, JSON.parse(first.cursor!).calendars.primary.syncToken);
  t.is(primary[1]!.query.syncToken, undefined);
  t.is(primary[1]!.query.timeMin, `${day(-30)}T00:00:00.000Z`);
  t.deepEqual(deletes(run.changes), [`primary/${c.offsite}`]);
  const ids = run.changes.flatMap((ch) => (ch.kind === 'upsert' ? [ch.item.sourceId] : [])).sort();
  t.deepEqual(ids, [`primary/${c.standup}`, `${TEAM}/${c.review}`, `${TEAM}/${c.untitled}`].sort());
  for (const [id, k] of h.known.items) t.is(k.path, before.get(id)!);
  t.is(h.known.size, 3);
});

test.serial('the window moves with the days: a cursor of yesterday\'s window lists the window again, and what left it is deleted', async (t) => {
  const c = calendars();
  const h = harness(googleCalendarConnector, CALENDAR_HOST, { ...config, days_back: 3 });
  const first = await pullAll(googleCalendarConnector, h, null);
  t.truthy(h.known.get(`${TEAM}/${c.untitled}`), 'three days ago is inside a three-day window');
  // Yesterday's run of a two-day window: it started a day earlier, and held the event of three days ago.
  const yesterday = { ...JSON.parse(first.cursor!), from: day(-3), to: day(90) };
  c.fake.seen.length = 0;
  const now = harness(googleCalendarConnector, CALENDAR_HOST, { ...config, days_back: 2 }, h.known);
  const run = await pullAll(googleCalendarConnector, now, JSON.stringify(yesterday));
  t.is(lists(c.fake).length, 2);
  t.true(lists(c.fake).every((s) => s.query.syncToken === undefined && s.query.timeMin === `${day(-2)}T00:00:00.000Z`));
  t.deepEqual(deletes(run.changes), [`${TEAM}/${c.untitled}`]);
  t.like(JSON.parse(run.cursor!), { from: day(-2), to: day(91) });
});

test.serial('agenda: a Markdown agenda per day with events (all-day first, then by time, the calendar named); updated and removed as events change', async (t) => {
  const c = calendars();
  c.fake.add('primary', { summary: 'Early call', start: `${day(0)}T07:00:00+01:00`, end: `${day(0)}T07:30:00+01:00` });
  c.fake.add(TEAM, { summary: 'Team day', start: day(0), end: day(1) });
  const h = harness(googleCalendarConnector, CALENDAR_HOST, { ...config, agenda: true });
  const first = await pullAll(googleCalendarConnector, h, null);
  const items = upserts(first.changes);
  const agendas = Object.keys(items).filter((p) => p.startsWith('Agenda/')).sort();
  t.deepEqual(agendas, [day(-3), day(0), day(1), day(2), day(3)].map((d) => `Agenda/${d}.md`), 'the offsite takes two days, its end date excluded');
  const heading = new Date(`${day(0)}T00:00:00Z`).toLocaleDateString('en-GB', { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
  t.is(
    items[`Agenda/${day(0)}.md`]!.content,
    `# ${heading}\n\n- All day Team day (Team)\n- 07:00–07:30 Early call (ada.lovelace@example.com)\n- 09:30–09:45 Standup (ada.lovelace@example.com)\n`,
  );
  t.is(items[`Agenda/${day(1)}.md`]!.content, `# ${new Date(`${day(1)}T00:00:00Z`).toLocaleDateString('en-GB', { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' })}\n\n- 14:00–15:00 Design review (Team) — Room 4\n`);
  t.is(items[`Agenda/${day(1)}.md`]!.sourceId, `agenda/${day(1)}`);

  c.fake.cancel(TEAM, c.review);
  c.fake.update('primary', c.standup, { summary: 'Standup (short)' });
  const next = await pullAll(googleCalendarConnector, h, first.cursor);
  t.true(deletes(next.changes).includes(`agenda/${day(1)}`), 'a day left without events loses its agenda');
  const changed = upserts(next.changes);
  t.regex(String(changed[`Agenda/${day(0)}.md`]!.content), /09:30–09:45 Standup \(short\)/);
  // Unchanged days are offered with their old version: the runtime writes nothing for them.
  t.is(changed[`Agenda/${day(2)}.md`]!.sourceVersion, items[`Agenda/${day(2)}.md`]!.sourceVersion);

  const off = harness(googleCalendarConnector, CALENDAR_HOST, config, h.known);
  const after = await pullAll(googleCalendarConnector, off, next.cursor);
  t.deepEqual(deletes(after.changes), [day(-3), day(0), day(2), day(3)].map((d) => `agenda/${d}`));
});

test.serial('a calendar dropped from the config loses its events; a renamed calendar is listed again and its events move', async (t) => {
  const c = calendars();
  const h = harness(googleCalendarConnector, CALENDAR_HOST, config);
  const first = await pullAll(googleCalendarConnector, h, null);

  c.fake.calendars.get(TEAM)!.summary = 'Platform team';
  c.fake.seen.length = 0;
  const renamed = await pullAll(googleCalendarConnector, h, first.cursor);
  const team = lists(c.fake).filter((s) => s.path.includes('team01'));
  t.is(team.length, 2, 'the changes, then the window');
  t.truthy(team[1]!.query.timeMin);
  t.deepEqual(Object.keys(upserts(renamed.changes)).sort(), [`Platform team/${day(-3)} (no title).json`, `Platform team/${day(1)} Design review.json`]);
  t.is(JSON.parse(renamed.cursor!).calendars[TEAM].folder, 'Platform team');

  const only = harness(googleCalendarConnector, CALENDAR_HOST, { path: 'cal' }, h.known);
  const run = await pullAll(googleCalendarConnector, only, renamed.cursor);
  t.deepEqual(deletes(run.changes), [`${TEAM}/${c.review}`, `${TEAM}/${c.untitled}`].sort());
  t.deepEqual(Object.keys(JSON.parse(run.cursor!).calendars), ['primary'], 'calendar_ids defaults to primary');
});

test.serial('two calendars of one name get separate folders', async (t) => {
  const fake = new FakeCalendar();
  fake.addCalendar('primary', 'Work');
  fake.addCalendar(TEAM, 'Work');
  fake.add('primary', { summary: 'A', start: `${day(0)}T10:00:00Z`, end: `${day(0)}T11:00:00Z` });
  fake.add(TEAM, { summary: 'B', start: `${day(0)}T10:00:00Z`, end: `${day(0)}T11:00:00Z` });
  fake.intercept();
  const run = await pullAll(googleCalendarConnector, harness(googleCalendarConnector, CALENDAR_HOST, config), null);
  t.deepEqual(Object.keys(upserts(run.changes)).sort(), [`Work (${TEAM})/${day(0)} B.json`, `Work/${day(0)} A.json`]);
});

test.serial('rate limits: 403 rateLimitExceeded and 429 wait as Google asks, then the run goes on', async (t) => {
  const c = calendars();
  c.fake.interrupts.push(
    { path: /primary/, status: 403, headers: {}, body: FakeCalendar.error(403, 'rateLimitExceeded', 'Rate Limit Exceeded', 'usageLimits')[1] },
    { path: /team01/, status: 429, headers: { 'retry-after': '3' }, body: FakeCalendar.error(429, 'rateLimitExceeded', 'Rate Limit Exceeded', 'usageLimits')[1] },
  );
  const h = harness(googleCalendarConnector, CALENDAR_HOST, config);
  const run = await pullAll(googleCalendarConnector, h, null);
  t.is(Object.keys(upserts(run.changes)).length, 4);
  t.deepEqual(h.sleeps, [2_000, 3_000]);
  t.is(h.counters.rateLimitedMs, 5_000);
});

test.serial('config: days are whole numbers in range, calendar ids without spaces or slashes', (t) => {
  const v = googleCalendarConnector.validateConfig!;
  t.throws(() => v({ path: 'c', days_back: -1 }), { message: /days_back is a whole number of days from 0 to 3650/ });
  t.throws(() => v({ path: 'c', days_ahead: '2.5' }), { message: /days_ahead/ });
  t.throws(() => v({ path: 'c', calendar_ids: ['primary', 'a b'] }), { message: /"a b" is not a calendar id/ });
  t.notThrows(() => v({ path: 'c', calendar_ids: 'primary, team@group.calendar.google.com', days_back: '0', days_ahead: 365, agenda: 'true' }));
  t.deepEqual(googleCalendarConnector.spec.auth.scopes, ['https://www.googleapis.com/auth/calendar.readonly']);
});
