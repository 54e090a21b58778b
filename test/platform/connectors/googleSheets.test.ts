import test from 'ava';
import nock from 'nock';
import { googleSheetsConnector } from '../../../src/platform/connectors/googleSheets.ts';
import type { LocalChange, SourceChange, SourceItem } from '../../../src/platform/runtime/connector.ts';
import { harness, pullAll, TOKEN, type Harness } from './fixtures/github/connectorHarness.ts';
import { FakeSheets, SHEETS, sheetsError } from './fixtures/googleSheets/fakeSheets.ts';

test.before(() => {
  nock.disableNetConnect();
});
test.afterEach.always(() => {
  nock.cleanAll();
});

const BOOK = '1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms';

const upserts = (changes: SourceChange[]): Record<string, SourceItem> => Object.fromEntries(changes.flatMap((c) => (c.kind === 'upsert' ? [[c.item.path, c.item]] : [])));
const deletes = (changes: SourceChange[]) => changes.flatMap((c) => (c.kind === 'delete' ? [c.sourceId] : [])).sort();
const calls = (fake: FakeSheets) => fake.seen.map((s) => s.call);

/** Tasks (first sheet): Name, Points, Due (a date), Done; an empty row; a second sheet "Q3 plan" whose table starts at B2. */
function book() {
  const fake = new FakeSheets(BOOK);
  fake.addSheet('Tasks', [
    ['Name', 'Points', 'Due', 'Done'],
    ['Write docs', 3, { serial: 45413, formatted: '2024-05-01' }, false],
    ['Ship', 5, null, true],
    [],
    ['Review', 1.5, { serial: 45444, formatted: '2024-06-01' }, null],
  ]);
  fake.addSheet('Q3 plan', [[], [null, 'Goal', 'Owner'], [null, 'Grow', 'Ada'], [null, 'Hire', 'Grace']]);
  fake.intercept();
  return fake;
}

const config = { path: 'sheets', spreadsheet_id: `https://docs.google.com/spreadsheets/d/${BOOK}/edit#gid=0`, key_column: 'Name' };

async function synced(fake: FakeSheets, cfg: Record<string, unknown> = config): Promise<{ h: Harness; cursor: string | null }> {
  const h = harness(googleSheetsConnector, SHEETS, cfg);
  const run = await pullAll(googleSheetsConnector, h, null);
  fake.seen.length = 0;
  return { h, cursor: run.cursor };
}

test.serial('first pull: the first sheet\'s rows as typed JSON keyed by the header row, one node per row named by its key', async (t) => {
  const fake = book();
  const h = harness(googleSheetsConnector, SHEETS, config);
  const run = await pullAll(googleSheetsConnector, h, null);
  const items = upserts(run.changes);
  t.deepEqual(Object.keys(items).sort(), ['Tasks/Review.json', 'Tasks/Ship.json', 'Tasks/Write docs.json']);
  t.deepEqual(items['Tasks/Write docs.json']!.content, { Name: 'Write docs', Points: 3, Due: '2024-05-01', Done: false });
  t.deepEqual(items['Tasks/Review.json']!.content, { Name: 'Review', Points: 1.5, Due: '2024-06-01', Done: null });
  t.is(items['Tasks/Ship.json']!.sourceId, '0:key:Ship');
  t.deepEqual(calls(fake), [`GET drive /drive/v3/files/${BOOK}`, `GET sheets /v4/spreadsheets/${BOOK}`, `GET sheets /v4/spreadsheets/${BOOK}/values:batchGet`]);
  t.deepEqual(fake.seen[0]!.query.fields, ['version,modifiedTime']);
  const get = fake.seen[2]!.query;
  t.deepEqual(get.ranges, ["'Tasks'"], 'the first sheet by default');
  t.deepEqual(get.valueRenderOption, ['UNFORMATTED_VALUE']);
  t.deepEqual(get.dateTimeRenderOption, ['FORMATTED_STRING']);
  for (const s of fake.seen) t.is(s.headers.authorization, `Bearer ${TOKEN}`);
  t.is(JSON.parse(run.cursor!).version, '1');
});

