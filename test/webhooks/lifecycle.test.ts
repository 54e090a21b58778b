import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { addOrgMember, createKey, createProject, email } from '../api/fixtures.ts';
import { submitFiles } from '../ingest/ingestClient.ts';
import { contentApi, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { Receiver, until } from './receiver.ts';

// The life of hooks and deliveries: the disabled state, a restart with deliveries pending, the
// outbound guard, scope checks (a hook acts as its creator), and events that are not commits.

const short = { timeoutMs: 1000, backoffMs: 20, backoffMaxMs: 50, retryForMs: 300, disableAfterMs: 300, maxPaths: 100, concurrency: 4, keepDeliveries: 1000 };
const events = ['content.created', 'content.updated', 'content.deleted', 'content.moved', 'ingest.task_finished'];
const md = (path: string, content = 'x') => ({ path, content, node_type: 'markdown' });

async function setup(server: TestServer) {
  const token = (await server.login()).token;
  const { projectId, orgId } = await defaultProject(server, token);
  return { token, projectId, orgId };
}

const deliveriesOf = async (server: TestServer, token: string, projectId: string, hookId: string) =>
  (await server.api('GET', `/projects/${projectId}/webhooks/${hookId}/deliveries`, { token })).body.data.deliveries as { id: string; status: string; attempts: number; error: string | null }[];

test('a hook failing for the whole window is disabled and shown so; switched on again, it sends what was queued', async (t) => {
  // A window long enough for several attempts even on a loaded machine.
  const server = await startTestServer({ urlFetchAllowPrivate: true, webhooks: { ...short, retryForMs: 2000, disableAfterMs: 2000 } });
  t.teardown(() => server.stop());
  const { token, projectId } = await setup(server);
  const r = await new Receiver().start();
  t.teardown(() => r.stop());
  r.respond = () => 500;
  const hook = (await server.api('POST', `/projects/${projectId}/webhooks`, { token, body: { url: r.url, events } })).body.data;
  const call = contentApi(server, token, projectId);
  await call('POST', '/write', md('a.md'));
  await call('POST', '/write', md('b.md'));
  const disabled = await until(async () => {
    const h = (await server.api('GET', `/projects/${projectId}/webhooks/${hook.id}`, { token })).body.data;
    return h.state === 'disabled' ? h : undefined;
  }, 10_000, 'the hook disabled');
  t.is(disabled.disabled_reason, 'failing');
  t.truthy(disabled.failing_since);
  t.true(disabled.active, 'still set active by its managers: the service disabled it');
  const list = await deliveriesOf(server, token, projectId, hook.id);
  const [second, first] = list;
  t.is(first!.status, 'failed');
  t.true(first!.attempts >= 2, `retried (${first!.attempts} attempts)`);
  t.is(first!.error, 'the receiver answered 500');
  t.is(second!.status, 'pending', 'held while the hook is off');
  t.true(r.received.every((x) => x.body.paths.at(-1).path === 'a.md'), 'b was never attempted: order holds');

  r.respond = () => 200;
  const on = await server.api('PATCH', `/projects/${projectId}/webhooks/${hook.id}`, { token, body: { active: true } });
  t.is(on.body.data.state, 'active');
  t.is(on.body.data.failing_since, null);
  await r.waitFor(() => r.received.some((x) => x.body.paths.at(-1).path === 'b.md'));
  await until(async () => ((await deliveriesOf(server, token, projectId, hook.id))[0]!.status === 'delivered' ? true : undefined));
});

test('pending deliveries survive a restart and go out, once, after it', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-webhooks-restart-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const settings = { dataDir, urlFetchAllowPrivate: true, webhooks: { ...short, retryForMs: 600_000, disableAfterMs: 600_000, backoffMaxMs: 200 } };
  let server = await startTestServer(settings);
  const { token, projectId } = await setup(server);
  const r = await new Receiver().start();
  t.teardown(() => r.stop());
  r.respond = () => 503;
  const hook = (await server.api('POST', `/projects/${projectId}/webhooks`, { token, body: { url: r.url, events } })).body.data;
  const call = contentApi(server, token, projectId);
  await call('POST', '/write', md('one.md'));
  await call('POST', '/write', md('two.md'));
  await r.waitFor(() => r.received.length >= 1);
  await server.stop();
  const before = new Set(r.received.map((x) => x.headers['x-cns-delivery']));
  t.is(before.size, 1, 'only the first was attempted: the second waits its turn');

  r.respond = () => 200;
  server = await startTestServer(settings);
  t.teardown(() => server.stop());
  const token2 = (await server.login()).token;
  await r.waitFor(() => r.received.filter((x) => x.headers['x-cns-event'] === 'content.created').map((x) => x.body.paths.at(-1).path).includes('two.md'));
  const delivered = await until(async () => {
    const list = await deliveriesOf(server, token2, projectId, hook.id);
    return list.every((d) => d.status === 'delivered') && list.length === 2 ? list : undefined;
  });
  t.is(delivered.length, 2);
  const paths = r.received.map((x) => x.body.paths.at(-1).path);
  t.deepEqual([...new Set(paths)], ['one.md', 'two.md'], 'in order');
  t.is(r.received.filter((x) => x.body.paths.at(-1).path === 'two.md').length, 1, 'two.md once');
});

