import test from 'ava';
import nock from 'nock';
import { ADMIN, isolateNetwork, recorder, startOAuthServer, type OAuthTestServer, type Seen } from '../oauth/helpers.ts';
import { connectGoogle, GOOGLE_OAUTH, googleEnv } from './fixtures/google/connectGoogle.ts';
import { DOC, SHEET } from './fixtures/googleDrive/driveModel.ts';
import { FakeDrive } from './fixtures/googleDrive/fakeDrive.ts';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writePdf } from '../../ingest/fixtures/pdf.ts';

// The Drive connector end to end: a real server and runtime, connected through the real Google
// OAuth flow (Google's token endpoint on nock), Drive v3 on nock (FakeDrive). The tests run in
// order on one sync: each starts where the one before left Drive and the project.

const ROOT = 'driveE2eRootFolder01';
const FOLDER = 'drive';
const FIRST_TOKEN = 'ya29.google-drive-access-1';

let server: OAuthTestServer;
let token: string;
let projectId: string;
let syncId: string;
const drive = new FakeDrive();
drive.add({ id: ROOT, name: 'Team', mimeType: 'application/vnd.google-apps.folder', parents: ['myDrive'] });
const specs = drive.folder('Specs', ROOT, 'specsFolder000000001');
const plan = drive.add({ name: 'Plan', mimeType: DOC, parents: [ROOT], content: '# Plan\n\nShip in June.\n' });
const costs = drive.add({ name: 'Costs', mimeType: SHEET, parents: [specs], content: 'Item,Cost\nServer,40\n' });
const diagram = drive.add({ name: 'diagram.png', mimeType: 'image/png', parents: [specs], content: Buffer.from([0x89, 0x50, 0x4e, 0x47, 9, 9]) });
drive.add({ name: 'elsewhere.txt', mimeType: 'text/plain', parents: ['myDrive'], content: 'not synced' });

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
const syncRecord = async () =>
  ((await server.api('GET', `/sync/syncs?project_id=${projectId}`, { token })).body.data.syncs as { id: string; status: string; pause_reason: string | null }[]).find((s) => s.id === syncId);
const oauthStatus = async () => (await server.api('GET', `/oauth/google-drive/status?project_id=${projectId}`, { token })).body.data;

/** Google's token endpoint answering one refresh with `answer` (recorded in `seen`). */
function tokenEndpoint(seen: Seen[], status: number, answer: Record<string, unknown>) {
  return nock(GOOGLE_OAUTH)
    .post('/token')
    .reply(recorder(seen, () => [status, answer, { 'content-type': 'application/json; charset=utf-8' }]));
}

test.before(async () => {
  isolateNetwork();
  server = await startOAuthServer(googleEnv());
  token = await server.login(ADMIN.email, ADMIN.password);
  projectId = (await server.api('POST', '/auth/initialize', { token })).body.data.project.id;
  await connectGoogle(server, token, projectId, 'google-drive', { accessToken: FIRST_TOKEN });
  drive.token = FIRST_TOKEN;
  drive.intercept();
});

test.after.always(async () => {
  nock.cleanAll();
  await server?.stop();
  nock.enableNetConnect();
});

test.serial('connected through OAuth; bootstrap and a first pull write the folder\'s files at their paths', async (t) => {
  t.like(await oauthStatus(), { connected: true, kind: 'oauth', needs_reauth: false });
  const boot = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'google-drive', config: { path: `/${FOLDER}`, folder_id: ROOT } } });
  t.is(boot.status, 201, JSON.stringify(boot.body));
  syncId = boot.body.data.sync.id;

  drive.seen.length = 0;
  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 3, updated: 0, deleted: 0 }, pushed: 0, conflicts: [], error: null, rate_limited_ms: 0, cursor_before: null });
  t.is(run.http_calls, drive.seen.length, 'every Drive call is counted');
  t.is(run.http_calls, 7, 'the folder, the change token, a listing per folder level (2), three contents');
  t.true(drive.seen.every((s) => s.headers.authorization === `Bearer ${FIRST_TOKEN}`));
  t.is(await content(`${FOLDER}/Plan.md`), '# Plan\n\nShip in June.\n');
  t.deepEqual(await content(`${FOLDER}/Specs/Costs.json`), [{ Item: 'Server', Cost: 40 }]);
  const png = await cat(`${FOLDER}/Specs/diagram.png`);
  t.is(png.status, 200);
  t.is(png.body.data.type, 'file');
  t.is((await cat(`${FOLDER}/elsewhere.txt`)).status, 404);
  t.is(JSON.parse(run.cursor_after).token, String(drive.log.length));
});

