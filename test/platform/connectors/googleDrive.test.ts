import test from 'ava';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import { googleDriveConnector } from '../../../src/platform/connectors/googleDrive.ts';
import type { SourceChange, SourceItem } from '../../../src/platform/runtime/connector.ts';
import { writePdf } from '../../ingest/fixtures/pdf.ts';
import { harness, pullAll, TOKEN } from './fixtures/github/connectorHarness.ts';
import { driveError, DOC, FORM, SHEET, SLIDES } from './fixtures/googleDrive/driveModel.ts';
import { DRIVE, FakeDrive } from './fixtures/googleDrive/fakeDrive.ts';

test.before(() => {
  nock.disableNetConnect();
});
test.afterEach.always(() => {
  nock.cleanAll();
});

const ROOT = 'rootFolder0000000001';
const OUTSIDE = 'otherFolder000000001';

const upserts = (changes: SourceChange[]): Record<string, SourceItem> => Object.fromEntries(changes.flatMap((c) => (c.kind === 'upsert' ? [[c.item.path, c.item]] : [])));
const deletes = (changes: SourceChange[]) => changes.flatMap((c) => (c.kind === 'delete' ? [c.sourceId] : [])).sort();
const calls = (fake: FakeDrive) => fake.seen.map((s) => s.call);

/**
 * Handbook (root) → Guides → Setup; a Doc, a Sheet, Slides, a Form, a PNG, a Markdown file, a
 * file in two folders (one outside), and a folder outside the tree with a file.
 */
function drive() {
  const fake = new FakeDrive();
  fake.add({ id: ROOT, name: 'Handbook', mimeType: 'application/vnd.google-apps.folder', parents: ['myDriveRoot'] });
  fake.add({ id: OUTSIDE, name: 'Private', mimeType: 'application/vnd.google-apps.folder', parents: ['myDriveRoot'] });
  const guides = fake.folder('Guides', ROOT, 'guidesFolder00000001');
  const setup = fake.folder('Setup', guides, 'setupFolder000000001');
  const welcome = fake.add({ name: 'Welcome', mimeType: DOC, parents: [ROOT], content: '# Welcome\n\nRead the **guides**.\n' });
  const budget = fake.add({ name: 'Budget 2024', mimeType: SHEET, parents: [guides], content: 'Item,Amount,Approved,Code\nLaptop,1200.5,TRUE,007\nDesk,300,false,\n\n' });
  const deck = fake.add({ name: 'Kickoff', mimeType: SLIDES, parents: [guides], content: Buffer.from('%PDF-1.4 slides') });
  const form = fake.add({ name: 'Survey', mimeType: FORM, parents: [ROOT] });
  const logo = fake.add({ name: 'logo.png', mimeType: 'image/png', parents: [setup], content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]) });
  const notes = fake.add({ name: 'notes.md', mimeType: 'text/markdown', parents: [setup], content: '# Notes\n' });
  const shared = fake.add({ name: 'shared.txt', mimeType: 'text/plain', parents: [OUTSIDE, guides], content: 'in two folders' });
  const secret = fake.add({ name: 'secret.txt', mimeType: 'text/plain', parents: [OUTSIDE], content: 'not synced' });
  const video = fake.add({ name: 'all-hands.mp4', mimeType: 'video/mp4', parents: [ROOT], content: 'a large video', declaredSize: 2 * 1024 ** 3 });
  fake.intercept();
  return { fake, guides, setup, welcome, budget, deck, form, logo, notes, shared, secret, video };
}

const config = { path: 'drive', folder_id: `https://drive.google.com/drive/folders/${ROOT}?usp=sharing` };