test('commits no delivery was queued for (a crash between commit and queue) are queued at the next start', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-webhooks-catchup-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const settings = { dataDir, urlFetchAllowPrivate: true, webhooks: { ...short, queueBatch: 20 } };
  let server = await startTestServer(settings);
  const { token, projectId } = await setup(server);
  const r = await new Receiver().start();
  t.teardown(() => r.stop());
  await server.api('POST', `/projects/${projectId}/webhooks`, { token, body: { url: r.url, events } });
  // As if the process died right after these commits: the webhooks hear nothing of them.
  await server.services.webhooks.stop();
  const call = contentApi(server, token, projectId);
  await call('POST', '/write', md('lost-1.md'));
  await call('POST', '/write', md('lost-2.md'));
  await server.stop();
  t.is(r.received.length, 0);
  server = await startTestServer(settings);
  t.teardown(() => server.stop());
  await r.waitFor(() => r.received.length >= 2);
  t.deepEqual(r.received.map((x) => x.body.paths.at(-1).path), ['lost-1.md', 'lost-2.md']);
});

test('a backlog longer than one batch (a start-up after many commits) is queued in full and in commit order, in slices', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-webhooks-backlog-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const settings = { dataDir, urlFetchAllowPrivate: true, webhooks: short };
  let server = await startTestServer(settings);
  const { token, projectId } = await setup(server);
  const r = await new Receiver().start();
  t.teardown(() => r.stop());
  await server.api('POST', `/projects/${projectId}/webhooks`, { token, body: { url: r.url, events } });
  await server.services.webhooks.stop();
  const call = contentApi(server, token, projectId);
  const count = 45; // more than two batches of 20 commits
  for (let i = 0; i < count; i++) await call('POST', '/write', md(`backlog-${i}.md`));
  await server.stop();
  server = await startTestServer(settings);
  t.teardown(() => server.stop());
  await r.waitFor(() => r.received.length >= count, 60_000);
  t.deepEqual(
    r.received.map((x) => x.body.paths.at(-1).path),
    Array.from({ length: count }, (_, i) => `backlog-${i}.md`),
  );
});

