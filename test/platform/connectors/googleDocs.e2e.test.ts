import test from 'ava';
import nock from 'nock';
import { ADMIN, isolateNetwork, recorder, startOAuthServer, type OAuthTestServer, type Seen } from '../oauth/helpers.ts';
import { connectGoogle, GOOGLE_OAUTH, googleEnv } from './fixtures/google/connectGoogle.ts';
import { FakeGoogleDocs } from './fixtures/googleDocs/fakeGoogleDocs.ts';
import { FlatDoc } from './fixtures/googleDocs/flatDoc.ts';
import { meetingNotes, NOTES_ID, PLAN_ID, PLAN_MARKDOWN, projectPlan } from './fixtures/googleDocs/sampleDocument.ts';

// The Google Docs connector end to end: a real server and runtime, connected through the real
// Google OAuth flow (Google's token endpoint on nock), Docs and Drive on nock (FakeGoogleDocs,
// which applies batchUpdate as Google does). The tests run in order on one sync.

const FOLDER = 'gdocs';
const FIRST_TOKEN = 'ya29.google-docs-access-1';

let server: OAuthTestServer;
let token: string;
let projectId: string;
let syncId: string;
const google = new FakeGoogleDocs();
google.add(PLAN_ID, 'Project plan', projectPlan());
google.add(NOTES_ID, 'Meeting notes', meetingNotes());

const refresh = async () => {
  const res = await server.api('POST', `/sync/syncs/${syncId}/refresh`, { token });
  if (res.status !== 200) throw new Error(`refresh: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.run;
};
const cat = (path: string) => server.api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token });
const content = async (path: string) => {
  const res = await cat(path);
  if (res.status !== 200) throw new Error(`cat ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.content as string;
};
const write = async (path: string, markdown: string) => {
  const res = await server.api('POST', `/content/${projectId}/write`, { token, body: { path, content: markdown, node_type: 'markdown' } });
  if (res.status >= 300) throw new Error(`write ${path}: ${res.status} ${JSON.stringify(res.body)}`);
};
const syncRecord = async () =>
  ((await server.api('GET', `/sync/syncs?project_id=${projectId}`, { token })).body.data.syncs as { id: string; status: string; pause_reason: string | null }[]).find((s) => s.id === syncId);
const oauthStatus = async () => (await server.api('GET', `/oauth/google-docs/status?project_id=${projectId}`, { token })).body.data;
const calls = () => google.seen.map((s) => `${s.method} ${s.host}${s.path}`);

test.before(async () => {
  isolateNetwork();
  server = await startOAuthServer(googleEnv());
  token = await server.login(ADMIN.email, ADMIN.password);
  projectId = (await server.api('POST', '/auth/initialize', { token })).body.data.project.id;
  await connectGoogle(server, token, projectId, 'google-docs', { accessToken: FIRST_TOKEN });
  google.validTokens.add(FIRST_TOKEN);
  google.intercept();
});

test.after.always(async () => {
  nock.cleanAll();
  await server?.stop();
  nock.enableNetConnect();
});

test.serial('connected through OAuth; bootstrap checks the config; a first pull writes each document as Markdown', async (t) => {
  t.like(await oauthStatus(), { connected: true, kind: 'oauth', needs_reauth: false });
  const bad = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'google-docs', config: { path: `/${FOLDER}`, document_ids: ['not a document'] } } });
  t.is(bad.status, 422, JSON.stringify(bad.body));
  t.regex(JSON.stringify(bad.body), /document_ids/);

  const boot = await server.api('POST', '/sync/bootstrap', {
    token,
    body: { project_id: projectId, provider: 'google-docs', config: { path: `/${FOLDER}`, document_ids: [PLAN_ID, `https://docs.google.com/document/d/${NOTES_ID}/edit`], push: true } },
  });
  t.is(boot.status, 201, JSON.stringify(boot.body));
  syncId = boot.body.data.sync.id;

  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 2, updated: 0, deleted: 0 }, pushed: 0, conflicts: [], error: null, http_calls: 4, rate_limited_ms: 0 });
  t.true(google.seen.every((s) => s.headers.authorization === `Bearer ${FIRST_TOKEN}`));
  const node = (await cat(`${FOLDER}/Project plan.md`)).body.data;
  t.like(node, { type: 'markdown', content: PLAN_MARKDOWN });
  t.is(await content(`${FOLDER}/Meeting notes.md`), '# Meeting notes\n\nDecisions were made.\n');
});

test.serial('an unchanged run costs one Drive call per document; a renamed and an edited document come in', async (t) => {
  google.seen.length = 0;
  t.like(await refresh(), { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 0 }, http_calls: 2 });
  t.deepEqual(calls(), [`GET www.googleapis.com/drive/v3/files/${PLAN_ID}`, `GET www.googleapis.com/drive/v3/files/${NOTES_ID}`]);

  const planNode = (await cat(`${FOLDER}/Project plan.md`)).body.data.id;
  google.rename(PLAN_ID, 'Roadmap');
  google.replace(NOTES_ID, new FlatDoc().para(['Meeting notes'], { style: 'HEADING_1' }).para(['Decisions were made.']).para(['Next: ship.']).para([]));
  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 2, deleted: 0 }, error: null });
  t.is((await cat(`${FOLDER}/Project plan.md`)).status, 404);
  const moved = (await cat(`${FOLDER}/Roadmap.md`)).body.data;
  t.is(moved.id, planNode, 'a rename moves the same node');
  t.is(moved.content, PLAN_MARKDOWN);
  t.is(await content(`${FOLDER}/Meeting notes.md`), '# Meeting notes\n\nDecisions were made.\n\nNext: ship.\n');
});

