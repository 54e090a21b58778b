import test from 'ava';
import nock from 'nock';
import { readFileSync } from 'node:fs';
import { airtableConnector } from '../../../src/platform/connectors/airtable.ts';
import type { AirtableRecord } from '../../../src/platform/connectors/airtable/api.ts';
import { fieldsVersion } from '../../../src/platform/connectors/airtable/records.ts';
import type { ConnectorContext, KnownItem, LocalChange, PullPage, SourceChange, SourceItem } from '../../../src/platform/runtime/connector.ts';
import { NeedsReauth, type CredentialSource, type SourceCredential } from '../../../src/platform/runtime/credentials.ts';
import { createSourceHttp, ProviderError } from '../../../src/platform/runtime/sourceHttp.ts';
import { convert } from '../../../src/ingest/converters/index.ts';

const API = 'https://api.airtable.com';
const BASE = 'appBase0000000001';
const TASKS = 'tblTasks000000001';
const PEOPLE = 'tblPeople00000001';
const fixture = <T = any>(name: string): T => JSON.parse(readFileSync(new URL(`./fixtures/airtable/${name}`, import.meta.url), 'utf8')) as T;
const tasks1 = fixture<{ records: AirtableRecord[]; offset: string }>('tasks-page-1.json');
const tasks2 = fixture<{ records: AirtableRecord[] }>('tasks-page-2.json');
const people = fixture<{ records: AirtableRecord[] }>('people-page-1.json');
const allTasks = [...tasks1.records, ...tasks2.records];

/** Airtable's clock in the scripted answers (their `Date` header). */
const SERVER_DATE = 'Wed, 15 May 2024 10:00:00 GMT';
const TOKEN: SourceCredential = { kind: 'token', accessToken: 'patXYZ.0123456789abcdef', scopes: [], account: null };

interface Step {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}
interface Seen {
  method: string;
  path: string;
  query: Record<string, string>;
  auth: string | null;
  body?: any;
}

/** Airtable answering the scripted steps in order, whatever the request; records each request. */
function airtableApi(steps: Step[]): Seen[] {
  const seen: Seen[] = [];
  const reply = async (req: Request): Promise<nock.ReplyFnResult> => {
    const url = new URL(req.url);
    const text = await req.text();
    seen.push({ method: req.method, path: decodeURIComponent(url.pathname), query: Object.fromEntries(url.searchParams), auth: req.headers.get('authorization'), ...(text ? { body: JSON.parse(text) } : {}) });
    const step = steps[seen.length - 1];
    if (!step) return [418, { error: { type: 'UNEXPECTED', message: `unscripted ${req.method} ${url.pathname}` } }];
    return [step.status ?? 200, step.body as nock.Body, { date: SERVER_DATE, 'content-type': 'application/json; charset=utf-8', ...step.headers }];
  };
  const any = () => true;
  nock(API).persist().get(any).query(true).reply(reply).post(any).query(true).reply(reply).patch(any).query(true).reply(reply);
  return seen;
}

function knownOf(items: KnownItem[]): ConnectorContext['known'] {
  const map = new Map(items.map((i) => [i.sourceId, i]));
  return { get: (id) => map.get(id), all: () => map.values(), get size() { return map.size; } };
}

const knownRecord = (r: AirtableRecord, folder = 'Tasks', tableId = TASKS): KnownItem => ({
  sourceId: r.id,
  path: `${folder}/${r.id}.json`,
  sourceVersion: fieldsVersion(r.fields),
  meta: { tableId },
});

function harness(o: { config?: Record<string, unknown>; known?: KnownItem[] } = {}) {
  const counters = { httpCalls: 0, rateLimitedMs: 0 };
  const sleeps: number[] = [];
  const signal = new AbortController().signal;
  const credentials: CredentialSource = {
    get: async () => TOKEN,
    afterUnauthorized: async (_project, provider) => {
      throw new NeedsReauth(provider);
    },
  };
  const http = createSourceHttp({
    connector: airtableConnector,
    credentials,
    projectId: 'prj_test',
    apiBase: API,
    allowPrivate: false,
    signal,
    counters,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
  });
  const ctx: ConnectorContext = {
    syncId: 'syn_test',
    projectId: 'prj_test',
    config: o.config ?? { path: 'airtable', base_id: BASE },
    known: knownOf(o.known ?? []),
    http,
    apiBase: API,
    runMessage: 'sync airtable: test run',
    convert,
    signal,
  };
  return { ctx, counters, sleeps };
}