test('the outbound guard refuses loopback and private urls unless the operator allows them, at creation and at each attempt', async (t) => {
  const strict = await startTestServer();
  t.teardown(() => strict.stop());
  const s = await setup(strict);
  for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:9/hook', 'http://[::1]:9/hook', 'http://169.254.169.254/latest', 'http://10.1.2.3/x', 'file:///etc/passwd']) {
    const res = await strict.api('POST', `/projects/${s.projectId}/webhooks`, { token: s.token, body: { url, events } });
    t.is(res.status, 422, url);
    t.regex(res.body.message, /refused|Invalid/, url);
  }
  t.is((await strict.api('GET', `/projects/${s.projectId}/webhooks`, { token: s.token })).body.data.total, 0, 'nothing was created');

  // Allowed when created; the operator then turns private addresses off: attempts are refused.
  const server = await startTestServer({ urlFetchAllowPrivate: true, webhooks: { ...short, retryForMs: 600_000, disableAfterMs: 600_000 } });
  t.teardown(() => server.stop());
  const { token, projectId } = await setup(server);
  const r = await new Receiver().start();
  t.teardown(() => r.stop());
  const hook = (await server.api('POST', `/projects/${projectId}/webhooks`, { token, body: { url: r.url, events } })).body.data;
  server.services.settings.urlFetchAllowPrivate = false;
  await contentApi(server, token, projectId)('POST', '/write', md('guarded.md'));
  const refused = await until(async () => (await deliveriesOf(server, token, projectId, hook.id)).find((d) => d.attempts > 0));
  t.regex(refused.error!, /outbound guard/);
  t.is(r.received.length, 0, 'nothing reached the receiver');
  server.services.settings.urlFetchAllowPrivate = true;
  await r.waitFor(() => r.received.length >= 1);
});

test('a hook acts as its creator: a key limited to a folder hears of nothing outside it', async (t) => {
  const server = await startTestServer({ urlFetchAllowPrivate: true, webhooks: short });
  t.teardown(() => server.stop());
  const { token, projectId, orgId } = await setup(server);
  const r = await new Receiver().start();
  t.teardown(() => r.stop());
  const key = await createKey(server, token, projectId, { scope_path: 'docs', mode: 'read' });
  const base = `/projects/${projectId}/webhooks`;
  const outside = await server.api('POST', base, { token: key.key, body: { url: r.url, events, path_prefix: 'other' } });
  t.is(outside.status, 422);
  t.is(outside.body.error.details[0].field, 'path_prefix');
  const created = await server.api('POST', base, { token: key.key, body: { url: r.url, events } });
  t.is(created.status, 201);
  t.is(created.body.data.path_prefix, 'docs', "a key's hook defaults to its scope");
  t.deepEqual(created.body.data.created_by, { type: 'key', id: key.id });
  const keyHook = created.body.data;

  const call = contentApi(server, token, projectId);
  await call('POST', '/write', md('other/secret-name.md'));
  await call('POST', '/write', md('docs/a.md'));
  await call('POST', '/mv', { old_path: 'docs/a.md', new_path: 'other/moved-away.md' });
  await r.waitFor(() => r.received.length >= 2);
  const raw = r.received.map((x) => x.raw.toString()).join('\n');
  t.false(raw.includes('other/'), 'no path outside the scope leaks');
  t.deepEqual(r.received.map((x) => x.body.event), ['content.created', 'content.moved']);
  t.deepEqual(r.received[1]!.body.paths.map((p: { path: string; operation: string }) => [p.path, p.operation]), [['docs/a.md', 'moved_out']]);

  // The key sees only its own hooks; the admin sees all; another key's hook is 404 to it.
  const adminHook = (await server.api('POST', base, { token, body: { url: r.url, events } })).body.data;
  const keyList = await server.api('GET', base, { token: key.key });
  t.deepEqual(keyList.body.data.webhooks.map((h: { id: string }) => h.id), [keyHook.id]);
  t.is((await server.api('GET', `${base}/${adminHook.id}`, { token: key.key })).status, 404);
  t.is((await server.api('GET', base, { token })).body.data.total, 2);
  // Another project's hook through this project's path is 404; a member below admin is 403.
  const otherProject = await createProject(server, token, orgId, 'other');
  t.is((await server.api('GET', `/projects/${otherProject}/webhooks/${adminHook.id}`, { token })).status, 404);
  const editor = await server.createUser(email('editor'));
  await addOrgMember(server, orgId, editor.id, 'member');
  const asEditor = await server.api('GET', base, { token: editor.token });
  t.is(asEditor.status, 403);
  t.is((await server.api('POST', base, { token: editor.token, body: { url: r.url, events } })).status, 403);

  // The key is deleted: its hook is disabled at the next change and hears nothing more.
  t.is((await server.api('DELETE', `/connections/${key.id}`, { token })).status, 200);
  const seen = r.received.length;
  await call('POST', '/write', md('docs/after.md'));
  const h = await until(async () => {
    const got = (await server.api('GET', `${base}/${keyHook.id}`, { token })).body.data;
    return got.state === 'disabled' ? got : undefined;
  });
  t.is(h.disabled_reason, 'creator_access_ended');
  // The admin's hook got docs/after.md; the key's did not.
  await r.waitFor(() => r.received.some((x) => x.raw.toString().includes('docs/after.md')));
  t.is(r.received.slice(seen).filter((x) => x.raw.toString().includes('docs/after.md')).length, 1, 'only the admin hook');
});

