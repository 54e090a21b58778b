import test from 'ava';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AccessCounter } from '../../src/analytics/accessCounter.ts';
import { AnalyticsStore } from '../../src/analytics/analyticsStore.ts';
import { VisitorHasher } from '../../src/analytics/visitorHash.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { metadataCount, metadataRows, openMetadataOfDataDir } from '../helpers/metadata.ts';
import { assertDocumented } from '../helpers/openapi.ts';
import { contentApi, createKey, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { everyStoredString } from '../helpers/storedStrings.ts';

interface Site {
  server: TestServer;
  token: string;
  projectId: string;
  nodeId: string;
  publishId: string;
  key: string;
}

/** A server with a published markdown page and a second, unpublished node. */
async function site(env: Record<string, string> = {}, dataDir?: string): Promise<Site> {
  const server = await startTestServer(dataDir ? { dataDir } : {}, env);
  const { token } = await server.login();
  const { projectId } = await defaultProject(server, token);
  const c = contentApi(server, token, projectId);
  const page = await c('POST', '/write', { path: 'site/page.md', node_type: 'markdown', content: '# Page' });
  await c('POST', '/write', { path: 'other/data.json', node_type: 'json', content: { a: 1 } });
  const p = await server.api('POST', '/publishes/', { token, body: { project_id: projectId, node_id: page.body.data.id } });
  return { server, token, projectId, nodeId: page.body.data.id, publishId: p.body.data.id, key: p.body.data.publish_key };
}

const view = (s: Site, userAgent: string, key = s.key) => fetch(`${s.server.url}/api/v1/p/${key}`, { headers: { 'user-agent': userAgent } });

function range(minutesBack = 10) {
  const to = new Date(Date.now() + 60_000).toISOString();
  const from = new Date(Date.now() - minutesBack * 60_000).toISOString();
  return `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`;
}


const sum = (points: { views: number; api_calls: number; unique_visitors: number }[], k: 'views' | 'api_calls' | 'unique_visitors') => points.reduce((n, p) => n + p[k], 0);

/** Polls a report until `done` holds (the counter flushes on its own timer), or fails at the deadline. */
async function until<T>(read: () => Promise<T>, done: (v: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (done(v) || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('views, API calls and visitors are counted per publish, node and connection, and reported', async (t) => {
  const s = await site({ CNS_ANALYTICS_FLUSH_MS: '100' });
  t.teardown(() => s.server.stop());
  const { server, token, projectId } = s;
  for (const ua of ['browser-a', 'browser-a', 'browser-b', 'browser-c']) t.is((await view(s, ua)).status, 200);
  t.is((await fetch(`${server.url}/api/v1/p/pk_unknown`)).status, 404);

  const key = await createKey(server, token, projectId, { name: 'reporting bot' });
  for (let i = 0; i < 3; i++) t.is((await server.api('GET', `/content/${projectId}/cat?path=site/page.md`, { token: key.key })).status, 200);
  t.is((await server.api('GET', `/nodes/${s.nodeId}`, { token })).status, 200, "a user's call on a node, the project known from the node");
  const folder = await server.api('GET', `/nodes/by-path?project_id=${projectId}&path=site`, { token });
  const mcp = await server.api('POST', '/mcp-endpoints/', { token, body: { name: 'docs mcp', project_id: projectId, node_id: folder.body.data.id } });
  t.is(mcp.status, 201, JSON.stringify(mcp.body));
  t.is((await server.api('GET', `/content/${projectId}/ls?path=site`, { token: mcp.body.data.key })).status, 200);

  // The timer's flush is waited for in the restart test; here the counts are written at once.
  await server.services.analytics.counter.flush();
  const series = (q: string) => server.api('GET', `/analytics/access-timeseries?project_id=${projectId}&${range()}&interval=minute${q}`, { token });
  const all = await series('');
  assertDocumented(t, server.services, 'get', '/analytics/access-timeseries', all);
  t.is(sum(all.body.data.points, 'views'), 4, 'the 404 is no view');
  // Per minute, a visitor counts in every minute it viewed in (the views may straddle a minute
  // boundary on a slow machine); the distinct count over the range is the summary's, below.
  t.true(sum(all.body.data.points, 'unique_visitors') >= 3, 'three user agents');
  t.true(all.body.data.points.every((p: { unique_visitors: number }) => p.unique_visitors <= 3));
  t.is(all.body.data.points.length, 12, 'every minute of the range is a point, zeros included');

  const byPublish = await series(`&publish_id=${s.publishId}`);
  t.deepEqual([sum(byPublish.body.data.points, 'views'), sum(byPublish.body.data.points, 'api_calls')], [4, 0]);
  const byKey = await series(`&connection_id=${key.id}`);
  t.deepEqual([sum(byKey.body.data.points, 'views'), sum(byKey.body.data.points, 'api_calls'), sum(byKey.body.data.points, 'unique_visitors')], [0, 3, 0]);
  const byNode = await series(`&node_id=${s.nodeId}`);
  // Every call that named the page: its write and its publishing (by path and by node_id in the body), three reads by path through
  // the key, one read by id from the user (the project known from the node).
  t.deepEqual([sum(byNode.body.data.points, 'views'), sum(byNode.body.data.points, 'api_calls')], [4, 6]);

  await server.services.analytics.counter.flush();
  const summary = await server.api('GET', `/analytics/access-summary?project_id=${projectId}&${range()}`, { token });
  assertDocumented(t, server.services, 'get', '/analytics/access-summary', summary);
  const d = summary.body.data;
  t.is(d.totals.views, 4);
  t.is(d.totals.unique_visitors, 3);
  t.true(d.totals.api_calls >= 5);
  t.like(d.top_publishes[0], { publish_id: s.publishId, node_id: s.nodeId, path: 'site/page.md', views: 4, unique_visitors: 3 });
  t.like(d.top_nodes[0], { node_id: s.nodeId, path: 'site/page.md', type: 'markdown', views: 4, api_calls: 7 }, 'and the time series filtered on it named it too');
  const conns = Object.fromEntries(d.top_connections.map((c: { connection_id: string }) => [c.connection_id, c]));
  t.like(conns[key.id], { kind: 'api', name: 'reporting bot', api_calls: 3 });
  t.like(conns[mcp.body.data.mcp_endpoint.id] ?? conns[Object.keys(conns).find((id) => conns[id].kind === 'mcp')!], { kind: 'mcp', name: 'docs mcp', api_calls: 1 });
});

test('who may read the reports: project members and keys of the project; names of connections need keys:manage; a scoped key sees its nodes', async (t) => {
  const s = await site({ CNS_ANALYTICS_FLUSH_MS: '100' });
  t.teardown(() => s.server.stop());
  const { server, token, projectId } = s;
  const key = await createKey(server, token, projectId, { name: 'named key' });
  await server.api('GET', `/content/${projectId}/cat?path=other/data.json`, { token: key.key });
  await view(s, 'x');
  const summary = (tk: string) => server.api('GET', `/analytics/access-summary?project_id=${projectId}&${range()}`, { token: tk });
  await until(() => summary(token), (r) => r.body.data?.top_nodes.length === 2);

  const stranger = await server.createUser('stranger@example.com');
  t.is((await summary(stranger.token)).status, 404);
  const viewer = await server.createUser('viewer@example.com');
  await server.api('POST', `/projects/${projectId}/members`, { token, body: { user_id: viewer.id, role: 'viewer' } });
  const asViewer = await summary(viewer.token);
  t.is(asViewer.status, 200);
  t.like(asViewer.body.data.top_connections.find((c: { connection_id: string }) => c.connection_id === key.id), { kind: 'api', name: null });
  t.is((await summary(token)).body.data.top_connections.find((c: { connection_id: string }) => c.connection_id === key.id).name, 'named key');

  const scoped = await createKey(server, token, projectId, { scope_path: 'site', mode: 'read' });
  const asScoped = await summary(scoped.key);
  t.is(asScoped.status, 200);
  t.deepEqual(asScoped.body.data.top_nodes.map((n: { path: string }) => n.path), ['site/page.md'], 'other/data.json is beyond its scope');
  const otherNode = await server.api('GET', `/nodes/by-path?project_id=${projectId}&path=other/data.json`, { token });
  t.is((await server.api('GET', `/analytics/access-timeseries?project_id=${projectId}&node_id=${otherNode.body.data.id}`, { token: scoped.key })).status, 403);
});

test('a key limited to a folder sees the figures of its folder only: totals, series and rankings', async (t) => {
  const s = await site();
  t.teardown(() => s.server.stop());
  const { server, token, projectId } = s;
  // Known counts at known past times, on the server's own database (the request path is tested above).
  let now = Date.parse('2024-05-01T10:00:30Z');
  const metadata = server.services.metadata;
  const counter = new AccessCounter({ store: new AnalyticsStore(metadata), hasher: new VisitorHasher(metadata), nodes: server.services.content, logger: createLogger('silent'), enabled: true, flushMs: 3_600_000, now: () => now });
  t.teardown(() => counter.close());
  for (const ua of ['a', 'b']) counter.view({ projectId, publishId: s.publishId, nodeId: s.nodeId, address: '192.0.2.7', userAgent: ua });
  const at = (minute: number) => Date.parse(`2024-05-01T10:0${minute}:00Z`);
  for (let i = 0; i < 3; i++) counter.apiCall({ projectId, connectionId: 'con_outside', node: { path: 'other/data.json' } }, at(1));
  counter.apiCall({ projectId, connectionId: 'con_inside', node: { path: 'site/page.md' } }, at(2));
  for (let i = 0; i < 4; i++) counter.apiCall({ projectId, connectionId: 'con_outside', node: null }, at(3));
  now = at(4);
  await counter.flush();

  const q = 'from=2024-05-01T10:00:00Z&to=2024-05-01T11:00:00Z';
  const summary = (tk: string) => server.api('GET', `/analytics/access-summary?project_id=${projectId}&${q}`, { token: tk });
  const series = (tk: string, filter = '') => server.api('GET', `/analytics/access-timeseries?project_id=${projectId}&${q}&interval=minute${filter}`, { token: tk });
  const whole = (await summary(token)).body.data;
  t.deepEqual(whole.totals, { views: 2, api_calls: 8, unique_visitors: 2 });
  t.deepEqual(whole.top_connections.map((c: { connection_id: string; api_calls: number }) => [c.connection_id, c.api_calls]), [['con_outside', 7], ['con_inside', 1]]);

  const scoped = await createKey(server, token, projectId, { scope_path: 'site', mode: 'read' });
  const mine = await summary(scoped.key);
  t.is(mine.status, 200);
  assertDocumented(t, server.services, 'get', '/analytics/access-summary', mine);
  // The views of its published page and the one call on it; nothing of other/ or of calls that named no node.
  t.deepEqual(mine.body.data.totals, { views: 2, api_calls: 1, unique_visitors: 2 });
  t.deepEqual(mine.body.data.top_connections.map((c: { connection_id: string; api_calls: number }) => [c.connection_id, c.api_calls]), [['con_inside', 1]]);
  t.deepEqual(mine.body.data.top_nodes.map((n: { path: string }) => n.path), ['site/page.md']);
  const points = (await series(scoped.key)).body.data.points;
  t.deepEqual([sum(points, 'views'), sum(points, 'api_calls'), sum(points, 'unique_visitors')], [2, 1, 2]);
  t.is(sum((await series(scoped.key, '&connection_id=con_outside')).body.data.points, 'api_calls'), 0, "another connection's calls outside the folder");
  t.is(sum((await series(token, '&connection_id=con_outside')).body.data.points, 'api_calls'), 7);

  // A key of another folder sees none of it.
  const elsewhere = await createKey(server, token, projectId, { scope_path: 'elsewhere', mode: 'read' });
  t.deepEqual((await summary(elsewhere.key)).body.data.totals, { views: 0, api_calls: 0, unique_visitors: 0 });
});

test('ranges: buckets by minute, hour and day, zeros where nothing happened, a cap on points, bad ranges refused', async (t) => {
  const s = await site();
  t.teardown(() => s.server.stop());
  const { server, token, projectId } = s;
  // A counter on the server's own database with a clock set to known times (the request path is tested above).
  let now = Date.parse('2024-03-10T10:00:30Z');
  const metadata = server.services.metadata;
  const counter = new AccessCounter({ store: new AnalyticsStore(metadata), hasher: new VisitorHasher(metadata), nodes: server.services.content, logger: createLogger('silent'), enabled: true, flushMs: 3_600_000, now: () => now });
  t.teardown(() => counter.close());
  const hit = (at: string, ua: string) => {
    now = Date.parse(at);
    counter.view({ projectId, publishId: s.publishId, nodeId: s.nodeId, address: '192.0.2.7', userAgent: ua });
  };
  hit('2024-03-10T10:00:30Z', 'a');
  hit('2024-03-10T10:00:59Z', 'a');
  hit('2024-03-10T10:59:59Z', 'b');
  hit('2024-03-10T11:00:00Z', 'a');
  hit('2024-03-11T09:00:00Z', 'a');
  counter.apiCall({ projectId, connectionId: '', node: { path: 'site/page.md' } }, Date.parse('2024-03-10T10:02:00Z'));
  await counter.flush();

  const series = (q: string) => server.api('GET', `/analytics/access-timeseries?project_id=${projectId}&${q}`, { token });
  const minute = await series('from=2024-03-10T10:00:00Z&to=2024-03-10T10:03:00Z&interval=minute');
  t.deepEqual(minute.body.data.points, [
    { t: '2024-03-10T10:00:00.000Z', views: 2, api_calls: 0, unique_visitors: 1 },
    { t: '2024-03-10T10:01:00.000Z', views: 0, api_calls: 0, unique_visitors: 0 },
    { t: '2024-03-10T10:02:00.000Z', views: 0, api_calls: 1, unique_visitors: 0 },
  ]);
  const hour = await series('from=2024-03-10T10:00:00Z&to=2024-03-10T12:00:00Z&interval=hour');
  t.deepEqual(hour.body.data.points.map((p: { views: number; unique_visitors: number }) => [p.views, p.unique_visitors]), [[3, 2], [1, 1]]);
  const day = await series('from=2024-03-10T00:00:00Z&to=2024-03-12T00:00:00Z&interval=day');
  t.deepEqual(day.body.data.points.map((p: { t: string; views: number; api_calls: number }) => [p.t, p.views, p.api_calls]), [
    ['2024-03-10T00:00:00.000Z', 4, 1],
    ['2024-03-11T00:00:00.000Z', 1, 0],
  ]);
  const partial = await series('from=2024-03-10T10:30:00Z&to=2024-03-10T11:30:00Z&interval=hour');
  t.is(partial.body.data.from, '2024-03-10T10:00:00.000Z', 'buckets are whole hours');
  t.is(partial.body.data.points.length, 2);

  t.is((await series('from=2024-03-01T00:00:00Z&to=2024-03-10T00:00:00Z&interval=minute')).status, 422, 'past the cap on points');
  t.is((await series('from=2024-03-10T00:00:00Z&to=2024-03-09T00:00:00Z')).status, 422, 'to before from');
  t.is((await series('from=yesterday')).status, 422);
  t.is((await series('interval=week')).status, 422);
  t.is((await series('from=2024-03-10T00:00:00Z&to=2024-03-11T00:00:00Z&nodes=x')).status, 422, 'an unknown filter is refused, not ignored');
  t.is((await server.api('GET', `/analytics/access-summary?project_id=${projectId}&from=2024-03-10T00:00:00Z&to=2024-03-12T00:00:00Z`, { token })).body.data.totals.views, 5);
});

test('counts pending at shutdown are written; no address is stored; a restart the same day counts the same visitor once', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cns-analytics-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  // A flush interval of ten minutes: only the shutdown writes.
  const first = await site({ CNS_ANALYTICS_FLUSH_MS: '600000' }, dir);
  await first.server.services.metadata.db.insertInto('analytics_salts').values({ day: '2000-01-01', salt: 'old-salt' }).execute();
  for (let i = 0; i < 3; i++) await view(first, 'Mozilla/5.0 (Unique Agent 7)');
  await first.server.api('GET', `/content/${first.projectId}/cat?path=site/page.md`, { token: first.token });
  t.is(await metadataCount(first.server, sql`SELECT COUNT(*) AS n FROM access_counts`), 0, 'nothing written by a request');
  await first.server.stop();

  const db = new Database(join(dir, 'cns.db'), { readonly: true });
  const metadata = await openMetadataOfDataDir(dir);
  const stored = { services: { db, metadata } };
  const [views] = await metadataRows(stored, sql<{ v: number | string; a: number | string }>`SELECT SUM(views) AS v, SUM(api_calls) AS a FROM access_counts WHERE project_id = ${first.projectId}`);
  t.is(Number(views!.v), 3);
  t.true(Number(views!.a) >= 1);
  t.is(await metadataCount(stored, sql`SELECT COUNT(DISTINCT visitor) AS n FROM access_visitors`), 1, 'one visitor (in one row per minute it viewed in)');
  t.deepEqual((await metadata.db.selectFrom('analytics_salts').select('day').execute()).map((r) => r.day), [new Date().toISOString().slice(0, 10)], "yesterday's salts are gone");
  const everything = (await everyStoredString(stored)).join('\n');
  for (const address of ['127.0.0.1', '::ffff:127.0.0.1', 'Unique Agent 7']) t.false(everything.includes(address), `${address} is nowhere in the database`);
  db.close();
  await metadata.close();

  const second = await startTestServer({ dataDir: dir }, { CNS_ANALYTICS_FLUSH_MS: '100' });
  t.teardown(() => second.stop());
  const token = (await second.login()).token;
  await fetch(`${second.url}/api/v1/p/${first.key}`, { headers: { 'user-agent': 'Mozilla/5.0 (Unique Agent 7)' } });
  const today = new Date().toISOString().slice(0, 10);
  const q = `/analytics/access-timeseries?project_id=${first.projectId}&from=${today}T00:00:00Z&to=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}&interval=day`;
  const res = await until(() => second.api('GET', q, { token }), (r) => sum(r.body.data.points, 'views') === 4);
  t.is(sum(res.body.data.points, 'views'), 4);
  t.is(sum(res.body.data.points, 'unique_visitors'), 1, 'the same visitor after a restart: the salt of the day was kept');
});

test('CNS_ANALYTICS=false counts nothing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cns-analytics-off-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const s = await site({ CNS_ANALYTICS: 'false', CNS_ANALYTICS_FLUSH_MS: '100' }, dir);
  t.false(s.server.services.analytics.counter.enabled);
  t.is((await view(s, 'a')).status, 200);
  await s.server.api('GET', `/content/${s.projectId}/cat?path=site/page.md`, { token: s.token });
  const report = await s.server.api('GET', `/analytics/access-summary?project_id=${s.projectId}&${range()}`, { token: s.token });
  t.is(report.status, 200, 'the reports still answer');
  t.deepEqual(report.body.data.totals, { views: 0, api_calls: 0, unique_visitors: 0 });
  await s.server.stop();
  const metadata = await openMetadataOfDataDir(dir);
  t.teardown(() => metadata.close());
  for (const table of ['access_counts', 'access_visitors', 'analytics_salts']) t.is(await metadataCount({ services: { metadata } }, sql`SELECT COUNT(*) AS n FROM ${sql.table(table)}`), 0, table);
});