test.serial('an incremental run reads the change feed: an edit, a rename (the same node moved) and a trashed file', async (t) => {
  const planNode = (await cat(`${FOLDER}/Plan.md`)).body.data.id as string;
  drive.edit(plan, '# Plan\n\nShip in July.\n');
  drive.rename(plan, 'Roadmap');
  drive.trash(diagram);
  drive.edit(costs, 'Item,Cost\nServer,40\nBackup,12\n');
  drive.seen.length = 0;

  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { created: 0, updated: 2, deleted: 1 }, conflicts: [], error: null });
  t.deepEqual(
    drive.seen.map((s) => s.call),
    [`GET /drive/v3/changes pageToken=${JSON.parse(run.cursor_before).token}`, `GET /drive/v3/files/${plan}/export mimeType=text/markdown`, `GET /drive/v3/files/${costs}/export mimeType=text/csv`],
  );
  t.is(run.http_calls, 3);
  const moved = await cat(`${FOLDER}/Roadmap.md`);
  t.is(moved.body.data.id, planNode, 'the renamed Doc is the same node, moved');
  t.is(moved.body.data.content, '# Plan\n\nShip in July.\n');
  t.is((await cat(`${FOLDER}/Plan.md`)).status, 404);
  t.deepEqual(await content(`${FOLDER}/Specs/Costs.json`), [{ Item: 'Server', Cost: 40 }, { Item: 'Backup', Cost: 12 }]);
  t.is((await cat(`${FOLDER}/Specs/diagram.png`)).status, 404);
  const trash = await server.api('GET', `/content/${projectId}/trash`, { token });
  t.true(JSON.stringify(trash.body.data.items).includes('diagram.png'));
});

test.serial('convert: a PDF becomes Markdown in the service\'s conversion processes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'drive-e2e-pdf-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writePdf(join(dir, 'r.pdf'), [['Board minutes', 'The plan was approved.']]);
  const reports = drive.folder('Reports', 'myDrive', 'reportsFolder0000001');
  drive.add({ name: 'minutes.pdf', mimeType: 'application/pdf', parents: [reports], content: readFileSync(join(dir, 'r.pdf')) });
  const boot = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'google-drive', config: { path: '/converted', folder_id: reports, convert: true } } });
  t.is(boot.status, 201, JSON.stringify(boot.body));
  const res = await server.api('POST', `/sync/syncs/${boot.body.data.sync.id}/refresh`, { token });
  t.like(res.body.data.run, { status: 'succeeded', pulled: { created: 1 } });
  t.regex(String(await content('converted/minutes.md')), /Board minutes[\s\S]*The plan was approved\./);
});

test.serial('an expired access token is refreshed on the fly: Drive\'s 401, one refresh at Google, the request again with the new token', async (t) => {
  const renewed = 'ya29.google-drive-access-2';
  drive.token = renewed; // Drive no longer takes the first token
  const seen: Seen[] = [];
  const endpoint = tokenEndpoint(seen, 200, { access_token: renewed, expires_in: 3599, scope: 'https://www.googleapis.com/auth/drive.readonly', token_type: 'Bearer' });
  drive.edit(costs, 'Item,Cost\nServer,45\n');
  drive.seen.length = 0;

  const run = await refresh();
  t.like(run, { status: 'succeeded', pulled: { updated: 1 }, error: null });
  t.true(endpoint.isDone());
  t.like(seen[0]!.body as Record<string, string>, { grant_type: 'refresh_token', refresh_token: '1//google-drive-refresh-1' });
  t.is(drive.seen[0]!.headers.authorization, `Bearer ${FIRST_TOKEN}`);
  t.true(drive.seen.slice(1).every((s) => s.headers.authorization === `Bearer ${renewed}`));
  t.deepEqual(await content(`${FOLDER}/Specs/Costs.json`), [{ Item: 'Server', Cost: 45 }]);
  t.like(await oauthStatus(), { connected: true, needs_reauth: false });
});

test.serial('a revoked grant: Drive\'s 401 and a refused refresh fail the run and pause the sync for reauthorization', async (t) => {
  drive.token = 'ya29.someone-elses';
  const seen: Seen[] = [];
  tokenEndpoint(seen, 400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
  drive.edit(plan, '# Plan\n\nNever mind.\n');
  const run = await refresh();
  t.is(run.status, 'failed');
  t.regex(run.error, /authorized again/);
  t.like(await syncRecord(), { status: 'paused', pause_reason: 'needs_reauth' });
  t.like(await oauthStatus(), { connected: true, needs_reauth: true });
  t.is((await server.api('POST', `/sync/syncs/${syncId}/refresh`, { token })).status, 409);
  t.is(await content(`${FOLDER}/Roadmap.md`), '# Plan\n\nShip in July.\n', 'nothing was written');
});
