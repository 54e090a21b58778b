import test from 'ava';
import nock from 'nock';
import { notionConnector } from '../../../src/platform/connectors/notion.ts';
import type { SourceChange } from '../../../src/platform/runtime/connector.ts';
import { harness, pullAll, TOKEN } from './fixtures/github/connectorHarness.ts';
import { FakeNotion, NOTION, text } from './fixtures/notion/fakeNotion.ts';

test.before(() => {
  nock.disableNetConnect();
});
test.afterEach.always(() => {
  nock.cleanAll();
});

const ROOT = '11111111-1111-4111-8111-111111111111';
const DB = '22222222-2222-4222-8222-222222222222';

const upserts = (changes: SourceChange[]) => Object.fromEntries(changes.flatMap((c) => (c.kind === 'upsert' ? [[c.item.path, c.item]] : [])));
const deletes = (changes: SourceChange[]) => changes.flatMap((c) => (c.kind === 'delete' ? [c.sourceId] : []));
const calls = (fake: FakeNotion) => fake.seen.map((s) => `${s.method} ${s.path}`);

/** Handbook (root) → Onboarding → Day one; Policies ×2 (namesakes); a page in a column; a page outside; a database of tasks. */
function workspace() {
  const fake = new FakeNotion();
  fake.addPage({ id: ROOT, title: 'Handbook', parent: { type: 'workspace', workspace: true } });
  fake.setContent(ROOT, [fake.paragraph(ROOT, 'Welcome to the handbook.')]);
  const onboarding = fake.addPage({ title: 'Onboarding', parent: { type: 'page_id', page_id: ROOT } });
  fake.setContent(onboarding, [
    fake.block('heading_2', { rich_text: [text('First week')], is_toggleable: false, color: 'default' }, onboarding),
    fake.block('to_do', { rich_text: [text('Get a laptop')], checked: true, color: 'default' }, onboarding),
  ]);
  const dayOne = fake.addPage({ title: 'Day one', parent: { type: 'page_id', page_id: onboarding } });
  fake.setContent(dayOne, [fake.paragraph(dayOne, 'Coffee first.')]);
  // Namesakes created at the same time: the smaller id keeps the plain name.
  const policies = fake.addPage({ id: 'aaaaaaaa-0000-4000-8000-000000000001', title: 'Policies', parent: { type: 'page_id', page_id: ROOT } });
  const policies2 = fake.addPage({ id: 'bbbbbbbb-0000-4000-8000-000000000002', title: 'Policies', parent: { type: 'page_id', page_id: ROOT } });
  // A page inside a column of the root: its parent is a block.
  const columns = fake.block('column_list', {}, ROOT, undefined, true);
  fake.children.get(ROOT)!.push(columns);
  const column = fake.block('column', {}, String(columns.id), undefined, true);
  fake.children.set(String(columns.id), [column]);
  fake.children.set(String(column.id), []);
  const inColumn = fake.addPage({ title: 'Side note', parent: { type: 'block_id', block_id: String(column.id) } });
  const outside = fake.addPage({ title: 'Private diary', parent: { type: 'workspace', workspace: true } });
  fake.addDatabase({
    id: DB,
    title: 'Tasks',
    properties: {
      Name: { id: 'title', name: 'Name', type: 'title', title: {} },
      Points: { id: 'pts', name: 'Points', type: 'number', number: { format: 'number' } },
      Stage: { id: 'stg', name: 'Stage', type: 'select', select: { options: [] } },
    },
  });
  const row = (title: string, points: number) =>
    fake.addPage({
      title,
      parent: { type: 'database_id', database_id: DB },
      properties: {
        Name: { id: 'title', type: 'title', title: [text(title)] },
        Points: { id: 'pts', type: 'number', number: points },
        Stage: { id: 'stg', type: 'select', select: { id: 's1', name: 'Todo', color: 'gray' } },
      },
    });
  const rows = [row('Write docs', 3), row('Ship', 5)];
  fake.intercept();
  return { fake, onboarding, dayOne, policies, policies2, inColumn, outside, rows };
}

const config = { path: 'notion', root_page_id: ROOT.replace(/-/g, ''), database_ids: [`https://www.notion.so/acme/${DB.replace(/-/g, '')}?v=123`] };

