import test from 'ava';
import { createHmac } from 'node:crypto';
import nock from 'nock';
import { assertDocumented } from '../../helpers/openapi.ts';
import { ADMIN, assertNoSecrets, isolateNetwork, startOAuthServer, type OAuthTestServer } from '../oauth/helpers.ts';
import { fakeConnector, FakeSource } from './fakeSource.ts';
import { metadataCount } from '../../helpers/metadata.ts';
import { sql } from 'kysely';

// The platform sync runtime end to end: a real server, a source platform on nock (FakeSource),
// runs through the refresh route and the scheduler, content checked through the API.

const GH_TOKEN = 'ghp_runtimeTestToken01';
const FAST = { CNS_SYNC_MIN_INTERVAL_S: '1' };

let server: OAuthTestServer;
let token: string;
let projectId: string;

async function boot(dataDir?: string): Promise<void> {
  server = await startOAuthServer(FAST, { dataDir, keepData: dataDir !== undefined });
  server.running.services.syncRuntime.register(fakeConnector);
  token = await server.login(ADMIN.email, ADMIN.password);
}

async function connectGithub(): Promise<void> {
  nock('https://api.github.com').get('/user').reply(200, { login: 'octocat' }, { 'X-OAuth-Scopes': 'repo' });
  const res = await server.api('POST', '/oauth/github/token', { token, body: { project_id: projectId, token: GH_TOKEN } });
  if (res.status >= 300) throw new Error(JSON.stringify(res.body));
}

async function newSync(path: string): Promise<string> {
  const res = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'github', config: { path } } });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  return res.body.data.sync.id as string;
}

const refresh = async (syncId: string) => server.api('POST', `/sync/syncs/${syncId}/refresh`, { token });
const cat = async (path: string) => server.api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token });
const versions = async (path: string) => server.api('GET', `/content/${projectId}/versions?path=${encodeURIComponent(path)}`, { token });

/** Polls `check` until it returns a value, or fails after `ms`. */
async function until<T>(check: () => Promise<T | undefined | null | false>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 50));
  }
}

test.before(async () => {
  isolateNetwork();
  await boot();
  projectId = (await server.api('POST', '/auth/initialize', { token })).body.data.project.id;
  await connectGithub();
});

test.afterEach.always(() => {
  nock.cleanAll();
});

test.after.always(async () => {
  await server?.stop();
  nock.enableNetConnect();
});

