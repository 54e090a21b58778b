import test from 'ava';
import nock from 'nock';
import { googleDocsConnector } from '../../../src/platform/connectors/googleDocs.ts';
import { renderDocument } from '../../../src/platform/connectors/googleDocs/render.ts';
import type { DocsDocument } from '../../../src/platform/connectors/googleDocs/types.ts';
import type { LocalChange, SourceChange } from '../../../src/platform/runtime/connector.ts';
import { harness, pullAll, TOKEN } from './fixtures/github/connectorHarness.ts';
import { DOCS, FakeGoogleDocs } from './fixtures/googleDocs/fakeGoogleDocs.ts';
import { FlatDoc } from './fixtures/googleDocs/flatDoc.ts';
import { meetingNotes, NOTES_ID, PLAN_ID, PLAN_MARKDOWN, projectPlan } from './fixtures/googleDocs/sampleDocument.ts';

// The google-docs connector over the runtime's real SourceHttp, against Docs and Drive on nock
// (FakeGoogleDocs: documents.get, documents.batchUpdate applied as Google does, Drive files.get).

test.before(() => {
  nock.disableNetConnect();
});
test.afterEach.always(() => {
  nock.cleanAll();
});

const NOTES_MARKDOWN = '# Meeting notes\n\nDecisions were made.\n';
const config = { path: 'docs', document_ids: [PLAN_ID, `https://docs.google.com/document/d/${NOTES_ID}/edit?usp=sharing`], push: true };

const upserts = (changes: SourceChange[]) => Object.fromEntries(changes.flatMap((c) => (c.kind === 'upsert' ? [[c.item.path, c.item]] : [])));
const deletes = (changes: SourceChange[]) => changes.flatMap((c) => (c.kind === 'delete' ? [c.sourceId] : []));
const calls = (fake: FakeGoogleDocs) => fake.seen.map((s) => `${s.method} ${s.host}${s.path}`);
const rendered = (fake: FakeGoogleDocs, id: string) => renderDocument(fake.documentJson(id, 'PREVIEW_WITHOUT_SUGGESTIONS') as unknown as DocsDocument).markdown;
const googleError = (code: number, status: string, message: string, reason?: string) => ({ error: { code, message, ...(reason ? { errors: [{ message, domain: 'usageLimits', reason }] } : {}), status } });

function drive() {
  const fake = new FakeGoogleDocs();
  fake.add(PLAN_ID, 'Project plan', projectPlan());
  fake.add(NOTES_ID, 'Meeting notes', meetingNotes());
  fake.intercept();
  return fake;
}

/** Pulls one run after another, each from the cursor the last one left (as the runtime does). */
function runner(h: ReturnType<typeof harness>) {
  let cursor: string | null = null;
  return async (other = h) => {
    const run = await pullAll(googleDocsConnector, other, cursor);
    cursor = run.cursor;
    return run;
  };
}

function update(h: ReturnType<typeof harness>, id: string, content: string, previous: unknown, path?: string): LocalChange {
  const known = h.known.get(id)!;
  return { kind: 'update', sourceId: id, known, path: path ?? known.path, type: 'markdown', content, previous };
}