test('an ingestion task that ends is an ingest.task_finished delivery, after its commit', async (t) => {
  const server = await startTestServer({ urlFetchAllowPrivate: true, webhooks: short });
  t.teardown(() => server.stop());
  const { token, projectId } = await setup(server);
  const r = await new Receiver().start();
  t.teardown(() => r.stop());
  await server.api('POST', `/projects/${projectId}/webhooks`, { token, body: { url: r.url, events, path_prefix: 'in' } });
  const sub = await submitFiles(server, token, { project_id: projectId, path: 'in' }, [{ name: 'notes.txt', content: 'hello', type: 'text/plain' }]);
  t.true(sub.status === 201 || sub.status === 202, JSON.stringify(sub.body));
  await r.waitFor(() => r.of('ingest.task_finished').length >= 1, 60_000);
  const finished = r.of('ingest.task_finished')[0]!.body;
  t.is(finished.task.status, 'succeeded');
  t.is(finished.task.target_path, 'in');
  t.is(finished.actor.type, 'user');
  const order = r.received.map((x) => x.headers['x-cns-event']);
  t.true(order.indexOf('content.created') < order.indexOf('ingest.task_finished'), order.join(', '));
});

test('a finished sync run is a sync.run_finished delivery, after the commit it made', async (t) => {
  const server = await startTestServer({ urlFetchAllowPrivate: true, webhooks: short });
  t.teardown(() => server.stop());
  const { token, projectId } = await setup(server);
  const r = await new Receiver().start();
  t.teardown(() => r.stop());
  const page = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/markdown' }).end('# fetched\n'));
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => page.close(() => resolve())));
  await server.api('POST', `/projects/${projectId}/webhooks`, { token, body: { url: r.url, events: ['content.created', 'sync.run_finished'] } });
  const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/doc.md`;
  const made = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: projectId, provider: 'url', config: { url, path: 'web/doc.md' } } });
  t.is(made.status, 201, JSON.stringify(made.body));
  const syncId = made.body.data.sync.id;
  t.is((await server.api('POST', `/sync/syncs/${syncId}/refresh`, { token })).status, 200);
  await r.waitFor(() => r.of('sync.run_finished').length >= 1);
  const finished = r.of('sync.run_finished')[0]!.body;
  t.is(finished.sync.id, syncId);
  t.is(finished.run.status, 'succeeded');
  t.is(finished.run.trigger, 'manual');
  const order = r.received.map((x) => x.headers['x-cns-event']);
  t.true(r.of('content.created').some((x) => x.raw.toString().includes('web/doc.md')), 'the sync wrote web/doc.md');
  t.true(order.lastIndexOf('content.created') < order.indexOf('sync.run_finished'), order.join(', '));
});