test.serial('first pull: the tree at its folder paths; Docs as Markdown, Sheets as typed rows, Slides as PDF, files as they are', async (t) => {
  const d = drive();
  d.fake.pageSize = 2; // every listing paginates
  const h = harness(googleDriveConnector, DRIVE, config);
  const run = await pullAll(googleDriveConnector, h, null);
  const items = upserts(run.changes);
  t.deepEqual(Object.keys(items).sort(), ['Guides/Budget 2024.json', 'Guides/Kickoff.pdf', 'Guides/Setup/logo.png', 'Guides/Setup/notes.md', 'Guides/shared.txt', 'Welcome.md']);
  t.is(items['Welcome.md']!.type, 'markdown');
  t.is(items['Welcome.md']!.content, '# Welcome\n\nRead the **guides**.\n');
  t.is(items['Welcome.md']!.sourceId, d.welcome);
  t.deepEqual(items['Guides/Budget 2024.json']!.content, [
    { Item: 'Laptop', Amount: 1200.5, Approved: true, Code: '007' },
    { Item: 'Desk', Amount: 300, Approved: false, Code: null },
  ]);
  t.is(items['Guides/Kickoff.pdf']!.type, 'file');
  t.deepEqual(items['Guides/Kickoff.pdf']!.content, Buffer.from('%PDF-1.4 slides'));
  t.deepEqual(items['Guides/Setup/logo.png']!.content, Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]));
  t.is(items['Guides/Setup/notes.md']!.type, 'markdown', 'a Markdown file is a Markdown node');
  t.is(items['Guides/shared.txt']!.sourceId, d.shared, 'a file in two folders is placed under the one in the tree');
  t.true(items['Guides/Setup/logo.png']!.sourceVersion.startsWith('md5:'));
  t.true(items['Welcome.md']!.sourceVersion.startsWith('mtime:'));

  for (const s of d.fake.seen) t.is(s.headers.authorization, `Bearer ${TOKEN}`);
  const c = calls(d.fake);
  t.is(c[0], `GET /drive/v3/files/${ROOT}`, 'the folder is checked first');
  t.is(c[1], 'GET /drive/v3/changes/startPageToken', 'the change token is taken before listing');
  const lists = d.fake.seen.filter((s) => s.path === '/drive/v3/files');
  t.is(lists[0]!.query.q, `('${ROOT}' in parents) and trashed = false`);
  t.true(lists[0]!.query.fields!.includes('files(id,name,mimeType,parents'), 'listings ask for parents and versions');
  t.truthy(lists.find((s) => s.query.pageToken), 'listings paginate');
  t.false(c.some((x) => x.includes(d.secret) || x.includes(d.form)), 'nothing outside the tree, and no Form, is fetched');
  t.false(c.some((x) => x.includes(d.video)), 'a file over 64 MiB is not downloaded');
  t.true(c.includes(`GET /drive/v3/files/${d.welcome}/export mimeType=text/markdown`));
  t.true(c.includes(`GET /drive/v3/files/${d.budget}/export mimeType=text/csv`));
  t.true(c.includes(`GET /drive/v3/files/${d.logo} alt=media`));
  const cursor = JSON.parse(run.cursor!);
  t.is(cursor.token, String(d.fake.log.length));
  t.deepEqual(Object.keys(cursor.folders).sort(), [d.guides, d.setup].sort());
});

test.serial('incremental: only changes.list from the stored token and the changed files; changes outside the tree are ignored', async (t) => {
  const d = drive();
  const h = harness(googleDriveConnector, DRIVE, config);
  const first = await pullAll(googleDriveConnector, h, null);
  const token = JSON.parse(first.cursor!).token;

  d.fake.edit(d.welcome, '# Welcome\n\nUpdated.\n');
  const added = d.fake.add({ name: 'todo.txt', mimeType: 'text/plain', parents: [d.setup], content: 'buy milk' });
  d.fake.edit(d.secret, 'still not synced');
  d.fake.seen.length = 0;

  const run = await pullAll(googleDriveConnector, h, first.cursor);
  t.deepEqual(calls(d.fake), [`GET /drive/v3/changes pageToken=${token}`, `GET /drive/v3/files/${d.welcome}/export mimeType=text/markdown`, `GET /drive/v3/files/${added} alt=media`]);
  const feed = d.fake.seen[0]!;
  t.is(feed.query.includeRemoved, 'true');
  t.true(feed.query.fields!.includes('newStartPageToken') && feed.query.fields!.includes('file(id,name,mimeType,parents,trashed'));
  const items = upserts(run.changes);
  t.deepEqual(Object.keys(items).sort(), ['Guides/Setup/todo.txt', 'Welcome.md']);
  t.is(items['Welcome.md']!.content, '# Welcome\n\nUpdated.\n');
  t.deepEqual(deletes(run.changes), []);
  t.is(JSON.parse(run.cursor!).token, String(d.fake.log.length), 'the new start token is kept');

  d.fake.seen.length = 0;
  const again = await pullAll(googleDriveConnector, h, run.cursor);
  t.deepEqual(again.changes, []);
  t.deepEqual(calls(d.fake), [`GET /drive/v3/changes pageToken=${d.fake.log.length}`], 'no change: one call');
});