test.serial('chosen ranges without a key column: rows named by their row number, a table that starts at B2', async (t) => {
  const fake = book();
  const h = harness(googleSheetsConnector, SHEETS, { path: 'sheets', spreadsheet_id: BOOK, ranges: ["'Q3 plan'!B2:C", 'Tasks!A1:B'] });
  const run = await pullAll(googleSheetsConnector, h, null);
  const items = upserts(run.changes);
  t.deepEqual(Object.keys(items).sort(), ['Q3 plan/3.json', 'Q3 plan/4.json', 'Tasks/2.json', 'Tasks/3.json', 'Tasks/5.json']);
  t.deepEqual(items['Q3 plan/4.json']!.content, { Goal: 'Hire', Owner: 'Grace' });
  t.deepEqual(items['Tasks/2.json']!.content, { Name: 'Write docs', Points: 3 });
  t.is(items['Q3 plan/3.json']!.sourceId, '1001:row:3');
  t.deepEqual(fake.seen.at(-1)!.query.ranges, ["'Q3 plan'!B2:C", 'Tasks!A1:B']);
});

test.serial('incremental: an unchanged spreadsheet costs the version check alone; an edit reads the ranges and hands on only the changed row', async (t) => {
  const fake = book();
  const { h, cursor } = await synced(fake);
  const same = await pullAll(googleSheetsConnector, h, cursor);
  t.deepEqual(same.changes, []);
  t.deepEqual(calls(fake), [`GET drive /drive/v3/files/${BOOK}`]);

  fake.set('Tasks', 'B3', 8);
  fake.seen.length = 0;
  const run = await pullAll(googleSheetsConnector, h, same.cursor);
  t.deepEqual(calls(fake), [`GET drive /drive/v3/files/${BOOK}`, `GET sheets /v4/spreadsheets/${BOOK}`, `GET sheets /v4/spreadsheets/${BOOK}/values:batchGet`]);
  t.deepEqual(Object.keys(upserts(run.changes)), ['Tasks/Ship.json']);
  t.deepEqual(upserts(run.changes)['Tasks/Ship.json']!.content, { Name: 'Ship', Points: 8, Due: null, Done: true });
  t.is(JSON.parse(run.cursor!).version, '2');

  // A row inserted above keeps every keyed row's identity: only the new row comes.
  fake.insertRow('Tasks', 2, ['Plan', 2, null, false]);
  const inserted = await pullAll(googleSheetsConnector, h, run.cursor);
  t.deepEqual(Object.keys(upserts(inserted.changes)), ['Tasks/Plan.json']);
  t.deepEqual(deletes(inserted.changes), []);
});

test.serial('deletion: a row deleted in the sheet leaves; a changed key_column setting reads again', async (t) => {
  const fake = book();
  const { h, cursor } = await synced(fake);
  fake.deleteRow('Tasks', 3);
  const run = await pullAll(googleSheetsConnector, h, cursor);
  t.deepEqual(deletes(run.changes), ['0:key:Ship']);
  t.deepEqual(upserts(run.changes), {});

  h.ctx.config = { path: 'sheets', spreadsheet_id: BOOK };
  fake.seen.length = 0;
  const byRow = await pullAll(googleSheetsConnector, h, run.cursor);
  t.true(calls(fake).some((c) => c.endsWith('values:batchGet')), 'new settings read the ranges though the spreadsheet is unchanged');
  t.deepEqual(deletes(byRow.changes), ['0:key:Review', '0:key:Write docs']);
  t.deepEqual(Object.keys(upserts(byRow.changes)).sort(), ['Tasks/2.json', 'Tasks/4.json']);
});