test.serial('first pull, then incremental runs: one commit per page, renames are moves, deletes go to the trash', async (t) => {
  const source = new FakeSource();
  source.intercept();
  for (let i = 1; i <= 5; i++) source.put(`i${i}`, `notes/n${i}.md`, `# Note ${i}\n`);
  const syncId = await newSync('/docs');
  const before = server.running.services.changelog.latest(projectId);

  const first = await refresh(syncId);
  t.is(first.status, 200, JSON.stringify(first.body));
  assertDocumented(t, server.running.services, 'post', '/sync/syncs/{syncId}/refresh', first);
  const run = first.body.data.run;
  t.like(run, { status: 'succeeded', trigger: 'manual', pulled: { created: 5, updated: 0, deleted: 0 }, pushed: 0, cursor_before: null, cursor_after: '5', error: null, http_calls: 3 });
  // Three pages of two: three commits, each by the sync.
  t.is(server.running.services.changelog.latest(projectId) - before, 3);
  const feed = server.running.services.changelog.between(projectId, before, before + 3);
  t.true(feed.every((e) => e.actor.type === 'sync' && e.actor.id === syncId));
  t.is(source.seen.filter((r) => r.path === '/changes')[0]!.headers.authorization, `Bearer ${GH_TOKEN}`);
  t.is((await cat('docs/notes/n3.md')).body.data.content, '# Note 3\n');

  // Edit, rename and delete at the source: only the changes are fetched.
  const n2 = (await cat('docs/notes/n2.md')).body.data.id as string;
  source.put('i1', 'notes/n1.md', '# Note 1, edited\n');
  source.put('i2', 'archive/n2.md', '# Note 2\n');
  source.remove('i4');
  source.seen.length = 0;
  const second = (await refresh(syncId)).body.data.run;
  t.like(second, { status: 'succeeded', pulled: { created: 0, updated: 2, deleted: 1 }, cursor_before: '5', cursor_after: '8', http_calls: 2 });
  t.deepEqual(source.seen.map((r) => r.query.since), ['5', '7']);
  t.is((await cat('docs/notes/n1.md')).body.data.content, '# Note 1, edited\n');
  // The renamed item is the same node, moved: its history is kept.
  const moved = await cat('docs/archive/n2.md');
  t.is(moved.body.data.id, n2);
  t.is((await cat('docs/notes/n2.md')).status, 404);
  t.true((await versions('docs/archive/n2.md')).body.data.versions.length >= 2);
  const trash = await server.api('GET', `/content/${projectId}/trash`, { token });
  t.true(JSON.stringify(trash.body).includes('n4.md'));

  // Nothing changed: one call, no commit.
  const v = server.running.services.changelog.latest(projectId);
  t.like((await refresh(syncId)).body.data.run, { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 0 }, http_calls: 1 });
  t.is(server.running.services.changelog.latest(projectId), v);

  const runs = await server.api('GET', `/sync/syncs/${syncId}/runs`, { token });
  assertDocumented(t, server.running.services, 'get', '/sync/syncs/{syncId}/runs', runs);
  t.is(runs.body.data.runs.length, 3);
  const one = await server.api('GET', `/sync/runs/${runs.body.data.runs[2].id}`, { token });
  t.like(one.body.data, { pulled: { created: 5 } });
});

test.serial('push: a change made here goes back; a change on both sides is a conflict the source wins, ours kept in history', async (t) => {
  const source = new FakeSource();
  source.intercept();
  source.put('a', 'a.md', 'A from the source\n');
  source.put('b', 'b.md', 'B from the source\n');
  const syncId = await newSync('/push');
  t.like((await refresh(syncId)).body.data.run, { status: 'succeeded', pulled: { created: 2 } });

  // A local edit of a, a new local file, and b edited on both sides.
  const write = (path: string, content: string) => server.api('POST', `/content/${projectId}/write`, { token, body: { path, content, node_type: 'markdown' } });
  t.is((await write('push/a.md', 'A edited here\n')).status < 300, true);
  t.is((await write('push/new.md', 'Made here\n')).status < 300, true);
  await write('push/b.md', 'B edited here\n');
  source.put('b', 'b.md', 'B edited at the source\n');

  const run = (await refresh(syncId)).body.data.run;
  t.like(run, { status: 'succeeded', pulled: { updated: 1 }, pushed: 2, conflicts: ['push/b.md'] });
  t.is(source.items.get('a')!.content, 'A edited here\n');
  t.true([...source.items.values()].some((i) => i.path === 'new.md' && i.content === 'Made here\n'));
  const patch = source.seen.find((r) => r.method === 'PATCH')!;
  t.is(patch.headers.authorization, `Bearer ${GH_TOKEN}`);
  // The source won in the node; our edit is the version before.
  t.is((await cat('push/b.md')).body.data.content, 'B edited at the source\n');
  const history = (await versions('push/b.md')).body.data.versions as { version: number }[];
  const ours = await server.api('GET', `/content/${projectId}/version-content?path=push/b.md&version=${history.length - 1}`, { token });
  t.true(JSON.stringify(ours.body).includes('B edited here'), JSON.stringify(ours.body));

  // What was pushed is not pulled back as a change, nor pushed again.
  source.seen.length = 0;
  t.like((await refresh(syncId)).body.data.run, { status: 'succeeded', pulled: { created: 0, updated: 0, deleted: 0 }, pushed: 0, conflicts: [] });
  t.false(source.seen.some((r) => r.method !== 'GET'));
});