test.serial('first pull: each document as <title>.md, its revision as source version; Drive is asked first, then each document', async (t) => {
  const fake = drive();
  const h = harness(googleDocsConnector, DOCS, config);
  const run = await pullAll(googleDocsConnector, h, null);
  const items = upserts(run.changes);
  t.deepEqual(Object.keys(items).sort(), ['Meeting notes.md', 'Project plan.md']);
  t.like(items['Project plan.md'], { sourceId: PLAN_ID, type: 'markdown', content: PLAN_MARKDOWN, sourceVersion: fake.revisionId(PLAN_ID), meta: { title: 'Project plan' } });
  t.deepEqual(JSON.parse(run.cursor!), { v: 1, versions: { [PLAN_ID]: '11', [NOTES_ID]: '11' } }, 'the Drive version of each document read');
  t.like(items['Meeting notes.md'], { sourceId: NOTES_ID, content: NOTES_MARKDOWN });

  t.deepEqual(calls(fake), [
    `GET www.googleapis.com/drive/v3/files/${PLAN_ID}`,
    `GET www.googleapis.com/drive/v3/files/${NOTES_ID}`,
    `GET docs.googleapis.com/v1/documents/${PLAN_ID}`,
    `GET docs.googleapis.com/v1/documents/${NOTES_ID}`,
  ]);
  t.deepEqual(fake.seen[0].query, { fields: 'id,name,mimeType,version,modifiedTime,trashed', supportsAllDrives: 'true' });
  t.deepEqual(fake.seen[2].query, { suggestionsViewMode: 'PREVIEW_WITHOUT_SUGGESTIONS' });
  for (const s of fake.seen) t.is(s.headers.authorization, `Bearer ${TOKEN}`);
  t.is(h.counters.httpCalls, 4);
});

test.serial('incremental: an unchanged document is not read again (one Drive call each); an edited one is', async (t) => {
  const fake = drive();
  const h = harness(googleDocsConnector, DOCS, config);
  const first = await pullAll(googleDocsConnector, h, null);

  fake.seen.length = 0;
  const quiet = await pullAll(googleDocsConnector, h, first.cursor);
  t.deepEqual(quiet.changes, []);
  t.deepEqual(calls(fake), [`GET www.googleapis.com/drive/v3/files/${PLAN_ID}`, `GET www.googleapis.com/drive/v3/files/${NOTES_ID}`]);

  fake.replace(NOTES_ID, new FlatDoc().para(['Meeting notes'], { style: 'HEADING_1' }).para(['Decisions were made. ', { text: 'Ship it', style: { bold: true } }, '.']).para([]));
  fake.seen.length = 0;
  const edited = await pullAll(googleDocsConnector, h, quiet.cursor);
  t.deepEqual(Object.keys(upserts(edited.changes)), ['Meeting notes.md']);
  t.like(upserts(edited.changes)['Meeting notes.md'], { content: '# Meeting notes\n\nDecisions were made. **Ship it**.\n', sourceVersion: fake.revisionId(NOTES_ID) });
  t.is(JSON.parse(edited.cursor!).versions[NOTES_ID], '12');
  t.deepEqual(calls(fake), [
    `GET www.googleapis.com/drive/v3/files/${PLAN_ID}`,
    `GET www.googleapis.com/drive/v3/files/${NOTES_ID}`,
    `GET docs.googleapis.com/v1/documents/${NOTES_ID}`,
  ]);

  // A lost or unreadable cursor: every document is read again, each at the revision and path the
  // sync holds (the runtime rewrites nothing, no document is doubled).
  const full = await pullAll(googleDocsConnector, h, '{"lost":');
  t.deepEqual(
    full.changes.map((c) => (c.kind === 'upsert' ? [c.item.sourceId, c.item.path, c.item.sourceVersion] : c)),
    [PLAN_ID, NOTES_ID].map((id) => [id, h.known.get(id)!.path, h.known.get(id)!.sourceVersion]),
  );
  t.is(h.known.size, 2);
});

test.serial('a renamed document moves (same source id, new path); namesakes get the id\'s start', async (t) => {
  const fake = drive();
  const h = harness(googleDocsConnector, DOCS, config);
  const pull = runner(h);
  await pull();

  fake.rename(PLAN_ID, 'Roadmap / Q3');
  const moved = await pull();
  t.deepEqual(Object.keys(upserts(moved.changes)), ['Roadmap Q3.md']);
  t.like(upserts(moved.changes)['Roadmap Q3.md'], { sourceId: PLAN_ID, content: PLAN_MARKDOWN });

  // A second document takes the same title: the first keeps its name.
  fake.rename(NOTES_ID, 'Roadmap / Q3');
  const namesake = await pull();
  t.deepEqual(Object.keys(upserts(namesake.changes)), [`Roadmap Q3 (${NOTES_ID.slice(0, 8)}).md`]);
  t.is(h.known.get(PLAN_ID)!.path, 'Roadmap Q3.md');
});