async function pullAll(ctx: ConnectorContext, cursor: string | null): Promise<PullPage[]> {
  const pages: PullPage[] = [];
  for await (const p of airtableConnector.pull(ctx, cursor)) pages.push(p);
  return pages;
}

const upserts = (pages: PullPage[]): SourceItem[] => pages.flatMap((p) => p.changes.flatMap((c: SourceChange) => (c.kind === 'upsert' ? [c.item] : [])));
const deletes = (pages: PullPage[]): string[] => pages.flatMap((p) => p.changes.flatMap((c: SourceChange) => (c.kind === 'delete' ? [c.sourceId] : [])));
const cursorOf = (pages: PullPage[]) => JSON.parse(pages.at(-1)!.cursor!);
const recentSweep = () => new Date(Date.now() - 60_000).toISOString();

const list = (extra: Record<string, string> = {}) => ({ pageSize: '100', returnFieldsByFieldId: 'false', ...extra });

test.before(() => {
  nock.disableNetConnect();
});
test.afterEach.always(() => {
  nock.cleanAll();
});

test.serial('a first pull lists every table of the base, 100 records a page, with the token as Bearer', async (t) => {
  const seen = airtableApi([{ body: fixture('tables.json') }, { body: tasks1 }, { body: tasks2 }, { body: people }]);
  const { ctx, counters } = harness();
  const pages = await pullAll(ctx, null);

  t.deepEqual(
    seen.map((s) => [s.method, s.path, s.query]),
    [
      ['GET', `/v0/meta/bases/${BASE}/tables`, {}],
      ['GET', `/v0/${BASE}/${TASKS}`, list()],
      ['GET', `/v0/${BASE}/${TASKS}`, list({ offset: tasks1.offset })],
      ['GET', `/v0/${BASE}/${PEOPLE}`, list()],
    ],
  );
  t.true(seen.every((s) => s.auth === 'Bearer patXYZ.0123456789abcdef'));
  t.is(counters.httpCalls, 4);

  const items = upserts(pages);
  t.deepEqual(
    items.map((i) => i.path),
    [...allTasks.map((r) => `Tasks/${r.id}.json`), `People _ Team/${people.records[0]!.id}.json`],
  );
  t.deepEqual(items[0], {
    sourceId: 'recTask0000000001',
    path: 'Tasks/recTask0000000001.json',
    type: 'json',
    content: { id: 'recTask0000000001', createdTime: '2024-04-01T09:00:00.000Z', fields: { Name: 'Write the spec', Status: 'Todo', Total: 4, Due: '2024-06-01' } },
    sourceVersion: fieldsVersion(tasks1.records[0]!.fields),
    meta: { tableId: TASKS },
  });
  // The record's version ignores key order.
  t.is(fieldsVersion({ b: 1, a: [{ y: 2, x: 1 }] }), fieldsVersion({ a: [{ x: 1, y: 2 }], b: 1 }));

  // A table's cursor is set once its listing completed: Airtable's clock when it started, less 5 s.
  t.deepEqual(JSON.parse(pages[0]!.cursor!), { v: 1, tables: {}, swept_at: null });
  const cursor = cursorOf(pages);
  t.deepEqual(cursor.tables, {
    [TASKS]: { folder: 'Tasks', wanted: null, since: '2024-05-15T09:59:55.000Z' },
    [PEOPLE]: { folder: 'People _ Team', wanted: null, since: '2024-05-15T09:59:55.000Z' },
  });
  t.false(Number.isNaN(Date.parse(cursor.swept_at)));
});

