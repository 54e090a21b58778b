import test from 'ava';
import nock from 'nock';
import { addDays, utcDate } from '../../../src/platform/connectors/googleCalendar/window.ts';
import { ADMIN, isolateNetwork, recorder, startOAuthServer, type OAuthTestServer, type Seen } from '../oauth/helpers.ts';
import { connectGoogle, GOOGLE_ACCOUNT, GOOGLE_OAUTH, googleEnv } from './fixtures/google/connectGoogle.ts';
import { FakeCalendar } from './fixtures/google/fakeCalendar.ts';

// The Google Calendar connector end to end: a real server and runtime, connected through the
// real Google OAuth flow (Google's token endpoint on nock), the calendars on nock (FakeCalendar).
// The tests run in order on one sync. Days are relative to today, as the sync's window is.

const FOLDER = 'calendar';
const TEAM = 'c_team01@group.calendar.google.com';
const day = (n: number) => addDays(utcDate(Date.now()), n);

let server: OAuthTestServer;
let token: string;
let projectId: string;
let syncId: string;
const calendar = new FakeCalendar();
calendar.addCalendar('primary', GOOGLE_ACCOUNT);
calendar.addCalendar(TEAM, 'Team');
const standup = calendar.add('primary', { summary: 'Standup', start: `${day(0)}T09:30:00+01:00`, end: `${day(0)}T09:45:00+01:00` });
const offsite = calendar.add('primary', { summary: 'Offsite', start: day(2), end: day(3), location: 'Lake house' });
calendar.add('primary', { summary: 'Long ago', start: `${day(-40)}T10:00:00Z`, end: `${day(-40)}T11:00:00Z` });
const review = calendar.add(TEAM, { summary: 'Design review', start: `${day(1)}T14:00:00Z`, end: `${day(1)}T15:00:00Z`, location: 'Room 4' });

const refresh = async () => {
  const res = await server.api('POST', `/sync/syncs/${syncId}/refresh`, { token });
  if (res.status !== 200) throw new Error(`refresh: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.run;
};
const cat = (path: string) => server.api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(`${FOLDER}/${path}`)}`, { token });
const syncRecord = async () =>
  ((await server.api('GET', `/sync/syncs?project_id=${projectId}`, { token })).body.data.syncs as { id: string; status: string; pause_reason: string | null }[]).find((s) => s.id === syncId);
const oauthStatus = async () => (await server.api('GET', `/oauth/google-calendar/status?project_id=${projectId}`, { token })).body.data;
const bearers = () => new Set(calendar.seen.map((s) => s.headers.authorization));
const unauthorized = { error: { code: 401, message: 'Request had invalid authentication credentials.', errors: [{ message: 'Invalid Credentials', domain: 'global', reason: 'authError', location: 'Authorization', locationType: 'header' }], status: 'UNAUTHENTICATED' } };

test.before(async () => {
  isolateNetwork();
  server = await startOAuthServer(googleEnv());
  token = await server.login(ADMIN.email, ADMIN.password);
  projectId = (await server.api('POST', '/auth/initialize', { token })).body.data.project.id;
  calendar.intercept();
});

test.after.always(async () => {
  nock.cleanAll();
  await server?.stop();
  nock.enableNetConnect();
});

test.serial('connect through Google OAuth, bootstrap two calendars with agendas, first pull: events as JSON per calendar, an agenda per day', async (t) => {
  await connectGoogle(server, token, projectId, 'google-calendar', { accessToken: 'ya29.calFirst', refreshToken: '1//calRefresh' });
  t.like(await oauthStatus(), { connected: true, kind: 'oauth', account: GOOGLE_ACCOUNT });
  const bad = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'google-calendar', config: { path: `/${FOLDER}`, days_back: -2 } } });
  t.is(bad.status, 422);
  t.regex(bad.body.message, /days_back/);

  const config = { path: `/${FOLDER}`, calendar_ids: ['primary', TEAM], days_back: 7, days_ahead: 30, agenda: true };
  const boot = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'google-calendar', config } });
  t.is(boot.status, 201, JSON.stringify(boot.body));
  syncId = boot.body.data.sync.id;

  const run = await refresh();
  // Three events and their days: today, tomorrow, the offsite's day.
  t.like(run, { status: 'succeeded', pulled: { created: 6, updated: 0, deleted: 0 }, pushed: 0, conflicts: [], error: null, rate_limited_ms: 0 });
  t.is(run.http_calls, calendar.seen.length);
  t.is(calendar.seen.length, 2);
  t.true(calendar.seen.every((s) => s.query.timeMin === `${day(-7)}T00:00:00.000Z` && s.query.timeMax === `${day(31)}T00:00:00.000Z`));
  t.deepEqual(bearers(), new Set(['Bearer ya29.calFirst']));

  const event = await cat(`${GOOGLE_ACCOUNT}/${day(0)} Standup.json`);
  t.is(event.status, 200);
  t.like(event.body.data, { type: 'json' });
  t.like(event.body.data.content, { id: standup, summary: 'Standup', start: { dateTime: `${day(0)}T09:30:00+01:00` }, status: 'confirmed' });
  t.like((await cat(`Team/${day(1)} Design review.json`)).body.data.content, { id: review, location: 'Room 4' });
  t.regex((await cat(`Agenda/${day(1)}.md`)).body.data.content, /- 14:00–15:00 Design review \(Team\) — Room 4\n$/);
  t.regex((await cat(`Agenda/${day(2)}.md`)).body.data.content, /- All day Offsite \(ada\.lovelace@example\.com\) — Lake house/);
  t.is((await cat(`${GOOGLE_ACCOUNT}/${day(-40)} Long ago.json`)).status, 404, 'outside the window');
});