test.serial('first pull: the root and its sub-pages as Markdown in folders, rows as JSON; Notion\'s headers and pagination', async (t) => {
  const w = workspace();
  w.fake.pageSize = 3; // every listing paginates
  const h = harness(notionConnector, NOTION, config);
  const run = await pullAll(notionConnector, h, null);
  const items = upserts(run.changes);
  t.deepEqual(Object.keys(items).sort(), [
    'Handbook.md',
    'Handbook/Onboarding.md',
    'Handbook/Onboarding/Day one.md',
    'Handbook/Policies (' + w.policies2.slice(0, 8) + ').md',
    'Handbook/Policies.md',
    'Handbook/Side note.md',
    'Tasks/Ship.json',
    'Tasks/Write docs.json',
  ]);
  t.is(items['Handbook/Onboarding.md'].sourceId, w.onboarding);
  t.is(items['Handbook/Onboarding.md'].content, '## First week\n\n- [x] Get a laptop\n\n[Day one](<Onboarding/Day one.md>)\n');
  t.is(
    items['Handbook.md'].content,
    `Welcome to the handbook.\n\n[Onboarding](Handbook/Onboarding.md)\n\n[Policies](Handbook/Policies.md)\n\n[Policies](<Handbook/Policies (${w.policies2.slice(0, 8)}).md>)\n\n[Side note](<Handbook/Side note.md>)\n`,
  );
  t.deepEqual(items['Tasks/Write docs.json'].content, { Name: 'Write docs', Points: 3, Stage: 'Todo' });
  t.is(items['Tasks/Ship.json'].type, 'json');
  t.false(Object.values(items).some((i) => i.sourceId === w.outside), 'a page outside the root is not synced');

  for (const s of w.fake.seen) {
    t.is(s.headers.authorization, `Bearer ${TOKEN}`);
    t.is(s.headers['notion-version'], '2022-06-28');
  }
  const searches = w.fake.seen.filter((s) => s.path === '/v1/search');
  t.deepEqual(searches[0].body, { filter: { property: 'object', value: 'page' }, sort: { direction: 'descending', timestamp: 'last_edited_time' }, page_size: 100 });
  t.truthy(searches[1].body?.start_cursor, 'the next page of the search asks with start_cursor');
  const rootChildren = w.fake.seen.filter((s) => s.path === `/v1/blocks/${ROOT}/children`);
  t.deepEqual(rootChildren[0].query, { page_size: '100' });
  t.truthy(rootChildren[1]?.query.start_cursor, 'block children paginate with start_cursor');
  const query = w.fake.seen.find((s) => s.path === `/v1/databases/${DB}/query`)!;
  t.deepEqual(query.body, { sorts: [{ timestamp: 'last_edited_time', direction: 'ascending' }], page_size: 100 }, 'a first pull lists every row');
  t.false(calls(w.fake).includes(`GET /v1/blocks/${w.outside}/children`), 'no content fetched for pages outside the root');
  t.true(calls(w.fake).some((c) => c.startsWith('GET /v1/blocks/') && !c.endsWith('/children')), 'the column\'s page was placed by climbing its block parent');
  const cursor = JSON.parse(run.cursor!);
  t.truthy(cursor.pages);
  t.is(cursor.dbs[DB].folder, 'Tasks');
});

test.serial('an unchanged workspace: a search page, the database and its query; no content fetched, no change', async (t) => {
  const w = workspace();
  const h = harness(notionConnector, NOTION, config);
  const first = await pullAll(notionConnector, h, null);
  w.fake.seen.length = 0;
  const again = await pullAll(notionConnector, h, first.cursor);
  t.deepEqual(again.changes, []);
  t.deepEqual(calls(w.fake), ['GET /v1/databases/' + DB, 'POST /v1/search', `POST /v1/databases/${DB}/query`]);
  const query = w.fake.seen.at(-1)!.body as { filter: { timestamp: string; last_edited_time: { on_or_after: string } } };
  t.is(query.filter.timestamp, 'last_edited_time');
  t.is(Date.parse(query.filter.last_edited_time.on_or_after), Date.parse(JSON.parse(first.cursor!).dbs[DB].since) - 5 * 60_000, 'rows edited since the cursor, with overlap');
});

test.serial('incremental: only edited pages are fetched; a rename is a move of the page and its sub-pages; an archived page goes', async (t) => {
  const w = workspace();
  const h = harness(notionConnector, NOTION, config);
  const first = await pullAll(notionConnector, h, null);

  w.fake.setContent(w.dayOne, [w.fake.paragraph(w.dayOne, 'Tea first.')]);
  w.fake.rename(w.onboarding, 'Getting started');
  w.fake.pages.get(w.policies)!.archived = true;
  w.fake.touch(w.policies);
  w.fake.seen.length = 0;

  const run = await pullAll(notionConnector, h, first.cursor);
  const items = upserts(run.changes);
  t.deepEqual(Object.keys(items).sort(), ['Handbook.md', 'Handbook/Getting started.md', 'Handbook/Getting started/Day one.md']);
  t.is(items['Handbook/Getting started.md'].sourceId, w.onboarding, 'same source id: a move');
  t.is(items['Handbook/Getting started/Day one.md'].content, 'Tea first.\n');
  t.true(String(items['Handbook.md'].content).includes('[Getting started](<Handbook/Getting started.md>)'), 'the root links to the new path');
  t.deepEqual(deletes(run.changes), [w.policies]);
  const fetched = w.fake.seen.filter((s) => s.path.endsWith('/children')).map((s) => s.path.split('/')[3]);
  t.false(fetched.includes(w.policies2), 'an unchanged page is not fetched');
  t.false(fetched.includes(w.inColumn));

  // The namesake keeps its name (a stable path), though it is alone now.
  t.is(h.known.get(w.policies2)?.path, `Handbook/Policies (${w.policies2.slice(0, 8)}).md`);
});