test.serial('a 401 the credential cannot recover marks the connection needs_reauth and pauses its syncs; 5xx are retried', async (t) => {
  const source = new FakeSource();
  source.intercept();
  source.put('x', 'x.md', 'x\n');
  const syncId = await newSync('/auth');
  source.interrupts.push({ status: 502, body: { message: 'bad gateway' } });
  t.like((await refresh(syncId)).body.data.run, { status: 'succeeded', http_calls: 2, pulled: { created: 1 } });

  source.put('x', 'x.md', 'x2\n');
  source.interrupts.push({ status: 401, body: { message: 'Bad credentials' } });
  const run = (await refresh(syncId)).body.data.run;
  t.is(run.status, 'failed');
  t.regex(run.error, /authorized again/);
  const sync = (await server.api('GET', `/sync/syncs?project_id=${projectId}`, { token })).body.data.syncs.find((s: { id: string }) => s.id === syncId);
  t.like(sync, { status: 'paused', pause_reason: 'needs_reauth' });
  t.like((await server.api('GET', `/oauth/github/status?project_id=${projectId}`, { token })).body.data, { needs_reauth: true });
  const status = await server.api('GET', `/sync/status?project_id=${projectId}`, { token });
  assertDocumented(t, server.running.services, 'get', '/sync/status', status);
  t.true(status.body.data.needs_reauth >= 1);
  // A paused sync does not run.
  t.is((await refresh(syncId)).status, 409);

  // Connecting again and resuming: the run picks up from the stored cursor.
  await connectGithub();
  for (const id of (await server.api('GET', `/sync/syncs?project_id=${projectId}`, { token })).body.data.syncs.map((s: { id: string }) => s.id)) {
    await server.api('POST', `/sync/syncs/${id}/resume`, { token });
  }
  t.like((await refresh(syncId)).body.data.run, { status: 'succeeded', pulled: { updated: 1 } });
});

test.serial('triggers: interval needs interval_s at or above the minimum, webhook deliveries must be signed', async (t) => {
  const source = new FakeSource();
  source.intercept();
  const syncId = await newSync('/triggers');
  const patch = (body: unknown) => server.api('PATCH', `/sync/syncs/${syncId}/trigger`, { token, body });
  t.is((await patch({ mode: 'interval' })).status, 422);
  t.is((await patch({ mode: 'interval', interval_s: 0 })).status, 422);
  t.is((await patch({ mode: 'manual', interval_s: 60 })).status, 422);
  t.is((await patch({ mode: 'hourly' })).status, 422);
  t.is((await patch({ mode: 'manual', extra: true })).status, 422);
  t.is((await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'github', config: { path: '/x', colour: 'red' } } })).status, 422);

  const hook = await patch({ mode: 'webhook' });
  t.is(hook.status, 200);
  assertDocumented(t, server.running.services, 'patch', '/sync/syncs/{syncId}/trigger', hook);
  const secret = hook.body.data.webhook_secret as string;
  t.true(hook.body.data.webhook_url.endsWith(`/api/v1/sync/webhooks/${syncId}`));
  const body = JSON.stringify({ ref: 'refs/heads/main' });
  const post = (signature: string | null) =>
    fetchRaw(`${server.running.url}/api/v1/sync/webhooks/${syncId}`, body, signature ? { 'x-hub-signature-256': signature } : {});
  t.is((await post(null)).status, 401);
  t.is((await post(`sha256=${createHmac('sha256', 'wrong').update(body).digest('hex')}`)).status, 401);
  const ok = await post(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  t.is(ok.status, 202, ok.text);
  const runId = JSON.parse(ok.text).data.run.id as string;
  const done = await until(async () => {
    const r = (await server.api('GET', `/sync/runs/${runId}`, { token })).body.data;
    return r.status === 'succeeded' && r;
  });
  t.is(done.trigger, 'webhook');
  // The secret is stored sealed.
  const row = await server.running.services.metadata.db.selectFrom('sync_states').select('webhook_secret').where('sync_id', '=', syncId).executeTakeFirstOrThrow();
  t.false(row.webhook_secret!.includes(secret));
});