test.serial('deletions: unshared (Drive 404), trashed, gone between the two calls, taken out of the config', async (t) => {
  const fake = drive();
  const h = harness(googleDocsConnector, DOCS, config);
  const pull = runner(h);
  await pull();

  fake.files.get(NOTES_ID)!.shared = false;
  t.deepEqual(deletes((await pull()).changes), [NOTES_ID]);
  t.is(h.known.get(NOTES_ID), undefined);

  fake.files.get(NOTES_ID)!.shared = true;
  fake.files.get(NOTES_ID)!.trashed = true;
  t.deepEqual((await pull()).changes, [], 'a trashed document not synced yet stays away');
  fake.files.get(NOTES_ID)!.trashed = false;
  await pull();
  fake.files.get(NOTES_ID)!.trashed = true;
  t.deepEqual(deletes((await pull()).changes), [NOTES_ID]);

  // Drive still lists it with a new version, but the document is gone by the time it is read.
  fake.edit(PLAN_ID, () => {});
  fake.interrupts.push({ path: new RegExp(`^/v1/documents/${PLAN_ID}$`), status: 404, body: googleError(404, 'NOT_FOUND', 'Requested entity was not found.') });
  t.deepEqual(deletes((await pull()).changes), [PLAN_ID]);

  fake.files.get(NOTES_ID)!.trashed = false;
  await pull();
  const fewer = harness(googleDocsConnector, DOCS, { ...config, document_ids: [PLAN_ID] }, h.known);
  fake.seen.length = 0;
  t.deepEqual(deletes((await pull(fewer)).changes), [NOTES_ID]);
  t.false(calls(fake).some((c) => c.includes(NOTES_ID)), 'a document out of the config is not asked for');
});

test.serial('push: an edit goes as one minimal batchUpdate on a fresh read, with requiredRevisionId; the next pull keeps it', async (t) => {
  const fake = drive();
  const h = harness(googleDocsConnector, DOCS, config);
  const pulled = await pullAll(googleDocsConnector, h, null);
  const read = fake.revisionId(PLAN_ID);
  const [runStart, runEnd] = fake.paragraphRange(PLAN_ID, 'Run the tests');
  const [statusStart, statusEnd] = fake.paragraphRange(PLAN_ID, 'Status');
  fake.seen.length = 0;

  const edited = PLAN_MARKDOWN.replace('3. Run the tests', '3. Run **all** tests').replace('### Status', '## Status');
  const [outcome] = await googleDocsConnector.push!(h.ctx, [update(h, PLAN_ID, edited, PLAN_MARKDOWN)]);
  t.deepEqual(outcome, { ok: true, sourceId: PLAN_ID, sourceVersion: fake.revisionId(PLAN_ID) });
  t.not(fake.revisionId(PLAN_ID), read);

  t.deepEqual(calls(fake), [`GET docs.googleapis.com/v1/documents/${PLAN_ID}`, `POST docs.googleapis.com/v1/documents/${PLAN_ID}:batchUpdate`]);
  t.deepEqual(fake.seen[0].query, { suggestionsViewMode: 'SUGGESTIONS_INLINE' });
  // From the end of the document back: the heading (later), then the list item.
  t.deepEqual(fake.seen[1].body, {
    requests: [
      { updateParagraphStyle: { range: { startIndex: statusStart, endIndex: statusEnd }, paragraphStyle: { namedStyleType: 'HEADING_2' }, fields: 'namedStyleType' } },
      { deleteContentRange: { range: { startIndex: runStart, endIndex: runEnd - 1 } } },
      { insertText: { location: { index: runStart }, text: 'Run all tests' } },
      { updateTextStyle: { range: { startIndex: runStart, endIndex: runStart + 13 }, textStyle: {}, fields: 'bold,italic,underline,strikethrough,link' } },
      { updateTextStyle: { range: { startIndex: runStart + 4, endIndex: runStart + 7 }, textStyle: { bold: true }, fields: 'bold' } },
    ],
    writeControl: { requiredRevisionId: read },
  });
  t.is(rendered(fake, PLAN_ID), edited, 'Google\'s document now reads as the edited Markdown');

  // Drive's version moved with the edit: read once more, found at the revision the push returned
  // (the runtime then writes nothing), and the new Drive version remembered.
  h.known.items.set(PLAN_ID, { ...h.known.get(PLAN_ID)!, sourceVersion: outcome.ok ? outcome.sourceVersion : '' });
  fake.seen.length = 0;
  const after = await pullAll(googleDocsConnector, h, pulled.cursor);
  t.like(upserts(after.changes)['Project plan.md'], { sourceVersion: fake.revisionId(PLAN_ID), content: edited });
  fake.seen.length = 0;
  t.deepEqual((await pullAll(googleDocsConnector, h, after.cursor)).changes, []);
  t.false(calls(fake).some((c) => c.includes('/v1/documents/')));
});