test.serial('rows: an edited row is updated; a reconciling run finds rows and pages deleted for good', async (t) => {
  const w = workspace();
  const h = harness(notionConnector, NOTION, { ...config, reconcile_minutes: 0 });
  const first = await pullAll(notionConnector, h, null);
  const ship = w.rows[1];
  ((w.fake.pages.get(ship)!.properties as Record<string, Record<string, unknown>>).Points).number = 8;
  w.fake.touch(ship);
  w.fake.remove(w.rows[0]); // gone for good: no longer listed at all
  w.fake.remove(w.dayOne);
  w.fake.seen.length = 0;

  const run = await pullAll(notionConnector, h, first.cursor);
  t.deepEqual(upserts(run.changes)['Tasks/Ship.json'].content, { Name: 'Ship', Points: 8, Stage: 'Todo' });
  t.deepEqual(deletes(run.changes).sort(), [w.dayOne, w.rows[0]].sort());
  t.true(calls(w.fake).includes(`GET /v1/pages/${w.dayOne}`), 'a page missing from the full listing is asked for before it is deleted');
  const parent = String(upserts(run.changes)['Handbook/Onboarding.md']?.content);
  t.true(parent.includes('First week') && !parent.includes('Day one'), 'its parent no longer links to it');
});

test.serial('a 429 is waited out (Retry-After); a missing database fails with Notion\'s message', async (t) => {
  const w = workspace();
  w.fake.interrupts.push({ path: /^\/v1\/search$/, status: 429, headers: { 'retry-after': '2' }, body: { object: 'error', status: 429, code: 'rate_limited', message: 'You have been rate limited. Please try again in a few minutes.' } });
  const h = harness(notionConnector, NOTION, config);
  const run = await pullAll(notionConnector, h, null);
  t.is(Object.keys(upserts(run.changes)).length, 8);
  t.deepEqual(h.sleeps, [2000]);
  t.is(h.counters.rateLimitedMs, 2000);

  const h2 = harness(notionConnector, NOTION, { ...config, database_ids: ['33333333333343338333333333333333'] });
  await t.throwsAsync(pullAll(notionConnector, h2, null), { message: /notion answered 404: Could not find database with ID: 33333333-3333-4333-8333-333333333333/ });
});