test.serial('an access token Google stops taking (401) is refreshed on the fly; incremental through the sync token: a cancelled event and its agenda go', async (t) => {
  calendar.cancel('primary', offsite);
  calendar.update(TEAM, review, { summary: 'Design review (v2)' });
  calendar.interrupts.push({ path: /primary/, status: 401, headers: {}, body: unauthorized });
  const refreshes: Seen[] = [];
  nock(GOOGLE_OAUTH)
    .post('/token')
    .reply(recorder(refreshes, () => [200, { access_token: 'ya29.calSecond', expires_in: 3599, scope: 'https://www.googleapis.com/auth/calendar.readonly https://www.googleapis.com/auth/userinfo.email', token_type: 'Bearer' }]));
  calendar.seen.length = 0;
  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 2, deleted: 2 }, error: null });
  t.is(refreshes.length, 1);
  t.like(refreshes[0]!.body as object, { grant_type: 'refresh_token', refresh_token: '1//calRefresh' });
  t.deepEqual(calendar.seen.map((s) => s.headers.authorization), ['Bearer ya29.calFirst', 'Bearer ya29.calSecond', 'Bearer ya29.calSecond']);
  t.true(calendar.seen.every((s) => s.query.syncToken !== undefined && s.query.timeMin === undefined));
  t.like(await oauthStatus(), { needs_reauth: false });

  t.is((await cat(`${GOOGLE_ACCOUNT}/${day(2)} Offsite.json`)).status, 404);
  t.is((await cat(`Agenda/${day(2)}.md`)).status, 404);
  t.is((await cat(`Team/${day(1)} Design review.json`)).status, 404, 'moved to its new name');
  t.like((await cat(`Team/${day(1)} Design review (v2).json`)).body.data.content, { id: review, summary: 'Design review (v2)' });
  t.regex((await cat(`Agenda/${day(1)}.md`)).body.data.content, /Design review \(v2\)/);
});

test.serial('sync tokens Google no longer honours (410): the window is listed again without duplicates', async (t) => {
  calendar.expireTokens();
  calendar.seen.length = 0;
  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 0 }, error: null });
  t.deepEqual(calendar.seen.map((s) => (s.query.syncToken ? 'token' : 'window')), ['token', 'window', 'token', 'window']);
  t.is((await cat(`${GOOGLE_ACCOUNT}/${day(0)} Standup.json`)).status, 200);
});

test.serial('a revoked grant: 401, and Google refuses the refresh: the sync pauses for reauthorization until connected again', async (t) => {
  calendar.interrupts.push({ path: /primary/, status: 401, headers: {}, body: unauthorized });
  nock(GOOGLE_OAUTH).post('/token').reply(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
  const run = await refresh();
  t.is(run.status, 'failed');
  t.regex(run.error, /google-calendar.*authorized again/i);
  t.like(await syncRecord(), { status: 'paused', pause_reason: 'needs_reauth' });
  t.like(await oauthStatus(), { connected: true, needs_reauth: true });

  await connectGoogle(server, token, projectId, 'google-calendar', { accessToken: 'ya29.calThird', refreshToken: '1//calRefresh3' });
  t.is((await server.api('POST', `/sync/syncs/${syncId}/resume`, { token })).status, 200);
  calendar.seen.length = 0;
  t.like(await refresh(), { status: 'succeeded', error: null });
  t.deepEqual(bearers(), new Set(['Bearer ya29.calThird']));
});
