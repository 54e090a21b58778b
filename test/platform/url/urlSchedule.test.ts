import test from 'ava';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { assertDocumented } from '../../helpers/openapi.ts';
import { defaultProject } from '../../helpers/project.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

// Issue 28 point 18: url syncs run on an interval through the sync scheduler, like the platform
// connectors (next run time in SQLite, jittered, paused syncs skipped).

let server: TestServer;
let site: Server;
let token: string;
let projectId: string;
let served = 0;

test.before(async () => {
  // Each fetch of the page gets a new version of it.
  site = createServer((_req, res) => {
    served++;
    res.writeHead(200, { 'content-type': 'text/markdown' });
    res.end(`# edition ${served}\n`);
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  // A one-second interval is allowed here (30 s by default), so that runs come while the test waits.
  server = await startTestServer({}, { CNS_URL_FETCH_ALLOW_PRIVATE: '1', CNS_SYNC_MIN_INTERVAL_S: '1' });
  ({ token } = await server.login());
  ({ projectId } = await defaultProject(server, token));
});

test.after.always(async () => {
  await server?.stop();
  site?.close();
});

type Run = { trigger: string; status: string; started_at: string; finished_at: string | null };
const runsOf = async (syncId: string) => (await server.api('GET', `/sync/syncs/${syncId}/runs?limit=100`, { token })).body.data.runs as Run[];

/** Polls `check` until it returns a value, or fails after `ms`. */
async function until<T>(check: () => Promise<T | undefined | null | false>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

test.serial('a url sync set to an interval is fetched on schedule until set back to manual', async (t) => {
  const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/news.md`;
  const made = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'url', config: { url, path: 'web/news.md' } } });
  t.is(made.status, 201, JSON.stringify(made.body));
  const syncId = made.body.data.sync.id as string;
  const connectors = (await server.api('GET', '/sync/connectors', { token })).body.data.connectors as { provider: string; sync_modes: string[] }[];
  t.deepEqual(connectors.find((c) => c.provider === 'url')!.sync_modes, ['manual', 'interval']);

  const patch = (body: unknown) => server.api('PATCH', `/sync/syncs/${syncId}/trigger`, { token, body });
  t.is((await patch({ mode: 'interval' })).status, 422, 'interval_s is required');
  t.is((await patch({ mode: 'interval', interval_s: 0 })).status, 422, 'below the minimum');
  t.is((await patch({ mode: 'webhook' })).status, 422, 'a url sync has no webhook');
  const set = await patch({ mode: 'interval', interval_s: 1 });
  t.is(set.status, 200, JSON.stringify(set.body));
  assertDocumented(t, server.services, 'patch', '/sync/syncs/{syncId}/trigger', set);
  t.like(set.body.data, { trigger_mode: 'interval', interval_s: 1 });
  t.truthy(set.body.data.next_run_at);

  // Two scheduled runs, one after the other, each writing what the page then said.
  const runs = await until(async () => {
    const r = (await runsOf(syncId)).filter((x) => x.trigger === 'interval' && x.status === 'succeeded');
    return r.length >= 2 && r;
  });
  const spans = runs.map((r) => [Date.parse(r.started_at), Date.parse(r.finished_at!)] as const).sort((a, b) => a[0] - b[0]);
  for (let i = 1; i < spans.length; i++) t.true(spans[i]![0] >= spans[i - 1]![1], 'runs overlap');
  const cat = await server.api('GET', `/content/${projectId}/cat?path=web/news.md`, { token });
  t.regex(cat.body.data.content, /^# edition \d+\n$/);
  t.true((await server.api('GET', `/content/${projectId}/versions?path=web/news.md`, { token })).body.data.versions.length >= 2);
  const status = await server.api('GET', `/sync/status?project_id=${projectId}`, { token });
  t.truthy(status.body.data.items.find((i: { id: string }) => i.id === syncId).next_run_at);

  // A manual refresh still answers its run.
  const manual = await server.api('POST', `/sync/syncs/${syncId}/refresh`, { token });
  t.is(manual.status, 200, JSON.stringify(manual.body));
  t.is(manual.body.data.run.status, 'succeeded');

  // Back to manual: no next run is planned.
  const off = await patch({ mode: 'manual' });
  t.like(off.body.data, { trigger_mode: 'manual', interval_s: null, next_run_at: null });
  t.is((await server.services.syncStore.require(syncId)).next_run_at, null);
});

test.serial('a paused url sync is not run by the scheduler; resumed, it is', async (t) => {
  const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/paused.md`;
  const made = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'url', config: { url, path: 'web/paused.md' } } });
  const syncId = made.body.data.sync.id as string;
  t.is((await server.api('POST', `/sync/syncs/${syncId}/pause`, { token })).status, 200);
  t.is((await server.api('PATCH', `/sync/syncs/${syncId}/trigger`, { token, body: { mode: 'interval', interval_s: 1 } })).status, 200);
  // Due now, but paused: the scheduler passes it over (its state says when it would run).
  await server.services.syncRuntime.runs.setNextRunAt(syncId, new Date(Date.now() - 1000).toISOString());
  t.deepEqual((await server.services.syncRuntime.runs.due(new Date().toISOString(), 100)).filter((s) => s.sync_id === syncId), []);
  t.is((await server.api('POST', `/sync/syncs/${syncId}/resume`, { token })).status, 200);
  await until(async () => (await runsOf(syncId)).some((r) => r.trigger === 'interval' && r.status === 'succeeded'));
  t.pass();
  await server.api('PATCH', `/sync/syncs/${syncId}/trigger`, { token, body: { mode: 'manual' } });
});