test.serial('renames and moves: same source id at the new path; a renamed folder moves its files; moved out is deleted, moved in is listed', async (t) => {
  const d = drive();
  const h = harness(googleDriveConnector, DRIVE, config);
  const first = await pullAll(googleDriveConnector, h, null);

  d.fake.rename(d.welcome, 'Start here');
  d.fake.move(d.notes, [d.guides]);
  d.fake.rename(d.setup, 'Installation');
  d.fake.move(d.deck, [OUTSIDE]);
  d.fake.move(OUTSIDE, [ROOT]); // the outside folder (with secret.txt and shared.txt) moves in
  d.fake.seen.length = 0;

  const run = await pullAll(googleDriveConnector, h, first.cursor);
  const items = upserts(run.changes);
  t.is(items['Start here.md']?.sourceId, d.welcome, 'a renamed Doc keeps its source id');
  t.is(items['Guides/notes.md']?.sourceId, d.notes, 'a moved file keeps its source id');
  t.is(items['Guides/Installation/logo.png']?.sourceId, d.logo, 'the files of a renamed folder move with it');
  t.is(items['Private/secret.txt']?.sourceId, d.secret, 'a folder moved in is listed');
  t.is(items['Private/Kickoff.pdf']?.sourceId, d.deck, 'a file moved into a folder moved in follows it');
  t.is(h.known.get(d.shared)?.path, 'Guides/shared.txt', 'a file in two folders keeps its first place in the tree');
  t.deepEqual(deletes(run.changes), []);
  t.true(calls(d.fake).some((c) => c === 'GET /drive/v3/files'), 'the folder moved in is listed');
  const lists = d.fake.seen.filter((s) => s.path === '/drive/v3/files');
  t.deepEqual(lists.map((s) => s.query.q), [`('${OUTSIDE}' in parents) and trashed = false`], 'only the folder that joined is listed');

  d.fake.move(OUTSIDE, ['myDriveRoot']);
  const out = await pullAll(googleDriveConnector, h, run.cursor);
  t.deepEqual(deletes(out.changes), [d.deck, d.secret].sort(), 'a folder moved out takes its files along (shared.txt stays, through its other parent)');
  t.is(h.known.get(d.shared)?.path, 'Guides/shared.txt');
});

test.serial('deletions: a trashed file, a file deleted for good and a trashed folder\'s files leave', async (t) => {
  const d = drive();
  const h = harness(googleDriveConnector, DRIVE, config);
  const first = await pullAll(googleDriveConnector, h, null);
  d.fake.trash(d.budget);
  d.fake.remove(d.welcome);
  d.fake.trash(d.setup);
  d.fake.seen.length = 0;
  const run = await pullAll(googleDriveConnector, h, first.cursor);
  t.deepEqual(deletes(run.changes), [d.budget, d.logo, d.notes, d.welcome].sort());
  t.deepEqual(upserts(run.changes), {});
  t.deepEqual(calls(d.fake), [`GET /drive/v3/changes pageToken=${JSON.parse(first.cursor!).token}`], 'deleting fetches nothing');
  t.false(d.setup in JSON.parse(run.cursor!).folders, 'the trashed folder left the tree');
});

test.serial('an expired page token: a full listing under the same source ids, fetching only what changed', async (t) => {
  const d = drive();
  const h = harness(googleDriveConnector, DRIVE, config);
  const first = await pullAll(googleDriveConnector, h, null);
  const ids = new Map([...h.known.items.values()].map((k) => [k.path, k.sourceId]));
  d.fake.edit(d.notes, '# Notes\n\nmore\n');
  d.fake.trash(d.logo);
  d.fake.oldestToken = d.fake.log.length + 1; // every earlier token is refused
  d.fake.seen.length = 0;

  const run = await pullAll(googleDriveConnector, h, first.cursor);
  const c = calls(d.fake);
  t.is(c[0], `GET /drive/v3/changes pageToken=${JSON.parse(first.cursor!).token}`);
  t.is(c[1], `GET /drive/v3/files/${ROOT}`, 'refused: the tree is listed again');
  t.deepEqual(Object.keys(upserts(run.changes)), ['Guides/Setup/notes.md'], 'only the edited file is fetched and written');
  t.deepEqual(deletes(run.changes), [d.logo]);
  t.false(c.some((x) => x.endsWith('alt=media') && !x.includes(d.notes)), 'unchanged files are not downloaded again');
  for (const k of h.known.items.values()) t.is(ids.get(k.path), k.sourceId, `${k.path} keeps its source id`);
  t.is(h.known.size, 5, 'no duplicates');
  t.is(JSON.parse(run.cursor!).token, String(d.fake.log.length));
});

