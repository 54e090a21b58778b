import test from 'ava';
import { createHmac } from 'node:crypto';
import { DeliveryStore } from '../../src/webhooks/deliveryStore.ts';
import { assertDocumented } from '../helpers/openapi.ts';
import { contentApi, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { Receiver, until } from './receiver.ts';

// Deliveries through HTTP to a real receiver on this machine (loopback allowed as an operator
// would allow it: CNS_URL_FETCH_ALLOW_PRIVATE): signature, order, retries, redelivery, ping.

const fast = { timeoutMs: 1000, backoffMs: 20, backoffMaxMs: 80, retryForMs: 60_000, disableAfterMs: 60_000, maxPaths: 3, concurrency: 4, keepDeliveries: 1000 };

let server: TestServer;
let token: string;
let projectId: string;
test.before(async () => {
  server = await startTestServer({ urlFetchAllowPrivate: true, webhooks: fast });
  token = (await server.login()).token;
  projectId = (await defaultProject(server, token)).projectId;
});
test.after.always(() => server?.stop());

async function hookFor(receiver: Receiver, body: Record<string, unknown> = {}) {
  const res = await server.api('POST', `/projects/${projectId}/webhooks`, { token, body: { url: receiver.url, events: ['content.created', 'content.updated', 'content.deleted', 'content.moved'], ...body } });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

test.serial('a write is one signed delivery; the secret is shown once', async (t) => {
  const r = await new Receiver().start();
  t.teardown(() => r.stop());
  const created = await hookFor(r, { path_prefix: 'sig' });
  assertDocumented(t, server.services, 'post', '/projects/{project_id}/webhooks', created);
  const hook = created.body.data;
  t.is(hook.state, 'active');
  t.true(hook.secret.length >= 32);
  const got = await server.api('GET', `/projects/${projectId}/webhooks/${hook.id}`, { token });
  assertDocumented(t, server.services, 'get', '/projects/{project_id}/webhooks/{hook_id}', got);
  t.false('secret' in got.body.data, 'never shown again');

  const w = await contentApi(server, token, projectId)('POST', '/write', { path: 'sig/a.md', content: '# héllo', message: 'first', node_type: 'markdown' });
  t.is(w.status, 201);
  await r.waitFor(() => r.received.length >= 1);
  const d = r.received[0]!;
  const expected = `sha256=${createHmac('sha256', hook.secret).update(d.raw).digest('hex')}`;
  t.is(d.headers['x-cns-signature-256'], expected, 'HMAC-SHA256 of the raw body under the secret');
  t.is(d.headers['x-cns-event'], 'content.created');
  t.is(d.headers['content-type'], 'application/json');
  t.is(d.body.delivery_id, d.headers['x-cns-delivery']);
  t.is(d.body.event, 'content.created');
  t.is(d.body.project_id, projectId);
  t.is(d.body.commit.project_version, w.body.data.project_version ?? d.body.commit.project_version);
  t.is(d.body.commit.message, 'first');
  t.is(d.body.actor.type, 'user');
  // The folder made on the way is part of the same commit.
  t.deepEqual(d.body.paths.map((p: { path: string; version: number; node_type: string }) => [p.path, p.node_type, p.version]), [['sig', 'folder', 1], ['sig/a.md', 'markdown', 1]]);
  t.is(d.body.paths_total, 2);
  // Another key's signature does not match: the check means something.
  t.not(d.headers['x-cns-signature-256'], `sha256=${createHmac('sha256', 'another secret').update(d.raw).digest('hex')}`);

  const list = await until(async () => {
    const res = await server.api('GET', `/projects/${projectId}/webhooks/${hook.id}/deliveries`, { token });
    return res.body.data.deliveries[0]?.status === 'delivered' ? res : undefined;
  });
  assertDocumented(t, server.services, 'get', '/projects/{project_id}/webhooks/{hook_id}/deliveries', list);
  const logged = list.body.data.deliveries[0];
  t.is(logged.response_status, 200);
  t.is(logged.response.body, 'answered 200');
  t.is(logged.attempts, 1);
  t.is(logged.request.body.delivery_id, logged.id);
  t.true(logged.duration_ms >= 0);
  // Outside the path_prefix: nothing.
  await contentApi(server, token, projectId)('POST', '/write', { path: 'elsewhere.md', content: 'x', node_type: 'markdown' });
  await contentApi(server, token, projectId)('POST', '/write', { path: 'sig/b.md', content: 'x', node_type: 'markdown' });
  await r.waitFor(() => r.received.length >= 2);
  t.is(r.received[1]!.body.paths[0].path, 'sig/b.md');
});

test.serial('deliveries arrive in commit order; a commit of many paths is one delivery, paths capped with a count', async (t) => {
  const r = await new Receiver().start();
  t.teardown(() => r.stop());
  const hook = (await hookFor(r, { path_prefix: 'order' })).body.data;
  const call = contentApi(server, token, projectId);
  for (let i = 0; i < 12; i++) t.is((await call('POST', '/write', { path: `order/f${i}.md`, content: `v${i}`, node_type: 'markdown' })).status, 201);
  const bulk = await call('POST', '/bulk-write', { files: [1, 2, 3, 4, 5].map((i) => ({ path: `order/bulk/${i}.md`, content: 'b', node_type: 'markdown' })), message: 'five at once' });
  t.true(bulk.status === 200 || bulk.status === 201, JSON.stringify(bulk.body));
  await r.waitFor(() => r.received.length >= 13);
  const versions = r.received.map((x) => x.body.commit.project_version);
  t.deepEqual(versions, [...versions].sort((a, b) => a - b), 'commit order');
  t.is(new Set(versions).size, 13, 'one delivery per commit');
  const last = r.received[12]!.body;
  t.is(last.paths.length, 3, 'capped at CNS_WEBHOOK_MAX_PATHS');
  t.is(last.paths_total, 6, 'the folder and its five files');
  t.true(last.paths_truncated);

  // The log keeps the newest finished deliveries (CNS_WEBHOOK_KEEP_DELIVERIES).
  const all = await until(async () => {
    const res = await server.api('GET', `/projects/${projectId}/webhooks/${hook.id}/deliveries?limit=200`, { token });
    return res.body.data.deliveries.every((d: { status: string }) => d.status === 'delivered') ? res.body.data.deliveries : undefined;
  });
  t.is(all.length, 13);
  t.is(await new DeliveryStore(server.services.metadata).prune(hook.id, 5), 8);
  const kept = (await server.api('GET', `/projects/${projectId}/webhooks/${hook.id}/deliveries?limit=200`, { token })).body.data;
  t.is(kept.total, 5);
  t.deepEqual(kept.deliveries.map((d: { id: string }) => d.id), all.slice(0, 5).map((d: { id: string }) => d.id), 'the newest five');
});

test.serial('a failing receiver is retried with backoff, and later deliveries wait their turn', async (t) => {
  const r = await new Receiver().start();
  t.teardown(() => r.stop());
  // The first three attempts fail (500, 503, then no answer within the timeout), the rest succeed.
  r.respond = (_x, n) => (n === 1 ? 500 : n === 2 ? 503 : n === 3 ? 'hang' : 200);
  const hook = (await hookFor(r, { path_prefix: 'retry' })).body.data;
  const call = contentApi(server, token, projectId);
  await call('POST', '/write', { path: 'retry/a.md', content: 'a', node_type: 'markdown' });
  await call('POST', '/write', { path: 'retry/b.md', content: 'b', node_type: 'markdown' });
  await r.waitFor(() => r.received.length >= 5, 20_000);
  const paths = r.received.map((x) => x.body.paths.at(-1).path);
  t.deepEqual(paths, ['retry/a.md', 'retry/a.md', 'retry/a.md', 'retry/a.md', 'retry/b.md'], 'b only after a got through');
  t.is(new Set(r.received.slice(0, 4).map((x) => x.headers['x-cns-delivery'])).size, 1, 'a retry is the same delivery');
  t.true(r.received[0]!.raw.equals(r.received[3]!.raw), 'and the same bytes');
  const gap1 = r.received[1]!.at - r.received[0]!.at;
  t.true(gap1 >= 15, `backoff before the first retry (${gap1} ms)`);
  const list = await until(async () => {
    const res = await server.api('GET', `/projects/${projectId}/webhooks/${hook.id}/deliveries`, { token });
    const [b, a] = res.body.data.deliveries;
    return a?.status === 'delivered' && b?.status === 'delivered' ? res.body.data.deliveries : undefined;
  });
  t.is(list[1].attempts, 4);
  t.is(list[1].response_status, 200);
  t.is(list[0].attempts, 1);
  const h = await server.api('GET', `/projects/${projectId}/webhooks/${hook.id}`, { token });
  t.is(h.body.data.failing_since, null, 'a success ends the failing streak');
});

test.serial('redelivery sends the same body under a new id; ping answers at once', async (t) => {
  const r = await new Receiver().start();
  t.teardown(() => r.stop());
  const hook = (await hookFor(r, { path_prefix: 'again' })).body.data;
  await contentApi(server, token, projectId)('POST', '/write', { path: 'again/x.json', content: { a: 1 }, node_type: 'json' });
  await r.waitFor(() => r.received.length >= 1);
  const first = r.received[0]!;
  const original = await until(async () => {
    const res = await server.api('GET', `/projects/${projectId}/webhooks/${hook.id}/deliveries`, { token });
    return res.body.data.deliveries.find((d: { status: string }) => d.status === 'delivered');
  });
  const re = await server.api('POST', `/projects/${projectId}/webhooks/${hook.id}/deliveries/${original.id}/redeliver`, { token });
  assertDocumented(t, server.services, 'post', '/projects/{project_id}/webhooks/{hook_id}/deliveries/{delivery_id}/redeliver', re);
  t.is(re.body.data.redelivery_of, original.id);
  await r.waitFor(() => r.received.length >= 2);
  const second = r.received[1]!;
  t.not(second.headers['x-cns-delivery'], first.headers['x-cns-delivery']);
  t.is(second.body.redelivery_of, first.body.delivery_id);
  const { delivery_id: _a, redelivery_of: _b, ...rest2 } = second.body;
  const { delivery_id: _c, ...rest1 } = first.body;
  t.deepEqual(rest2, rest1, 'the same content');
  t.is(second.headers['x-cns-signature-256'], `sha256=${createHmac('sha256', hook.secret).update(second.raw).digest('hex')}`);

  t.is((await server.api('POST', `/projects/${projectId}/webhooks/${hook.id}/deliveries/dlv_nope/redeliver`, { token })).status, 404);

  const ping = await server.api('POST', `/projects/${projectId}/webhooks/${hook.id}/ping`, { token });
  assertDocumented(t, server.services, 'post', '/projects/{project_id}/webhooks/{hook_id}/ping', ping);
  t.is(ping.body.data.status, 'delivered');
  t.is(ping.body.data.response_status, 200);
  t.is(r.of('ping').length, 1);
  t.is(r.of('ping')[0]!.body.hook.id, hook.id);
  r.respond = () => 410;
  const failed = await server.api('POST', `/projects/${projectId}/webhooks/${hook.id}/ping`, { token });
  t.is(failed.body.data.status, 'failed');
  t.is(failed.body.data.response_status, 410);
  t.is((await server.api('POST', `/projects/${projectId}/webhooks/${hook.id}/deliveries/${failed.body.data.id}/redeliver`, { token })).status, 409, 'a ping is not redelivered');
});

test.serial('PATCH changes events and secret; DELETE stops deliveries; bad input is 422 and changes nothing', async (t) => {
  const r = await new Receiver().start();
  t.teardown(() => r.stop());
  const hook = (await hookFor(r, { path_prefix: 'patch' })).body.data;
  const base = `/projects/${projectId}/webhooks`;
  const bad = [
    { url: r.url, events: ['content.exploded'] },
    { url: r.url, events: [] },
    { url: r.url, events: ['content.created'], colour: 'red' },
    { url: 'ftp://127.0.0.1/x', events: ['content.created'] },
    { url: r.url, events: ['content.created'], path_prefix: '../up' },
    { url: r.url, events: ['content.created'], secret: 'short' },
  ];
  for (const body of bad) {
    const res = await server.api('POST', base, { token, body });
    t.is(res.status, 422, JSON.stringify(body));
    t.is(res.body.code, 'VALIDATION_ERROR');
  }
  t.is((await server.api('PATCH', `${base}/${hook.id}`, { token, body: { events: ['nope'] } })).status, 422);
  t.is((await server.api('PATCH', `${base}/${hook.id}`, { token, body: {} })).status, 422);
  const patched = await server.api('PATCH', `${base}/${hook.id}`, { token, body: { events: ['content.deleted'], secret: null } });
  assertDocumented(t, server.services, 'patch', '/projects/{project_id}/webhooks/{hook_id}', patched);
  t.deepEqual(patched.body.data.events, ['content.deleted']);
  const secret = patched.body.data.secret;
  t.truthy(secret);
  t.not(secret, hook.secret);
  const call = contentApi(server, token, projectId);
  await call('POST', '/write', { path: 'patch/p.md', content: 'x', node_type: 'markdown' });
  await call('POST', '/rm', { path: 'patch/p.md' });
  await r.waitFor(() => r.received.length >= 1);
  t.is(r.received[0]!.body.event, 'content.deleted', 'the create was not subscribed to');
  t.is(r.received[0]!.body.paths[0].operation, 'trash');
  t.is(r.received[0]!.headers['x-cns-signature-256'], `sha256=${createHmac('sha256', secret).update(r.received[0]!.raw).digest('hex')}`);
  const del = await server.api('DELETE', `${base}/${hook.id}`, { token });
  assertDocumented(t, server.services, 'delete', '/projects/{project_id}/webhooks/{hook_id}', del);
  t.is((await server.api('GET', `${base}/${hook.id}`, { token })).status, 404);
  const list = await server.api('GET', `${base}?recent=2`, { token });
  assertDocumented(t, server.services, 'get', '/projects/{project_id}/webhooks', list);
  t.false(list.body.data.webhooks.some((h: { id: string }) => h.id === hook.id));
});
