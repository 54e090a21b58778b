import test from 'ava';
import nock from 'nock';
import { ADMIN, isolateNetwork, recorder, startOAuthServer, type OAuthTestServer, type Seen } from '../oauth/helpers.ts';
import { connectGoogle, GOOGLE_OAUTH, googleEnv } from './fixtures/google/connectGoogle.ts';
import { FakeSheets } from './fixtures/googleSheets/fakeSheets.ts';

// The Sheets connector end to end: a real server and runtime, connected through the real Google
// OAuth flow (Google's token endpoint on nock), the Sheets API and the spreadsheet's Drive
// version on nock (FakeSheets). The tests run in order on one sync.

const BOOK = '1e2eSpreadsheet000000000000000000000000001';
const FOLDER = 'sheets';
const FIRST_TOKEN = 'ya29.google-sheets-access-1';

let server: OAuthTestServer;
let token: string;
let projectId: string;
let syncId: string;
const sheets = new FakeSheets(BOOK);
sheets.addSheet('Stock', [
  ['SKU', 'Item', 'Count', 'Checked'],
  ['A-1', 'Bolts', 120, { serial: 45413, formatted: '2024-05-01' }],
  ['A-2', 'Nuts', 80, null],
]);

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
const write = async (path: string, value: unknown) => {
  const res = await server.api('POST', `/content/${projectId}/write`, { token, body: { path, content: value, node_type: 'json' } });
  if (res.status >= 300) throw new Error(`write ${path}: ${res.status} ${JSON.stringify(res.body)}`);
};
const syncRecord = async () =>
  ((await server.api('GET', `/sync/syncs?project_id=${projectId}`, { token })).body.data.syncs as { id: string; status: string; pause_reason: string | null }[]).find((s) => s.id === syncId);
const oauthStatus = async () => (await server.api('GET', `/oauth/google-sheets/status?project_id=${projectId}`, { token })).body.data;
const calls = () => sheets.seen.map((s) => s.call);

test.before(async () => {
  isolateNetwork();
  server = await startOAuthServer(googleEnv());
  token = await server.login(ADMIN.email, ADMIN.password);
  projectId = (await server.api('POST', '/auth/initialize', { token })).body.data.project.id;
  await connectGoogle(server, token, projectId, 'google-sheets', { accessToken: FIRST_TOKEN });
  sheets.token = FIRST_TOKEN;
  sheets.intercept();
});

test.after.always(async () => {
  nock.cleanAll();
  await server?.stop();
  nock.enableNetConnect();
});

test.serial('connected through OAuth; a first pull writes one JSON node per row, named by the key column', async (t) => {
  t.like(await oauthStatus(), { connected: true, kind: 'oauth', needs_reauth: false });
  const boot = await server.api('POST', '/sync/bootstrap', {
    token,
    body: { project_id: projectId, provider: 'google-sheets', config: { path: `/${FOLDER}`, spreadsheet_id: `https://docs.google.com/spreadsheets/d/${BOOK}/edit`, key_column: 'SKU' } },
  });
  t.is(boot.status, 201, JSON.stringify(boot.body));
  syncId = boot.body.data.sync.id;

  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 2, updated: 0, deleted: 0 }, pushed: 0, conflicts: [], error: null, http_calls: 3, rate_limited_ms: 0 });
  t.deepEqual(calls(), [`GET drive /drive/v3/files/${BOOK}`, `GET sheets /v4/spreadsheets/${BOOK}`, `GET sheets /v4/spreadsheets/${BOOK}/values:batchGet`]);
  t.true(sheets.seen.every((s) => s.headers.authorization === `Bearer ${FIRST_TOKEN}`));
  t.deepEqual(await content(`${FOLDER}/Stock/A-1.json`), { SKU: 'A-1', Item: 'Bolts', Count: 120, Checked: '2024-05-01' });
  t.deepEqual(await content(`${FOLDER}/Stock/A-2.json`), { SKU: 'A-2', Item: 'Nuts', Count: 80, Checked: null });
});

test.serial('an edit here is pushed as the changed cell only; the next run sees the new version and hands on nothing', async (t) => {
  await write(`${FOLDER}/Stock/A-2.json`, { SKU: 'A-2', Item: 'Nuts', Count: 75, Checked: null });
  sheets.seen.length = 0;
  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 0 }, pushed: 1, conflicts: [], error: null });
  const update = sheets.seen.find((s) => s.path.endsWith('values:batchUpdate'))!;
  t.deepEqual(update.body, { valueInputOption: 'USER_ENTERED', data: [{ range: "'Stock'!C3", majorDimension: 'ROWS', values: [[75]] }] });
  t.is(sheets.sheet('Stock')!.grid[2]![2], 75);

  sheets.seen.length = 0;
  const next = await refresh();
  t.like(next, { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 0 }, pushed: 0 });
  t.true(calls().some((c) => c.endsWith('values:batchGet')), 'the version moved with the push: the ranges are read');
  sheets.seen.length = 0;
  const quiet = await refresh();
  t.like(quiet, { status: 'succeeded', http_calls: 1 });
  t.deepEqual(calls(), [`GET drive /drive/v3/files/${BOOK}`], 'unchanged: the version check alone');
});

test.serial('an edit in the sheet comes in; a deleted row goes to the trash', async (t) => {
  sheets.set('Stock', 'C2', 110);
  sheets.insertRow('Stock', 4, ['A-3', 'Washers', 500, null]);
  sheets.deleteRow('Stock', 3);
  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 1, updated: 1, deleted: 1 }, error: null });
  t.like(await content(`${FOLDER}/Stock/A-1.json`), { Count: 110 });
  t.like(await content(`${FOLDER}/Stock/A-3.json`), { Item: 'Washers' });
  t.is((await cat(`${FOLDER}/Stock/A-2.json`)).status, 404);
});

test.serial('an expired access token is refreshed on the fly; a revoked grant pauses the sync for reauthorization', async (t) => {
  const renewed = 'ya29.google-sheets-access-2';
  sheets.token = renewed;
  const seen: Seen[] = [];
  const endpoint = nock(GOOGLE_OAUTH)
    .post('/token')
    .reply(recorder(seen, () => [200, { access_token: renewed, expires_in: 3599, scope: 'https://www.googleapis.com/auth/spreadsheets', token_type: 'Bearer' }, { 'content-type': 'application/json' }]));
  sheets.set('Stock', 'B2', 'Hex bolts');
  sheets.seen.length = 0;
  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { updated: 1 }, error: null });
  t.true(endpoint.isDone());
  t.like(seen[0]!.body as Record<string, string>, { grant_type: 'refresh_token', refresh_token: '1//google-sheets-refresh-1' });
  t.is(sheets.seen[0]!.headers.authorization, `Bearer ${FIRST_TOKEN}`);
  t.true(sheets.seen.slice(1).every((s) => s.headers.authorization === `Bearer ${renewed}`));
  t.like(await content(`${FOLDER}/Stock/A-1.json`), { Item: 'Hex bolts' });

  sheets.token = 'ya29.revoked';
  nock(GOOGLE_OAUTH).post('/token').reply(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
  sheets.set('Stock', 'B2', 'Bolts');
  const failed = await refresh();
  t.is(failed.status, 'failed');
  t.regex(failed.error, /authorized again/);
  t.like(await syncRecord(), { status: 'paused', pause_reason: 'needs_reauth' });
  t.like(await oauthStatus(), { connected: true, needs_reauth: true });
  t.like(await content(`${FOLDER}/Stock/A-1.json`), { Item: 'Hex bolts' });
});