test.serial('push refused on a revision mismatch: an edit at Google between the read and the write is a conflict, nothing written', async (t) => {
  const fake = drive();
  const h = harness(googleDocsConnector, DOCS, config);
  await pullAll(googleDocsConnector, h, null);
  const read = fake.revisionId(PLAN_ID);
  // A collaborator types at the top of the document while our batch is on its way.
  fake.beforeBatch = () => fake.edit(PLAN_ID, (d) => d.insertText(1, 'Draft: '));
  const edited = PLAN_MARKDOWN.replace('Write tests', 'Write more tests');
  const [outcome] = await googleDocsConnector.push!(h.ctx, [update(h, PLAN_ID, edited, PLAN_MARKDOWN)]);
  t.false(outcome.ok);
  t.regex(!outcome.ok ? outcome.message : '', /^conflict: Google Docs refused the edit, nothing was written .*does not match the latest revision/);
  const batch = fake.seen.find((s) => s.path.endsWith(':batchUpdate'))!;
  t.deepEqual(batch.body?.writeControl, { requiredRevisionId: read });
  const now = rendered(fake, PLAN_ID);
  t.true(now.startsWith('# Draft: Project Plan'));
  t.true(now.includes('- Write tests\n') && !now.includes('Write more tests'), 'only the collaborator\'s edit is in');

  // Edited at Google since the last pull (and not pulled yet): refused before anything is sent.
  fake.seen.length = 0;
  const [stale] = await googleDocsConnector.push!(h.ctx, [update(h, PLAN_ID, edited, PLAN_MARKDOWN)]);
  t.false(stale.ok);
  t.regex(!stale.ok ? stale.message : '', /^conflict: the document changed in Google Docs since it was last pulled/);
  t.deepEqual(calls(fake), [`GET docs.googleapis.com/v1/documents/${PLAN_ID}`]);
});

