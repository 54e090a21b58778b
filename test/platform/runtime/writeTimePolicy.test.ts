import test, { type ExecutionContext } from 'ava';
import nock from 'nock';
import { ADMIN, isolateNetwork, startOAuthServer, type OAuthTestServer } from '../oauth/helpers.ts';
import { fakeConnector, FakeSource } from './fakeSource.ts';

// A platform sync run writes as the sync's key long after the request that started it: each of
// its writes asks the policy again (src/policies/writeTimeGrant.ts). The key is revoked, deleted,
// narrowed or made read-only between the two pages of one run: the second page writes nothing
// and the run fails with the policy's code.

let server: OAuthTestServer;
let token: string;
let projectId: string;

test.before(async () => {
  isolateNetwork();
  server = await startOAuthServer({});
  server.running.services.syncRuntime.register(fakeConnector);
  token = await server.login(ADMIN.email, ADMIN.password);
  projectId = (await server.api('POST', '/auth/initialize', { token })).body.data.project.id;
  nock('https://api.github.com').get('/user').reply(200, { login: 'octocat' }, { 'X-OAuth-Scopes': 'repo' });
  const res = await server.api('POST', '/oauth/github/token', { token, body: { project_id: projectId, token: 'ghp_writeTimeTestToken1' } });
  if (res.status >= 300) throw new Error(JSON.stringify(res.body));
});

test.afterEach.always(() => {
  nock.cleanAll();
});

test.after.always(async () => {
  await server?.stop();
  nock.enableNetConnect();
});

const latest = () => server.running.services.changelog.latest(projectId);
const status = async (path: string) => (await server.api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token })).status;
const versionCount = async (path: string) =>
  ((await server.api('GET', `/content/${projectId}/versions?path=${encodeURIComponent(path)}`, { token })).body.data.versions as unknown[]).length;

/**
 * A sync filling `folder` from a source of two pages (notes/, then other/); the run is held
 * before its second page, `change` is made, and the run goes on. Checks that nothing of the
 * second page was written; answers the refresh's answer.
 */
async function changeBetweenPages(t: ExecutionContext, folder: string, change: (syncId: string) => Promise<void>) {
  const source = new FakeSource();
  source.intercept();
  source.put('a', 'notes/a.md', '# A\n');
  source.put('b', 'notes/b.md', '# B\n');
  source.put('c', 'other/c.md', '# C\n');
  source.put('d', 'other/d.md', '# D\n');
  const created = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'github', config: { path: `/${folder}` } } });
  t.is(created.status, 201, JSON.stringify(created.body));
  const syncId = created.body.data.sync.id as string;
  const before = latest();

  const second = source.holdChanges(2);
  const refreshed = server.api('POST', `/sync/syncs/${syncId}/refresh`, { token });
  await second.reached;
  // The first page is committed before the second is asked for.
  const afterFirst = latest();
  t.is(afterFirst, before + 1);
  t.is(await status(`${folder}/notes/a.md`), 200);
  await change(syncId);
  second.release();

  const res = await refreshed;
  // Nothing of the second page was written: no commit, no node, no new version.
  t.is(latest(), afterFirst);
  t.is(await status(`${folder}/other/c.md`), 404);
  t.is(await status(`${folder}/other/d.md`), 404);
  t.is(await versionCount(`${folder}/notes/a.md`), 1);
  return { syncId, res, source };
}

/** The run failed after its first page, and says why; the API shows it so later too. */
async function failedAfterFirstPage(t: ExecutionContext, syncId: string, res: Awaited<ReturnType<typeof changeBetweenPages>>['res']) {
  t.is(res.status, 200, JSON.stringify(res.body));
  const run = res.body.data.run;
  t.like(run, { status: 'failed', pulled: { created: 2, updated: 0, deleted: 0 }, cursor_after: '2' });
  // The source cursor stays after the last page written: a later run resumes from there.
  t.is((await server.running.services.syncStore.require(syncId)).source_cursor, '2');
  const read = await server.api('GET', `/sync/runs/${run.id}`, { token });
  t.like(read.body.data, { status: 'failed', error: run.error });
  return run as { error: string };
}

/** The next run is refused before it asks the source for anything. */
async function nextRunRefusedAtOnce(t: ExecutionContext, syncId: string, source: FakeSource, error: RegExp) {
  const v = latest();
  source.seen.length = 0;
  const next = (await server.api('POST', `/sync/syncs/${syncId}/refresh`, { token })).body.data.run;
  t.like(next, { status: 'failed', pulled: { created: 0, updated: 0, deleted: 0 }, http_calls: 0 });
  t.regex(next.error, error);
  t.deepEqual(source.seen, []);
  t.is(latest(), v);
}

test.serial('the sync key revoked between two pages: the second page writes nothing, the run fails UNAUTHORIZED', async (t) => {
  const { syncId, res, source } = await changeBetweenPages(t, 'revoked', async (id) => {
    const res = await server.api('PATCH', `/connections/${id}`, { token, body: { status: 'revoked' } });
    t.is(res.status, 200, JSON.stringify(res.body));
  });
  const run = await failedAfterFirstPage(t, syncId, res);
  t.is(run.error, 'UNAUTHORIZED: The key this run writes as no longer exists or was revoked; nothing more is written.');
  await nextRunRefusedAtOnce(t, syncId, source, /^UNAUTHORIZED: /);
});

test.serial('the sync key deleted between two pages: the second page writes nothing; the sync is gone with its key', async (t) => {
  const { syncId, res } = await changeBetweenPages(t, 'deleted', async (id) => {
    t.is((await server.api('DELETE', `/connections/${id}`, { token })).status, 200);
  });
  // Deleting a sync's connection deletes the sync and its runs: the refresh finds no sync to answer.
  t.is(res.status, 404, JSON.stringify(res.body));
  t.is(res.body.message, 'Sync not found.');
  t.is((await server.api('GET', `/sync/syncs/${syncId}/runs`, { token })).status, 404);
});

test.serial("the sync key's scope narrowed away from what the second page writes: the run fails FORBIDDEN", async (t) => {
  const { syncId, res, source } = await changeBetweenPages(t, 'narrowed', async (id) => {
    const res = await server.api('PATCH', `/connections/${id}`, { token, body: { scope_path: 'narrowed/notes' } });
    t.is(res.status, 200, JSON.stringify(res.body));
  });
  const run = await failedAfterFirstPage(t, syncId, res);
  t.is(run.error, 'FORBIDDEN: This access key is limited to "narrowed/notes".');
  await nextRunRefusedAtOnce(t, syncId, source, /^FORBIDDEN: /);
});

test.serial('the sync key made read-only between two pages: the run fails FORBIDDEN', async (t) => {
  const { syncId, res } = await changeBetweenPages(t, 'readonly', async (id) => {
    const res = await server.api('PATCH', `/connections/${id}`, { token, body: { mode: 'read' } });
    t.is(res.status, 200, JSON.stringify(res.body));
  });
  const run = await failedAfterFirstPage(t, syncId, res);
  t.is(run.error, 'FORBIDDEN: This access key is read-only.');
});