test.serial('an edit written here goes back as the minimal batchUpdate; the next runs hand nothing back', async (t) => {
  const edited = PLAN_MARKDOWN.replace('- Write tests\n', '- Write tests\n- Review the **push**\n').replace('# Overview', '## Overview');
  const [overviewStart, overviewEnd] = google.paragraphRange(PLAN_ID, 'Overview');
  const [, writeEnd] = google.paragraphRange(PLAN_ID, 'Write tests');
  const read = google.revisionId(PLAN_ID);
  await write(`${FOLDER}/Roadmap.md`, edited);
  google.seen.length = 0;

  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 0 }, pushed: 1, conflicts: [], error: null });
  const batch = google.seen.find((s) => s.path.endsWith(':batchUpdate'))!;
  t.deepEqual(batch.body, {
    requests: [
      // The new item goes on the list after "Write tests" (inheriting its bullet), then the heading level.
      { insertText: { location: { index: writeEnd - 1 }, text: '\nReview the push' } },
      { updateTextStyle: { range: { startIndex: writeEnd, endIndex: writeEnd + 15 }, textStyle: {}, fields: 'bold,italic,underline,strikethrough,link' } },
      { updateTextStyle: { range: { startIndex: writeEnd + 11, endIndex: writeEnd + 15 }, textStyle: { bold: true }, fields: 'bold' } },
      { updateParagraphStyle: { range: { startIndex: overviewStart, endIndex: overviewEnd }, paragraphStyle: { namedStyleType: 'HEADING_2' }, fields: 'namedStyleType' } },
    ],
    writeControl: { requiredRevisionId: read },
  });
  t.not(google.revisionId(PLAN_ID), read);
  t.is(await content(`${FOLDER}/Roadmap.md`), edited);

  // Drive's version moved with the push: the document is read once more, at the same revision.
  google.seen.length = 0;
  t.like(await refresh(), { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 0 }, pushed: 0, http_calls: 3 });
  t.false(calls().some((c) => c.startsWith('POST')));
  t.like(await refresh(), { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 0 }, pushed: 0, http_calls: 2 });
});

test.serial('an edit of a table here is refused and reported; the node keeps it, Google is not written to', async (t) => {
  const current = await content(`${FOLDER}/Roadmap.md`);
  await write(`${FOLDER}/Roadmap.md`, current.replace('| Pull |', '| Pulling |'));
  google.seen.length = 0;
  const run = await refresh();
  t.like(run, { status: 'succeeded', pushed: 0, error: null });
  t.true(
    (run.errors as string[]).includes(`${FOLDER}/Roadmap.md: tables are not sent back (the push writes paragraphs, headings and lists): edit the table in Google Docs`),
    JSON.stringify(run.errors),
  );
  t.false(calls().some((c) => c.startsWith('POST')));
});

test.serial('an expired access token is refreshed on the fly; a 401 after a revoked grant pauses the sync for reauthorization', async (t) => {
  const renewed = 'ya29.google-docs-access-2';
  google.validTokens.clear();
  google.validTokens.add(renewed);
  const seen: Seen[] = [];
  const endpoint = nock(GOOGLE_OAUTH)
    .post('/token')
    .reply(recorder(seen, () => [200, { access_token: renewed, expires_in: 3599, scope: 'https://www.googleapis.com/auth/documents', token_type: 'Bearer' }, { 'content-type': 'application/json' }]));
  google.seen.length = 0;
  const run = await refresh();
  t.like(run, { status: 'succeeded', error: null });
  t.true(endpoint.isDone());
  t.like(seen[0]!.body as Record<string, string>, { grant_type: 'refresh_token', refresh_token: '1//google-docs-refresh-1' });
  t.is(google.seen[0]!.headers.authorization, `Bearer ${FIRST_TOKEN}`);
  t.true(google.seen.slice(1).every((s) => s.headers.authorization === `Bearer ${renewed}`));

  google.validTokens.clear();
  google.validTokens.add('ya29.someone-else');
  nock(GOOGLE_OAUTH).post('/token').reply(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
  const failed = await refresh();
  t.is(failed.status, 'failed');
  t.regex(failed.error, /authorized again/);
  t.like(await syncRecord(), { status: 'paused', pause_reason: 'needs_reauth' });
  t.like(await oauthStatus(), { connected: true, needs_reauth: true });
  t.is((await server.api('POST', `/sync/syncs/${syncId}/refresh`, { token })).status, 409, 'a paused sync does not run');
});