test.serial('push: changed cells only in one batchUpdate, a new row appended, deletes cleared only with push_deletes', async (t) => {
  const fake = book();
  const { h } = await synced(fake);
  const ship = h.known.get('0:key:Ship')!;
  const docs = h.known.get('0:key:Write docs')!;
  const review = h.known.get('0:key:Review')!;
  const changes: LocalChange[] = [
    { kind: 'update', sourceId: ship.sourceId, known: ship, path: ship.path, type: 'json', content: { Name: 'Ship', Points: 13, Due: '2024-07-01', Done: true }, previous: { Name: 'Ship', Points: 5, Due: null, Done: true } },
    { kind: 'update', sourceId: docs.sourceId, known: docs, path: docs.path, type: 'json', content: { Name: 'Write docs', Points: 3, Due: '2024-05-01', Done: null }, previous: { Name: 'Write docs', Points: 3, Due: '2024-05-01', Done: false } },
    { kind: 'create', path: 'Tasks/anything.json', type: 'json', content: { Name: 'Celebrate', Points: 1, Done: false } },
    { kind: 'delete', sourceId: review.sourceId, known: review },
  ];
  const outcomes = await googleSheetsConnector.push!(h.ctx, changes);
  t.true(outcomes[0]!.ok && outcomes[1]!.ok && outcomes[2]!.ok, JSON.stringify(outcomes));
  t.deepEqual(outcomes[3], { ok: false, message: 'rows are cleared in the sheet only when the sync\'s push_deletes is on; clear the row in Google Sheets, or turn push_deletes on' });

  const update = fake.seen.find((s) => s.path.endsWith('values:batchUpdate'))!;
  t.deepEqual(update.body, {
    valueInputOption: 'USER_ENTERED',
    data: [
      { range: "'Tasks'!B3", majorDimension: 'ROWS', values: [[13]] },
      { range: "'Tasks'!C3", majorDimension: 'ROWS', values: [['2024-07-01']] },
      { range: "'Tasks'!D2", majorDimension: 'ROWS', values: [['']] },
    ],
  });
  const appended = fake.seen.find((s) => s.path.endsWith(':append'))!;
  t.is(appended.path, `/v4/spreadsheets/${BOOK}/values/'Tasks':append`);
  t.deepEqual(appended.query.valueInputOption, ['USER_ENTERED']);
  t.deepEqual(appended.query.insertDataOption, ['INSERT_ROWS']);
  t.deepEqual(appended.body, { range: "'Tasks'", majorDimension: 'ROWS', values: [['Celebrate', 1, '', false]] });
  t.like(outcomes[2], { ok: true, sourceId: '0:key:Celebrate', path: 'Tasks/Celebrate.json' });
  t.false(fake.seen.some((s) => s.path.endsWith('values:batchClear')));
  t.deepEqual(fake.sheet('Tasks')!.grid[2], ['Ship', 13, { serial: 45474, formatted: '2024-07-01' }, true], 'the date was entered as a date');
  t.deepEqual(fake.sheet('Tasks')!.grid[5], ['Celebrate', 1, null, false]);

  // The pushed rows read back as pushed: the next pull hands on nothing for them.
  for (const [i, o] of outcomes.entries()) if (o.ok && changes[i]!.kind === 'update') h.known.items.set(o.sourceId, { ...h.known.get(o.sourceId)!, sourceVersion: o.sourceVersion });
  const after = await pullAll(googleSheetsConnector, h, null);
  t.deepEqual(Object.keys(upserts(after.changes)), ['Tasks/Celebrate.json'], 'only the appended row is new to the pull');

  h.ctx.config = { ...config, push_deletes: true };
  fake.seen.length = 0;
  const [cleared] = await googleSheetsConnector.push!(h.ctx, [{ kind: 'delete', sourceId: review.sourceId, known: review }]);
  t.true(cleared!.ok);
  t.deepEqual(fake.seen.find((s) => s.path.endsWith('values:batchClear'))!.body, { ranges: ["'Tasks'!A5:D5"] });
  t.deepEqual(fake.sheet('Tasks')!.grid[4], [null, null, null, null]);
});

