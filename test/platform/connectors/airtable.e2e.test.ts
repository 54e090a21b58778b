import test from 'ava';
import nock from 'nock';
import { readFileSync } from 'node:fs';
import { ADMIN, isolateNetwork, startOAuthServer, type OAuthTestServer } from '../oauth/helpers.ts';
import { FakeAirtable } from './fixtures/airtable/fakeAirtable.ts';

// The Airtable connector end to end: a real server and runtime, the real connector, Airtable's
// REST API on nock (FakeAirtable). The tests run in order on one sync: each starts from where
// the one before left the base and the project.

const PAT = 'patE2e00000001.0123456789abcdef';
const BASE = 'appE2eBase0000001';
const TASKS = 'tblTasks000000001';
const PEOPLE = 'tblPeople00000001';
const FOLDER = 'airtable';
const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/airtable/${name}`, import.meta.url), 'utf8'));

let server: OAuthTestServer;
let token: string;
let projectId: string;
let syncId: string;
const airtable = new FakeAirtable(BASE);
airtable.addTable(TASKS, 'Tasks', [
  ['fldName0000000001', 'Name', 'singleLineText'],
  ['fldStatus00000001', 'Status', 'singleSelect'],
  ['fldDue00000000001', 'Due', 'date'],
  ['fldTotal000000001', 'Total', 'formula'],
]);
airtable.addTable(PEOPLE, 'People / Team', [
  ['fldPName000000001', 'Name', 'singleLineText'],
  ['fldEmail000000001', 'Email', 'email'],
]);
const spec = airtable.addRecord(TASKS, { Name: 'Write the spec', Status: 'Todo', Due: '2024-06-01', Total: 4 }, 'Task');
const review = airtable.addRecord(TASKS, { Name: 'Review', Status: 'Todo', Due: '2024-06-02', Total: 4 }, 'Task');
const ship = airtable.addRecord(TASKS, { Name: 'Ship it', Status: 'Todo', Total: 4 }, 'Task');
const ada = airtable.addRecord(PEOPLE, { Name: 'Ada Lovelace', Email: 'ada@example.com' }, 'Person');
const grace = airtable.addRecord(PEOPLE, { Name: 'Grace Hopper', Email: 'grace@example.com' }, 'Person');

const refresh = async () => {
  const res = await server.api('POST', `/sync/syncs/${syncId}/refresh`, { token });
  if (res.status !== 200) throw new Error(`refresh: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.run;
};
const cat = (path: string) => server.api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token });
const content = async (path: string) => {
  const res = await cat(path);
  if (res.status !== 200) throw new Error(`cat ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.content;
};
const versions = async (path: string) => (await server.api('GET', `/content/${projectId}/versions?path=${encodeURIComponent(path)}`, { token })).body.data.versions as { version: number }[];
const versionContent = async (path: string, version: number) =>
  (await server.api('GET', `/content/${projectId}/version-content?path=${encodeURIComponent(path)}&version=${version}`, { token })).body.data.content;
const write = async (path: string, value: unknown) => {
  const res = await server.api('POST', `/content/${projectId}/write`, { token, body: { path, content: value, node_type: 'json' } });
  if (res.status >= 300) throw new Error(`write ${path}: ${res.status} ${JSON.stringify(res.body)}`);
};
const syncRecord = async () =>
  ((await server.api('GET', `/sync/syncs?project_id=${projectId}`, { token })).body.data.syncs as { id: string; status: string; pause_reason: string | null }[]).find((s) => s.id === syncId);
const oauthStatus = async () => (await server.api('GET', `/oauth/airtable/status?project_id=${projectId}`, { token })).body.data;
const connect = () => server.api('POST', '/oauth/airtable/token', { token, body: { project_id: projectId, token: PAT } });
const rowPath = (folder: string, id: string) => `${FOLDER}/${folder}/${id}.json`;
/** The listing requests of a run, as [table, query]. */
const listings = () => airtable.seen.filter((s) => s.method === 'GET' && s.path.startsWith(`/v0/${BASE}/`)).map((s) => [s.path.split('/')[3], s.query]);
const list = (extra: Record<string, string> = {}) => ({ pageSize: '100', returnFieldsByFieldId: 'false', ...extra });
const changedSince = (since: string) => `OR(IS_AFTER(LAST_MODIFIED_TIME(), '${since}'), IS_AFTER(CREATED_TIME(), '${since}'))`;
const tableSince = (cursor: string, table: string) => (JSON.parse(cursor) as { tables: Record<string, { since: string }> }).tables[table]!.since;
const lastRun = async () => (await server.api('GET', `/sync/syncs/${syncId}/runs`, { token })).body.data.runs[0];

test.before(async () => {
  isolateNetwork();
  server = await startOAuthServer({});
  token = await server.login(ADMIN.email, ADMIN.password);
  projectId = (await server.api('POST', '/auth/initialize', { token })).body.data.project.id;
  airtable.intercept();
});

test.after.always(async () => {
  nock.cleanAll();
  await server?.stop();
  nock.enableNetConnect();
});

test.serial('a personal access token is checked as Bearer with whoami; the first full pull writes one JSON node per record, a commit per table page', async (t) => {
  const connected = await connect();
  t.is(connected.status, 201, JSON.stringify(connected.body));
  t.like(connected.body.data, { provider: 'airtable', kind: 'token', account: 'grace@example.com' });
  t.deepEqual(airtable.seen.map((s) => [s.method, s.path, s.auth]), [['GET', '/v0/meta/whoami', `Bearer ${PAT}`]]);

  const config = { path: `/${FOLDER}`, base_id: BASE, tables: ['Tasks', 'People / Team'], detect_deletes: true };
  const boot = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'airtable', config } });
  t.is(boot.status, 201, JSON.stringify(boot.body));
  syncId = boot.body.data.sync.id;

  airtable.seen.length = 0;
  const before = server.running.services.changelog.latest(projectId);
  const run = await refresh();
  t.like(run, { status: 'succeeded', trigger: 'manual', pulled: { created: 5, updated: 0, deleted: 0 }, pushed: 0, conflicts: [], error: null, http_calls: 3, rate_limited_ms: 0, cursor_before: null });
  t.deepEqual(
    airtable.seen.map((s) => [s.method, s.path, s.query]),
    [
      ['GET', `/v0/meta/bases/${BASE}/tables`, {}],
      ['GET', `/v0/${BASE}/${TASKS}`, list()],
      ['GET', `/v0/${BASE}/${PEOPLE}`, list()],
    ],
  );
  t.true(airtable.seen.every((s) => s.auth === `Bearer ${PAT}`));

  // The cursor: per table, Airtable's clock when its listing started, less a few seconds of overlap.
  const cursor = JSON.parse(run.cursor_after);
  t.deepEqual(Object.keys(cursor.tables).sort(), [PEOPLE, TASKS]);
  t.like(cursor.tables[TASKS], { folder: 'Tasks', wanted: 'Tasks' });
  t.like(cursor.tables[PEOPLE], { folder: 'People _ Team', wanted: 'People / Team' });
  const minus5s = (date: string) => new Date(Date.parse(date) - 5000).toISOString();
  t.is(cursor.tables[TASKS].since, minus5s(airtable.seen[1]!.date!));
  t.is(cursor.tables[PEOPLE].since, minus5s(airtable.seen[2]!.date!));

  // One commit per table, both by the sync.
  const after = server.running.services.changelog.latest(projectId);
  t.is(after - before, 2);
  const entries = server.running.services.changelog.between(projectId, before, after);
  t.is(entries.filter((e) => e.nodeType !== 'folder').length, 5);
  t.true(entries.every((e) => e.actor.type === 'sync' && e.actor.id === syncId));

  t.deepEqual(await content(rowPath('Tasks', spec.id)), { id: spec.id, createdTime: spec.createdTime, fields: { Name: 'Write the spec', Status: 'Todo', Due: '2024-06-01', Total: 4 } });
  t.deepEqual(await content(rowPath('Tasks', ship.id)), { id: ship.id, createdTime: ship.createdTime, fields: { Name: 'Ship it', Status: 'Todo', Total: 4 } });
  // "/" cannot be in a folder name: the table's folder replaces it.
  t.deepEqual(await content(rowPath('People _ Team', ada.id)), { id: ada.id, createdTime: ada.createdTime, fields: { Name: 'Ada Lovelace', Email: 'ada@example.com' } });
});

test.serial('an incremental run lists only records modified since the table\'s cursor; a renamed table moves its rows, a deleted record goes to the trash', async (t) => {
  const cursor = (await lastRun()).cursor_after as string;
  const adaNode = (await cat(rowPath('People _ Team', ada.id))).body.data.id as string;
  airtable.edit(TASKS, spec.id, { Status: 'Done' });
  airtable.remove(TASKS, ship.id);
  airtable.tables.find((x) => x.id === PEOPLE)!.name = 'Crew';
  airtable.seen.length = 0;

  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 3, deleted: 1 }, conflicts: [], error: null, http_calls: 4, cursor_before: cursor });
  t.deepEqual(listings(), [
    // Tasks: what changed since its cursor, then the id sweep (detect_deletes), primary field only.
    [TASKS, list({ filterByFormula: changedSince(tableSince(cursor, TASKS)) })],
    [TASKS, list({ 'fields[]': 'fldName0000000001' })],
    // The renamed table is listed whole, into its new folder.
    [PEOPLE, list()],
  ]);
  t.deepEqual(airtable.seen[1]!.answered, [spec.id]);

  t.like(await content(rowPath('Tasks', spec.id)), { fields: { Status: 'Done' } });
  // The renamed table's rows are the same nodes, moved (history kept).
  const moved = await cat(rowPath('Crew', ada.id));
  t.is(moved.body.data.id, adaNode);
  t.is((await cat(rowPath('People _ Team', ada.id))).status, 404);
  t.is((await cat(rowPath('Crew', grace.id))).status, 200);
  t.true((await versions(rowPath('Crew', ada.id))).length >= 2);
  // The deleted record's node is in the trash.
  t.is((await cat(rowPath('Tasks', ship.id))).status, 404);
  const trash = await server.api('GET', `/content/${projectId}/trash`, { token });
  t.true(JSON.stringify(trash.body.data.items).includes(`${ship.id}.json`), JSON.stringify(trash.body.data.items));
  const next = JSON.parse(run.cursor_after);
  t.like(next.tables[PEOPLE], { folder: 'Crew', wanted: 'People / Team' });
  // Each table's cursor moved to Airtable's clock at its listing, less the overlap.
  t.is(next.tables[TASKS].since, new Date(Date.parse(airtable.seen[1]!.date!) - 5000).toISOString());
  t.is(next.tables[PEOPLE].since, new Date(Date.parse(airtable.seen[3]!.date!) - 5000).toISOString());
});

test.serial('push: changed fields of a row are PATCHed (a removed field cleared), new nodes in tables\' folders are POSTed as rows, the renamed table\'s too', async (t) => {
  const path = rowPath('Tasks', review.id);
  const node = await content(path);
  const { Due: _due, ...kept } = node.fields;
  await write(path, { ...node, fields: { ...kept, Status: 'Done' } });
  await write(`${FOLDER}/Tasks/new-task.json`, { fields: { Name: 'Brand new', Status: 'Todo' } });
  // The configured name "People / Team" no longer names a table (renamed "Crew" at the source in the test before).
  await write(`${FOLDER}/Crew/new-person.json`, { fields: { Name: 'Katherine Johnson' } });
  airtable.seen.length = 0;

  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 0 }, pushed: 3, conflicts: [], errors: [], error: null });
  const writes = airtable.seen.filter((s) => s.method !== 'GET');
  t.deepEqual(
    writes.map((s) => [s.method, s.path, s.body]),
    [
      ['PATCH', `/v0/${BASE}/${TASKS}`, { records: [{ id: review.id, fields: { Status: 'Done', Due: null } }], typecast: false }],
      ['POST', `/v0/${BASE}/${TASKS}`, { records: [{ fields: { Name: 'Brand new', Status: 'Todo' } }], typecast: false }],
      ['POST', `/v0/${BASE}/${PEOPLE}`, { records: [{ fields: { Name: 'Katherine Johnson' } }], typecast: false }],
    ],
  );
  t.true(writes.every((s) => s.auth === `Bearer ${PAT}`));
  t.deepEqual(airtable.record(TASKS, review.id)!.fields, { Name: 'Review', Status: 'Done', Total: 4 });
  const task = airtable.records.get(TASKS)!.at(-1)!;
  const person = airtable.records.get(PEOPLE)!.at(-1)!;
  t.deepEqual([task.fields, person.fields], [{ Name: 'Brand new', Status: 'Todo' }, { Name: 'Katherine Johnson' }]);

  // The next run: the pushed row is not rewritten nor pushed again; each new row's node takes
  // its record's name and form (id, createdTime) without a conflict.
  const taskNode = (await cat(`${FOLDER}/Tasks/new-task.json`)).body.data.id as string;
  const personNode = (await cat(`${FOLDER}/Crew/new-person.json`)).body.data.id as string;
  airtable.seen.length = 0;
  const next = await refresh();
  t.like(next, { status: 'succeeded', pulled: { created: 0, updated: 2, deleted: 0 }, pushed: 0, conflicts: [] });
  t.false(airtable.seen.some((s) => s.method !== 'GET'));
  const placed = await cat(rowPath('Tasks', task.id));
  t.is(placed.body.data.id, taskNode);
  t.deepEqual(placed.body.data.content, { id: task.id, createdTime: task.createdTime, fields: { Name: 'Brand new', Status: 'Todo' } });
  t.is((await cat(rowPath('Crew', person.id))).body.data.id, personNode);
  t.is((await cat(`${FOLDER}/Tasks/new-task.json`)).status, 404);
  t.deepEqual((await content(path)).fields, { Name: 'Review', Status: 'Done', Total: 4 });
});

test.serial('a conflict: a row edited here and in Airtable takes Airtable\'s version; ours is the version before it', async (t) => {
  const path = rowPath('Tasks', spec.id);
  const node = await content(path);
  await write(path, { ...node, fields: { ...node.fields, Name: 'Our spec' } });
  airtable.edit(TASKS, spec.id, { Name: 'Their spec' });
  airtable.seen.length = 0;

  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 1, deleted: 0 }, pushed: 0, conflicts: [path] });
  // Settled for the source: our edit is not sent back.
  t.false(airtable.seen.some((s) => s.method !== 'GET'));
  t.is(airtable.record(TASKS, spec.id)!.fields.Name, 'Their spec');
  t.like(await content(path), { fields: { Name: 'Their spec', Status: 'Done' } });
  const history = await versions(path);
  t.is((await versionContent(path, history.length - 1)).fields.Name, 'Our spec');
});

test.serial('a 429 is waited out as Retry-After asks, and the run succeeds', async (t) => {
  airtable.edit(TASKS, review.id, { Status: 'Todo' });
  // Airtable's 429 names no wait (the connector then waits Airtable's documented 30 s);
  // this one carries Retry-After, which the runtime honors, to keep the test to one second.
  airtable.interrupts.push({ status: 429, body: fixture('error-rate-limit.json'), headers: { 'retry-after': '1' } });
  airtable.seen.length = 0;
  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { updated: 1 }, error: null });
  t.true(run.rate_limited_ms >= 1000 && run.rate_limited_ms < 5000, String(run.rate_limited_ms));
  // The refused request (the schema) was asked again.
  t.deepEqual(airtable.seen.slice(0, 2).map((s) => s.path), [`/v0/meta/bases/${BASE}/tables`, `/v0/meta/bases/${BASE}/tables`]);
  t.is(run.http_calls, airtable.seen.length);
  t.like(await content(rowPath('Tasks', review.id)), { fields: { Status: 'Todo' } });
});

test.serial('a 401 fails the run, pauses the sync for reauthorization and marks the connection; connecting again and resuming picks up', async (t) => {
  airtable.edit(TASKS, review.id, { Status: 'Done' });
  airtable.interrupts.push({ status: 401, body: { error: { type: 'AUTHENTICATION_REQUIRED', message: 'Authentication required' } } });
  const run = await refresh();
  t.is(run.status, 'failed');
  t.regex(run.error, /airtable.*authorized again/i);
  t.like(await syncRecord(), { status: 'paused', pause_reason: 'needs_reauth' });
  t.like(await oauthStatus(), { connected: true, needs_reauth: true });
  t.is((await server.api('POST', `/sync/syncs/${syncId}/refresh`, { token })).status, 409);
  t.like(await content(rowPath('Tasks', review.id)), { fields: { Status: 'Todo' } });

  t.is((await connect()).status, 200);
  t.like(await oauthStatus(), { needs_reauth: false });
  t.is((await server.api('POST', `/sync/syncs/${syncId}/resume`, { token })).status, 200);
  t.like(await refresh(), { status: 'succeeded', pulled: { updated: 1 } });
  t.like(await content(rowPath('Tasks', review.id)), { fields: { Status: 'Done' } });
});