test.serial('push: a page\'s Markdown replaces its blocks around its child pages; a row edit patches typed properties', async (t) => {
  const w = workspace();
  const h = harness(notionConnector, NOTION, config);
  await pullAll(notionConnector, h, null);
  const known = h.known.get(w.onboarding)!;
  const oldBlocks = w.fake.children.get(w.onboarding)!.filter((b) => b.type !== 'child_page').map((b) => b.id);
  w.fake.seen.length = 0;

  const markdown = '# Onboarding guide\n\nRead [Day one](<Onboarding/Day one.md>) first.\n\n[Day one](<Onboarding/Day one.md>)\n\n- step\n  - sub\n    - subsub\n';
  const [outcome] = await notionConnector.push!(h.ctx, [{ kind: 'update', sourceId: w.onboarding, known, path: known.path, type: 'markdown', content: markdown, previous: known }]);
  t.true(outcome.ok, JSON.stringify(outcome));

  const list = w.fake.children.get(w.onboarding)!.at(-1)!;
  t.deepEqual(calls(w.fake), [
    `GET /v1/blocks/${w.onboarding}/children`,
    `PATCH /v1/blocks/${w.onboarding}/children`,
    `PATCH /v1/blocks/${w.onboarding}/children`,
    `PATCH /v1/blocks/${list.id}/children`,
    ...oldBlocks.map((id) => `DELETE /v1/blocks/${id}`),
    `GET /v1/pages/${w.onboarding}`,
  ]);
  const [before, after] = w.fake.seen.filter((s) => s.path === `/v1/blocks/${w.onboarding}/children` && s.method === 'PATCH');
  t.is(before.body?.after, oldBlocks[0], 'the text before the child page goes where the old text began');
  t.is(after.body?.after, w.dayOne, 'the text after it goes after it');
  const types = w.fake.children.get(w.onboarding)!.map((b) => b.type);
  t.deepEqual(types, ['heading_1', 'paragraph', 'child_page', 'bulleted_list_item'], 'in the Markdown\'s order, the child page kept');
  const paragraph = w.fake.children.get(w.onboarding)![1].paragraph as { rich_text: { type: string; mention?: unknown }[] };
  t.deepEqual(paragraph.rich_text.map((r) => r.type), ['text', 'mention', 'text'], 'a link to a synced page is a mention');
  const sub = w.fake.children.get(String(list.id))!;
  t.is(sub.length, 1);
  t.is(w.fake.children.get(String(sub[0].id))!.length, 1, 'nesting deeper than two levels is appended level by level');

  const row = h.known.get(w.rows[0])!;
  w.fake.seen.length = 0;
  const [rowOutcome] = await notionConnector.push!(h.ctx, [
    { kind: 'update', sourceId: w.rows[0], known: row, path: row.path, type: 'json', content: { Name: 'Write docs', Points: 4, Stage: 'Done' }, previous: { Name: 'Write docs', Points: 3, Stage: 'Todo' } },
  ]);
  t.true(rowOutcome.ok);
  t.deepEqual(w.fake.seen.map((s) => [s.method, s.path, s.body]), [
    ['GET', `/v1/databases/${DB}`, null],
    ['PATCH', `/v1/pages/${w.rows[0]}`, { properties: { Points: { number: 4 }, Stage: { select: { name: 'Done' } } } }],
  ]);
  t.not(rowOutcome.ok && rowOutcome.sourceVersion, row.sourceVersion);
});

test.serial('push refuses what cannot go back: a page with blocks Markdown cannot carry, a computed property, a move', async (t) => {
  const w = workspace();
  const root = w.fake.children.get(ROOT)!;
  root.push(w.fake.block('image', { type: 'file', file: { url: 'https://prod-files-secure.s3.us-west-2.amazonaws.com/a.png?X-Amz-Signature=x', expiry_time: '2024-05-01T11:00:00.000Z' }, caption: [] }, ROOT));
  const db = w.fake.databases.get(DB)!;
  (db.properties as Record<string, unknown>).Total = { id: 'tot', name: 'Total', type: 'formula', formula: { expression: '1' } };
  const h = harness(notionConnector, NOTION, config);
  await pullAll(notionConnector, h, null);
  w.fake.seen.length = 0;
  const rootKnown = h.known.get(ROOT)!;
  const row = h.known.get(w.rows[0])!;
  const out = await notionConnector.push!(h.ctx, [
    { kind: 'update', sourceId: ROOT, known: rootKnown, path: rootKnown.path, type: 'markdown', content: 'new', previous: '' },
    { kind: 'update', sourceId: w.rows[0], known: row, path: row.path, type: 'json', content: { Total: 2 }, previous: { Total: 1 } },
    { kind: 'update', sourceId: w.dayOne, known: h.known.get(w.dayOne)!, path: 'elsewhere.md', type: 'markdown', content: 'x', previous: '' },
    { kind: 'create', path: 'Handbook/New.md', type: 'markdown', content: 'x' },
  ]);
  t.deepEqual(out.map((o) => !o.ok && o.message), [
    'the page holds column, column_list, uploaded image, which Markdown cannot carry back: edit it in Notion',
    '"Total" is a formula property, computed by Notion: it cannot be changed here',
    'moving or renaming a Notion page or row here is not sent back: rename it in Notion',
    'creating Notion pages or rows from here is not supported: do it in Notion',
  ]);
  t.deepEqual(calls(w.fake), [`GET /v1/databases/${DB}`], 'nothing was written');
});

test.serial('config: a root page or databases, given as ids or addresses', (t) => {
  t.notThrows(() => notionConnector.validateConfig!({ root_page_id: `https://www.notion.so/Handbook-${ROOT.replace(/-/g, '')}` }));
  t.notThrows(() => notionConnector.validateConfig!({ database_ids: [DB] }));
  t.throws(() => notionConnector.validateConfig!({}), { message: /root_page_id/ });
  t.throws(() => notionConnector.validateConfig!({ root_page_id: 'not-an-id' }), { message: /root_page_id/ });
  t.throws(() => notionConnector.validateConfig!({ database_ids: ['nope'] }), { message: /"nope" is not a Notion database id/ });
  t.throws(() => notionConnector.validateConfig!({ root_page_id: ROOT, reconcile_minutes: -1 }), { message: /reconcile_minutes/ });
});