test.serial('push refusals: a protected cell fails alone (the batch is split), an unknown heading, a key change, a vanished row', async (t) => {
  const fake = book();
  const { h } = await synced(fake);
  fake.protectedCells.add('Tasks!B2');
  const docs = h.known.get('0:key:Write docs')!;
  const ship = h.known.get('0:key:Ship')!;
  const review = h.known.get('0:key:Review')!;
  fake.deleteRow('Tasks', 5); // Review vanishes at the source before the push
  const outcomes = await googleSheetsConnector.push!(h.ctx, [
    { kind: 'update', sourceId: docs.sourceId, known: docs, path: docs.path, type: 'json', content: { Name: 'Write docs', Points: 4, Due: '2024-05-01', Done: false }, previous: { Name: 'Write docs', Points: 3, Due: '2024-05-01', Done: false } },
    { kind: 'update', sourceId: ship.sourceId, known: ship, path: ship.path, type: 'json', content: { Name: 'Ship', Points: 6, Due: null, Done: true }, previous: { Name: 'Ship', Points: 5, Due: null, Done: true } },
    { kind: 'update', sourceId: ship.sourceId, known: ship, path: ship.path, type: 'json', content: { Name: 'Ship', Points: 5, Owner: 'Ada' }, previous: { Name: 'Ship', Points: 5 } },
    { kind: 'update', sourceId: ship.sourceId, known: ship, path: ship.path, type: 'json', content: { Name: 'Ship it', Points: 5, Due: null, Done: true }, previous: { Name: 'Ship', Points: 5, Due: null, Done: true } },
    { kind: 'update', sourceId: review.sourceId, known: review, path: review.path, type: 'json', content: { Name: 'Review', Points: 2 }, previous: { Name: 'Review', Points: 1.5 } },
  ]);
  t.deepEqual(outcomes[0], { ok: false, message: 'Google Sheets refused the change: You are trying to edit a protected cell or object. Please contact the spreadsheet owner to remove protection if you need to edit.' });
  t.true(outcomes[1]!.ok, 'the other edit of the refused batch went through on its own');
  t.is(fake.sheet('Tasks')!.grid[2]![1], 6);
  t.deepEqual(outcomes[2], { ok: false, message: '"Owner" is not a heading of the sheet "Tasks" (its headings: Name, Points, Due, Done)' });
  t.deepEqual(outcomes[3], { ok: false, message: 'the key column "Name" names the row: change it in Google Sheets' });
  t.deepEqual(outcomes[4], { ok: false, message: 'the row is no longer in the synced ranges of the sheet (moved, deleted or its key changed there)' });
  t.is(fake.seen.filter((s) => s.path.endsWith('values:batchUpdate')).length, 3, 'one batch, then each edit alone');
});

test.serial('rate limits: 429 RESOURCE_EXHAUSTED and a Drive 403 rateLimitExceeded are waited out; without Drive access every run reads the ranges', async (t) => {
  const fake = book();
  fake.interrupts.push({ path: /values:batchGet$/, status: 429, headers: { 'retry-after': '4' }, body: sheetsError(429, 'RESOURCE_EXHAUSTED', "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute per user' of service 'sheets.googleapis.com'").body });
  fake.interrupts.push({ path: /^\/drive\/v3\/files\//, status: 403, body: { error: { code: 403, message: 'Rate Limit Exceeded', errors: [{ message: 'Rate Limit Exceeded', domain: 'usageLimits', reason: 'rateLimitExceeded' }] } } });
  const h = harness(googleSheetsConnector, SHEETS, config);
  const run = await pullAll(googleSheetsConnector, h, null);
  t.is(Object.keys(upserts(run.changes)).length, 3);
  t.deepEqual(h.sleeps, [2000, 4000]);
  t.is(h.counters.rateLimitedMs, 6000);

  fake.driveScope = false;
  fake.seen.length = 0;
  const again = await pullAll(googleSheetsConnector, h, run.cursor);
  t.deepEqual(again.changes, [], 'nothing changed: nothing handed on');
  t.true(calls(fake).some((c) => c.endsWith('values:batchGet')), 'without the version, the ranges are read');
  t.is(JSON.parse(again.cursor!).version, null);
});