test.serial('an incremental pull asks only for records modified since the table\'s cursor', async (t) => {
  const since = '2024-05-15T09:59:55.000Z';
  const cursor = JSON.stringify({ v: 1, tables: { [TASKS]: { folder: 'Tasks', wanted: 'Tasks', since } }, swept_at: recentSweep() });
  const seen = airtableApi([{ body: fixture('tables.json') }, { body: fixture('tasks-incremental.json'), headers: { date: 'Wed, 15 May 2024 11:00:00 GMT' } }]);
  const { ctx, counters } = harness({ config: { path: 'airtable', base_id: BASE, tables: ['Tasks'] }, known: allTasks.map((r) => knownRecord(r)) });
  const pages = await pullAll(ctx, cursor);

  t.deepEqual(seen[1]!.query, list({ filterByFormula: `OR(IS_AFTER(LAST_MODIFIED_TIME(), '${since}'), IS_AFTER(CREATED_TIME(), '${since}'))` }));
  // The schema and one page: nothing else for an unchanged table, and no id sweep (the last was recent).
  t.is(counters.httpCalls, 2);
  t.deepEqual(
    upserts(pages).map((i) => [i.sourceId, (i.content as { fields: { Name: string } }).fields.Name]),
    [['recTask0000000002', 'Review again']],
  );
  t.deepEqual(deletes(pages), []);
  t.is(cursorOf(pages).tables[TASKS].since, '2024-05-15T10:59:55.000Z');
});

test.serial('detect_deletes sweeps the record ids (primary field only) and removes what is gone', async (t) => {
  const cursor = JSON.stringify({ v: 1, tables: { [TASKS]: { folder: 'Tasks', wanted: null, since: '2024-05-15T09:59:55.000Z' } }, swept_at: recentSweep() });
  const seen = airtableApi([{ body: fixture('tables.json') }, { body: fixture('empty.json') }, { body: fixture('tasks-ids.json') }]);
  const { ctx } = harness({ config: { path: 'airtable', base_id: BASE, tables: [TASKS], detect_deletes: true }, known: allTasks.map((r) => knownRecord(r)) });
  const pages = await pullAll(ctx, cursor);
  t.deepEqual(seen[2]!.query, list({ 'fields[]': 'fldName0000000001' }));
  t.deepEqual(deletes(pages), ['recTask0000000003']);
  t.is(seen.length, 3);
});

test.serial('without detect_deletes the sweep runs when the last one is over 6 hours old', async (t) => {
  const old = new Date(Date.now() - 7 * 3600_000).toISOString();
  const cursor = JSON.stringify({ v: 1, tables: { [TASKS]: { folder: 'Tasks', wanted: null, since: '2024-05-15T09:59:55.000Z' } }, swept_at: old });
  airtableApi([{ body: fixture('tables.json') }, { body: fixture('empty.json') }, { body: fixture('tasks-ids.json') }]);
  const { ctx } = harness({ config: { path: 'airtable', base_id: BASE, tables: [TASKS] }, known: allTasks.map((r) => knownRecord(r)) });
  const pages = await pullAll(ctx, cursor);
  t.deepEqual(deletes(pages), ['recTask0000000003']);
  t.true(Date.parse(cursorOf(pages).swept_at) > Date.parse(old));
});

test.serial('a table renamed at the source is listed whole into its new folder (moves), still found by its old configured name', async (t) => {
  const renamed = fixture('tables.json');
  renamed.tables[0].name = 'Backlog';
  const cursor = JSON.stringify({ v: 1, tables: { [TASKS]: { folder: 'Tasks', wanted: 'Tasks', since: '2024-05-15T09:59:55.000Z' } }, swept_at: recentSweep() });
  const seen = airtableApi([{ body: renamed }, { body: tasks1 }, { body: tasks2 }]);
  const gone = { ...knownRecord(allTasks[0]!), sourceId: 'recGone0000000009' };
  const { ctx } = harness({ config: { path: 'airtable', base_id: BASE, tables: ['Tasks'] }, known: [...allTasks.map((r) => knownRecord(r)), gone] });
  const pages = await pullAll(ctx, cursor);
  // A full listing: no filter.
  t.deepEqual(seen[1]!.query, list());
  t.deepEqual(
    upserts(pages).map((i) => [i.sourceId, i.path]),
    allTasks.map((r) => [r.id, `Backlog/${r.id}.json`]),
  );
  t.deepEqual(deletes(pages), ['recGone0000000009']);
  t.deepEqual(cursorOf(pages).tables[TASKS], { folder: 'Backlog', wanted: 'Tasks', since: '2024-05-15T09:59:55.000Z' });
});