test.serial('rate limits: 429 with Retry-After and 403 userRateLimitExceeded are waited out; another 403 fails with Google\'s words', async (t) => {
  const d = drive();
  d.fake.interrupts.push({ path: /^\/drive\/v3\/files$/, answer: { ...driveError(429, 'rateLimitExceeded', 'Rate Limit Exceeded'), headers: { 'content-type': 'application/json', 'retry-after': '3' } } });
  d.fake.interrupts.push({ path: new RegExp(`/files/${d.logo}$`), answer: driveError(403, 'userRateLimitExceeded', 'User rate limit exceeded.') });
  const h = harness(googleDriveConnector, DRIVE, config);
  const run = await pullAll(googleDriveConnector, h, null);
  t.is(Object.keys(upserts(run.changes)).length, 6);
  t.deepEqual(h.sleeps, [3000, 2000]);
  t.is(h.counters.rateLimitedMs, 5000);

  nock.cleanAll();
  const d2 = drive();
  d2.fake.interrupts.push({ path: new RegExp(`/files/${d2.logo}$`), answer: driveError(403, 'insufficientFilePermissions', 'The user does not have sufficient permissions for this file.') });
  const h2 = harness(googleDriveConnector, DRIVE, config);
  await t.throwsAsync(pullAll(googleDriveConnector, h2, null), { message: /google-drive answered 403: The user does not have sufficient permissions for this file/ });
});

test.serial('a Doc whose Markdown export is refused comes as text; a folder id that is a file is refused', async (t) => {
  const d = drive();
  d.fake.markdownExport = false;
  const h = harness(googleDriveConnector, DRIVE, config);
  const run = await pullAll(googleDriveConnector, h, null);
  t.is(upserts(run.changes)['Welcome.md']!.content, ' Welcome\n\nRead the guides.\n');
  t.true(calls(d.fake).includes(`GET /drive/v3/files/${d.welcome}/export mimeType=text/plain`));

  const h2 = harness(googleDriveConnector, DRIVE, { ...config, folder_id: d.logo });
  await t.throwsAsync(pullAll(googleDriveConnector, h2, null), { message: /is not a Drive folder/ });
  t.throws(() => googleDriveConnector.validateConfig!({ folder_id: 'https://example.com/nothing' }), { message: /folder_id is the id of a Drive folder/ });
});

test.serial('convert: a PDF becomes Markdown through the ingestion converters; turning it on re-lists and converts', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'drive-pdf-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writePdf(join(dir, 'r.pdf'), [['Quarterly report', 'Revenue grew.']]);
  const d = drive();
  const report = d.fake.add({ name: 'report.pdf', mimeType: 'application/pdf', parents: [ROOT], content: readFileSync(join(dir, 'r.pdf')) });
  const h = harness(googleDriveConnector, DRIVE, config);
  const plain = await pullAll(googleDriveConnector, h, null);
  t.is(upserts(plain.changes)['report.pdf']!.type, 'file');

  h.ctx.config = { ...config, convert: true };
  d.fake.seen.length = 0;
  const run = await pullAll(googleDriveConnector, h, plain.cursor);
  const items = upserts(run.changes);
  t.is(items['report.md']?.sourceId, report, 'the same item, now Markdown');
  t.regex(String(items['report.md']?.content), /Quarterly report[\s\S]*Revenue grew\./);
  t.is(items['Guides/Kickoff.pdf']?.type, 'file', 'slides whose PDF the converter cannot read stay a PDF');
  t.false('Guides/Kickoff.md' in items);
  t.true(calls(d.fake).includes(`GET /drive/v3/files/${ROOT}`), 'a change of convert lists the tree again');
  t.false(calls(d.fake).some((c) => c.includes(d.welcome)), 'items that convert does not concern are not fetched again');
});

test.serial('a folder in a shared drive: listings, the start token and the change feed name its drive', async (t) => {
  const fake = new FakeDrive();
  const SHARED = '0ASharedDrive00000001';
  fake.add({ id: ROOT, name: 'Team drive folder', mimeType: 'application/vnd.google-apps.folder', parents: [SHARED], driveId: SHARED });
  const doc = fake.add({ name: 'Charter', mimeType: DOC, parents: [ROOT], content: '# Charter\n', driveId: SHARED });
  fake.intercept();
  const h = harness(googleDriveConnector, DRIVE, config);
  const first = await pullAll(googleDriveConnector, h, null);
  t.is(upserts(first.changes)['Charter.md']?.sourceId, doc);
  const list = fake.seen.find((s) => s.path === '/drive/v3/files')!;
  t.like(list.query, { corpora: 'drive', driveId: SHARED, includeItemsFromAllDrives: 'true', supportsAllDrives: 'true' });
  t.is(fake.seen.find((s) => s.path === '/drive/v3/changes/startPageToken')!.query.driveId, SHARED);
  t.is(JSON.parse(first.cursor!).driveId, SHARED);
  await pullAll(googleDriveConnector, h, first.cursor);
  t.like(fake.seen.at(-1)!.query, { driveId: SHARED, includeItemsFromAllDrives: 'true', supportsAllDrives: 'true' });
});