test.serial('interval syncs run on schedule, one run at a time, and the schedule survives a restart', async (t) => {
  const source = new FakeSource();
  source.intercept();
  source.put('s', 's.md', 's\n');
  const syncId = await newSync('/scheduled');
  const set = await server.api('PATCH', `/sync/syncs/${syncId}/trigger`, { token, body: { mode: 'interval', interval_s: 1 } });
  t.like(set.body.data, { trigger_mode: 'interval', interval_s: 1 });
  t.truthy(set.body.data.next_run_at);
  const intervalRuns = async () =>
    ((await server.api('GET', `/sync/syncs/${syncId}/runs?limit=100`, { token })).body.data.runs as { trigger: string; status: string; started_at: string; finished_at: string }[]).filter(
      (r) => r.trigger === 'interval',
    );
  await until(async () => (await intervalRuns()).filter((r) => r.status === 'succeeded').length >= 2);

  // Restart on the same data: the next run time was kept, and runs go on.
  const dataDir = server.dataDir;
  const nextBefore = (await server.running.services.syncStore.require(syncId)).next_run_at;
  t.truthy(nextBefore);
  await server.running.close();
  nock.cleanAll();
  source.intercept();
  const restarted = await startOAuthServer(FAST, { dataDir, keepData: true });
  try {
    restarted.running.services.syncRuntime.register(fakeConnector);
    server = restarted;
    token = await server.login(ADMIN.email, ADMIN.password);
    t.is((await server.running.services.syncStore.require(syncId)).trigger_mode, 'interval');
    const startedAt = Date.now();
    const count = (await intervalRuns()).length;
    const after = await until(async () => {
      const runs = await intervalRuns();
      return runs.length > count && runs[0]!.status === 'succeeded' && runs;
    });
    t.true(Date.parse(after[0]!.started_at) >= startedAt - 1000);
    // Never two runs of one sync at once.
    const spans = after.filter((r) => r.finished_at).map((r) => [Date.parse(r.started_at), Date.parse(r.finished_at)] as const).sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < spans.length; i++) t.true(spans[i]![0] >= spans[i - 1]![1], 'runs overlap');
  } finally {
    await server.api('PATCH', `/sync/syncs/${syncId}/trigger`, { token, body: { mode: 'manual' } });
  }
});

test.serial('a sync refreshed twice at once runs once; deleting a sync keeps its content', async (t) => {
  const source = new FakeSource();
  source.intercept();
  source.put('k', 'k.md', 'kept\n');
  const syncId = await newSync('/twice');
  const [a, b] = await Promise.all([refresh(syncId), refresh(syncId)]);
  t.is(a.body.data.run.id, b.body.data.run.id);
  const gone = await server.api('DELETE', `/sync/syncs/${syncId}`, { token });
  t.is(gone.status, 200);
  t.is((await cat('twice/k.md')).body.data.content, 'kept\n');
  t.is(await metadataCount(server.running, sql`SELECT COUNT(*) AS n FROM sync_items WHERE sync_id = ${syncId}`), 0);
});

test.serial('no token of a run is in the database in clear or in the logs', async (t) => {
  await connectGithub();
  const source = new FakeSource();
  source.intercept();
  source.put('z', 'z.md', 'z\n');
  source.interrupts.push({ status: 500, body: { message: 'boom' } });
  const syncId = await newSync('/secrets');
  t.like((await refresh(syncId)).body.data.run, { status: 'succeeded', http_calls: 2 });
  t.is(source.seen[0]!.headers.authorization, `Bearer ${GH_TOKEN}`);
  assertNoSecrets(t, server, [GH_TOKEN]);
});

function fetchRaw(url: string, body: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    import('node:http').then(({ default: http }) => {
      const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString() }));
      });
      req.on('error', reject);
      req.end(body);
    }, reject);
  });
}