test.serial('records of a table no longer synced leave the project', async (t) => {
  const cursor = JSON.stringify({ v: 1, tables: { [TASKS]: { folder: 'Tasks', wanted: null, since: '2024-05-15T09:59:55.000Z' } }, swept_at: recentSweep() });
  airtableApi([{ body: fixture('tables.json') }, { body: fixture('empty.json') }]);
  const { ctx } = harness({ config: { path: 'airtable', base_id: BASE, tables: [TASKS] }, known: [knownRecord(allTasks[0]!), knownRecord(people.records[0]!, 'People _ Team', PEOPLE)] });
  const pages = await pullAll(ctx, cursor);
  t.deepEqual(deletes(pages), [people.records[0]!.id]);
});

test.serial('a 429 without Retry-After waits Airtable\'s 30 s; with it, what it says', async (t) => {
  airtableApi([
    { body: fixture('tables.json') },
    { status: 429, body: fixture('error-rate-limit.json') },
    { status: 429, body: fixture('error-rate-limit.json'), headers: { 'retry-after': '2' } },
    { body: tasks2 },
  ]);
  const { ctx, sleeps, counters } = harness({ config: { path: 'airtable', base_id: BASE, tables: [TASKS] } });
  const pages = await pullAll(ctx, null);
  t.deepEqual(sleeps, [30_000, 2_000]);
  t.is(counters.rateLimitedMs, 32_000);
  t.is(upserts(pages).length, 1);
});

test.serial('errors carry Airtable\'s words: an unknown table, a NOT_FOUND answer', async (t) => {
  airtableApi([{ body: fixture('tables.json') }]);
  const missing = await t.throwsAsync(pullAll(harness({ config: { path: 'a', base_id: BASE, tables: ['Invoices'] } }).ctx, null), { instanceOf: ProviderError });
  t.is(missing.message, `airtable answered 404: base ${BASE} has no table "Invoices" (its tables: Tasks, People / Team)`);
  nock.cleanAll();
  airtableApi([{ status: 404, body: fixture('error-not-found.json') }]);
  const notFound = await t.throwsAsync(pullAll(harness().ctx, null), { instanceOf: ProviderError });
  t.is(notFound.message, 'airtable answered 404: NOT_FOUND');
});

function update(r: AirtableRecord, fields: Record<string, unknown>, extra: Record<string, unknown> = {}): LocalChange {
  const previous = { id: r.id, createdTime: r.createdTime, fields: r.fields };
  return { kind: 'update', sourceId: r.id, known: knownRecord(r), path: `Tasks/${r.id}.json`, type: 'json', content: { ...previous, ...extra, fields }, previous };
}

test.serial('push: changed fields only, 10 records per PATCH, typecast off; a removed field is cleared', async (t) => {
  const records = Array.from({ length: 12 }, (_, i) => ({ id: `recBulk00000000${String(i).padStart(2, '0')}`, createdTime: '2024-04-01T09:00:00.000Z', fields: { Name: `Row ${i}`, Status: 'Todo', Due: '2024-06-01' } }));
  const echo = (ids: AirtableRecord[]) => ({ records: ids.map((r) => ({ ...r, fields: { Name: r.fields.Name, Status: 'Done', Total: 4 } })) });
  const seen = airtableApi([{ body: echo(records.slice(0, 10)) }, { body: echo(records.slice(10)) }]);
  const { ctx } = harness();
  const changes = records.map((r) => update(r, { Name: r.fields.Name, Status: 'Done' }));
  const outcomes = await airtableConnector.push!(ctx, changes);

  t.deepEqual(
    seen.map((s) => [s.method, s.path, s.body.records.length, s.body.typecast]),
    [
      ['PATCH', `/v0/${BASE}/${TASKS}`, 10, false],
      ['PATCH', `/v0/${BASE}/${TASKS}`, 2, false],
    ],
  );
  t.deepEqual(seen[0]!.body.records[0], { id: records[0]!.id, fields: { Status: 'Done', Due: null } });
  t.is(seen[0]!.auth, 'Bearer patXYZ.0123456789abcdef');
  t.deepEqual(outcomes[11], { ok: true, sourceId: records[11]!.id, sourceVersion: fieldsVersion({ Name: 'Row 11', Status: 'Done', Total: 4 }) });
  t.true(outcomes.every((o) => o.ok));
});