test.serial('push refusals: push off, tables, a rename, a read-only document; the other documents of the run still go', async (t) => {
  const fake = drive();
  fake.add('1ReadOnlyDocument00000000000000000000000000', 'Shared with me', meetingNotes(), { canEdit: false });
  const ids = [...config.document_ids, '1ReadOnlyDocument00000000000000000000000000'];
  const off = harness(googleDocsConnector, DOCS, { ...config, document_ids: ids, push: false });
  const first = await pullAll(googleDocsConnector, off, null);
  t.is(upserts(first.changes)['Shared with me.md'].sourceVersion, 'drive-11', 'no revision id for a reader: Drive\'s version stands in');
  fake.seen.length = 0;
  const [disabled] = await googleDocsConnector.push!(off.ctx, [update(off, NOTES_ID, NOTES_MARKDOWN.replace('made', 'taken'), NOTES_MARKDOWN)]);
  t.deepEqual(disabled, { ok: false, message: 'edits are not sent to Google Docs by this sync (its config has push off): set push to true to send them' });
  t.deepEqual(fake.seen, []);

  const h = harness(googleDocsConnector, DOCS, { ...config, document_ids: ids }, off.known);
  const outcomes = await googleDocsConnector.push!(h.ctx, [
    update(h, PLAN_ID, PLAN_MARKDOWN.replace('| Pull |', '| Pulling |'), PLAN_MARKDOWN),
    update(h, NOTES_ID, NOTES_MARKDOWN, NOTES_MARKDOWN, 'Renamed notes.md'),
    update(h, '1ReadOnlyDocument00000000000000000000000000', NOTES_MARKDOWN.replace('made', 'taken'), NOTES_MARKDOWN),
    update(h, NOTES_ID, NOTES_MARKDOWN.replace('made', 'taken'), NOTES_MARKDOWN),
  ]);
  t.deepEqual(
    outcomes.map((o) => (o.ok ? 'ok' : o.message)),
    [
      'tables are not sent back (the push writes paragraphs, headings and lists): edit the table in Google Docs',
      'renaming a document here is not sent back: rename it in Google Docs',
      'the account may only read this document (Google gives no revision to write against): ask for edit access',
      'ok',
    ],
  );
  t.is(rendered(fake, NOTES_ID), '# Meeting notes\n\nDecisions were taken.\n');
  t.is(rendered(fake, PLAN_ID), PLAN_MARKDOWN, 'the refused table edit left the plan as it was');
  t.is(fake.seen.filter((s) => s.path.endsWith(':batchUpdate')).length, 1);
});

test.serial('a 429 with Retry-After is waited out; Drive\'s 403 rate limit too; a file that is not a document fails the run', async (t) => {
  const fake = drive();
  fake.interrupts.push({
    path: new RegExp(`^/v1/documents/${PLAN_ID}$`),
    status: 429,
    headers: { 'retry-after': '3' },
    body: googleError(429, 'RESOURCE_EXHAUSTED', "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per minute per user' of service 'docs.googleapis.com'."),
  });
  fake.interrupts.push({ path: new RegExp(`^/drive/v3/files/${NOTES_ID}$`), status: 403, body: googleError(403, 'PERMISSION_DENIED', 'User rate limit exceeded.', 'userRateLimitExceeded') });
  const h = harness(googleDocsConnector, DOCS, config);
  const run = await pullAll(googleDocsConnector, h, null);
  t.is(upserts(run.changes)['Project plan.md'].content, PLAN_MARKDOWN);
  t.deepEqual(h.sleeps, [2000, 3000], 'Drive\'s limit without Retry-After waits Google\'s default, then the Docs 429 its Retry-After');
  t.is(h.counters.rateLimitedMs, 5000);
  t.is(calls(fake).filter((c) => c === `GET docs.googleapis.com/v1/documents/${PLAN_ID}`).length, 2);

  fake.add('1SpreadsheetNotADoc000000000000000000000000', 'Budget', new FlatDoc(), { mimeType: 'application/vnd.google-apps.spreadsheet' });
  const wrong = harness(googleDocsConnector, DOCS, { ...config, document_ids: ['1SpreadsheetNotADoc000000000000000000000000'] });
  await t.throwsAsync(pullAll(googleDocsConnector, wrong, null), { message: /1SpreadsheetNotADoc0+ is not a Google Docs document \(Drive says application\/vnd\.google-apps\.spreadsheet\)/ });
});

test('config: document ids or addresses are required and checked', (t) => {
  const check = (c: Record<string, unknown>) => googleDocsConnector.validateConfig!(c);
  t.throws(() => check({ path: 'docs' }), { message: /document_ids lists the documents/ });
  t.throws(() => check({ path: 'docs', document_ids: ['https://example.com/not-a-doc'] }), { message: /"https:\/\/example.com\/not-a-doc" is neither a Google Docs document id/ });
  t.notThrows(() => check({ path: 'docs', document_ids: [PLAN_ID, `https://docs.google.com/document/u/1/d/${NOTES_ID}/edit#heading=h.x`] }));
  t.deepEqual(googleDocsConnector.spec.capabilities?.push, { create: false, update: true, delete: false });
});