test.serial('push: a refused batch is retried record by record, so only the bad change fails, with Airtable\'s message', async (t) => {
  const [a, b] = tasks1.records as [AirtableRecord, AirtableRecord];
  const seen = airtableApi([
    { status: 422, body: fixture('error-computed-field.json') },
    { body: { records: [{ ...a, fields: { ...a.fields, Status: 'Done' } }] } },
    { status: 422, body: fixture('error-computed-field.json') },
  ]);
  const { ctx } = harness();
  const outcomes = await airtableConnector.push!(ctx, [update(a, { ...a.fields, Status: 'Done' }), update(b, { ...b.fields, Total: 99 })]);
  t.deepEqual(
    seen.map((s) => s.body.records.map((r: { id: string }) => r.id)),
    [[a.id, b.id], [a.id], [b.id]],
  );
  t.true(outcomes[0]!.ok);
  t.deepEqual(outcomes[1], { ok: false, message: 'Airtable refused the change: Field "Total" cannot accept a value because the field is computed (INVALID_VALUE_FOR_COLUMN)' });
});

test.serial('push: a node added in a table\'s folder creates a row; deletes and id edits are refused', async (t) => {
  const created = { id: 'recNew00000000001', createdTime: '2024-05-16T08:00:00.000Z', fields: { Name: 'Brand new', Status: 'Todo', Total: 0 } };
  const seen = airtableApi([{ body: fixture('tables.json') }, { body: { records: [created] } }]);
  const { ctx } = harness();
  const a = tasks1.records[0]!;
  const outcomes = await airtableConnector.push!(ctx, [
    { kind: 'create', path: 'Tasks/new-row.json', type: 'json', content: { fields: { Name: 'Brand new', Status: 'Todo' } } },
    { kind: 'delete', sourceId: a.id, known: knownRecord(a) },
    update(a, a.fields, { id: 'recOther000000001' }),
    { kind: 'create', path: 'Elsewhere/x.json', type: 'json', content: { fields: {} } },
  ]);
  t.deepEqual(
    seen.map((s) => [s.method, s.path, s.body]),
    [
      ['GET', `/v0/meta/bases/${BASE}/tables`, undefined],
      ['POST', `/v0/${BASE}/${TASKS}`, { records: [{ fields: { Name: 'Brand new', Status: 'Todo' } }], typecast: false }],
    ],
  );
  t.deepEqual(outcomes[0], { ok: true, sourceId: created.id, sourceVersion: fieldsVersion(created.fields), path: `Tasks/${created.id}.json`, meta: { tableId: TASKS } });
  t.regex((outcomes[1] as { message: string }).message, /not deleted from here/);
  t.regex((outcomes[2] as { message: string }).message, /only fields change/);
  t.regex((outcomes[3] as { message: string }).message, /not in a synced table's folder/);
});

test('config: base_id must be a base id; tables a list', (t) => {
  const v = airtableConnector.validateConfig!;
  t.notThrows(() => v({ path: 'a', base_id: BASE, tables: ['Tasks', TASKS], detect_deletes: true }));
  t.throws(() => v({ path: 'a', base_id: 'https://airtable.com/appX' }), { message: /base_id/ });
  t.throws(() => v({ path: 'a', base_id: BASE, tables: [1] }), { message: /tables/ });
  t.throws(() => v({ path: 'a', base_id: BASE, detect_deletes: 'sometimes' }), { message: /detect_deletes/ });
});
