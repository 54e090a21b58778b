import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createKey, createProject, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { call, connect, initializeMessage, rawPost } from './helpers.ts';
import { startUpstream, type Upstream } from './upstream.ts';

let server: TestServer;
let upstream: Upstream;
let token: string;
let projectId: string;
let orgId: string;

const SECRET = 'upstream-SECRET-value-1';

test.before(async () => {
  upstream = await startUpstream();
  // The upstream listens on loopback: registering it needs the operator's permission.
  server = await startTestServer({}, { CNS_URL_FETCH_ALLOW_PRIVATE: 'true' });
  ({ token } = await server.login());
  ({ projectId, orgId } = await defaultProject(server, token));
});

test.after.always(async () => {
  await server?.stop();
  await upstream?.close();
});

async function register(body: Record<string, unknown>, as = token) {
  return server.api('POST', '/mcp/proxy', { token: as, body: { project_id: projectId, ...body } });
}

async function registered(name: string, headers: Record<string, string> = { 'X-Api-Key': SECRET }, url = upstream.url) {
  const res = await register({ name, url, headers });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: string; proxy_url: string; header_names: string[] };
}

const allHeaderValues = (from: number) => upstream.seen.slice(from).flatMap((h) => Object.values(h).flat()).join('\n');

test.serial('the SDK client lists and calls a tool through the proxy; the server gets the stored header, never the caller\'s token', async (t) => {
  const p = await registered('calculator');
  t.deepEqual(p.header_names, ['x-api-key']);
  t.true(p.proxy_url.endsWith(`/api/v1/mcp/proxy/${p.id}/mcp`));
  const from = upstream.seen.length;

  const s = await connect(p.proxy_url, token);
  t.is(s.client.getServerVersion()?.name, 'upstream');
  const { tools } = await s.client.listTools();
  t.deepEqual(tools.map((x) => x.name), ['add']);
  const r = await call(s.client, 'add', { a: 2, b: 3 });
  t.false(r.isError);
  t.is(r.text, '5');
  await s.close();

  const seen = upstream.seen.slice(from);
  t.true(seen.length >= 3, `initialize, list, call (${seen.length})`);
  for (const h of seen) {
    t.is(h['x-api-key'], SECRET);
    t.is(h.authorization, undefined, "the caller's Authorization is not forwarded");
  }
  t.false(allHeaderValues(from).includes(token), 'the cns token never reached the server');
  t.true(seen.some((h) => typeof h['mcp-session-id'] === 'string'), 'the session id went on');
  t.true(seen.some((h) => h['mcp-protocol-version'] !== undefined), 'the protocol version went on');
  // The client's event stream (GET) and its session's end (DELETE) went through as well.
  t.deepEqual([...new Set(upstream.methods.slice(from))].sort(), ['DELETE', 'GET', 'POST']);
});

test.serial('header values are encrypted in the metadata store and never returned; PUT replaces them', async (t) => {
  const p = await registered('sealed');
  const row = (await server.services.metadata.db.selectFrom('mcp_proxy_servers').selectAll().where('id', '=', p.id).executeTakeFirstOrThrow()) as Record<string, unknown>;
  t.regex(row.headers_encrypted as string, /^v1\./);
  t.false(JSON.stringify(row).includes(SECRET), 'the plaintext value is not in the row');

  const shown = [
    (await server.api('GET', `/mcp/proxy/${p.id}`, { token })).body,
    (await server.api('GET', `/mcp/proxy?project_id=${projectId}`, { token })).body,
  ];
  t.deepEqual(shown[0].data.header_names, ['x-api-key']);
  t.true(shown[1].data.mcp_proxy_servers.some((x: { id: string }) => x.id === p.id));
  const put = await server.api('PUT', `/mcp/proxy/${p.id}`, { token, body: { name: 'sealed-2', headers: { 'X-Api-Key': 'rotated-SECRET-2', 'X-Team': 'blue' } } });
  t.is(put.status, 200, JSON.stringify(put.body));
  shown.push(put.body);
  t.deepEqual(put.body.data.header_names, ['x-api-key', 'x-team']);
  for (const body of shown) t.false(/SECRET|blue/.test(JSON.stringify(body)), JSON.stringify(body));

  const from = upstream.seen.length;
  const init = await rawPost(p.proxy_url, { authorization: `Bearer ${token}` }, initializeMessage);
  t.is(init.status, 200, init.text);
  t.regex(init.headers.get('content-type') ?? '', /text\/event-stream/, 'the answer streams back as events');
  t.regex(init.text, /event: message[\s\S]*"serverInfo":\{"name":"upstream"/);
  t.truthy(init.headers.get('mcp-session-id'), 'the session id comes back');
  t.is(upstream.seen[from]!['x-api-key'], 'rotated-SECRET-2');
  t.is(upstream.seen[from]!['x-team'], 'blue');

  // Without the key the upstream answers 401: the caller gets a 502 naming the stored headers, not a 401 of its own.
  t.is((await server.api('PUT', `/mcp/proxy/${p.id}`, { token, body: { headers: {} } })).status, 200);
  const refused = await rawPost(p.proxy_url, { authorization: `Bearer ${token}` }, initializeMessage);
  t.is(refused.status, 502);
  t.regex(JSON.parse(refused.text).message, /refused the request \(401\).*headers stored/);
});

test.serial('bad registrations are 422 naming the field, a duplicate name 409', async (t) => {
  for (const [body, field] of [
    [{ name: 'x', url: 'ftp://example.com/mcp' }, 'url'],
    [{ name: 'x', url: 'not a url' }, 'url'],
    [{ name: 'x', url: upstream.url, headers: { 'Mcp-Session-Id': 'fixed' } }, 'headers.Mcp-Session-Id'],
    [{ name: 'x', url: upstream.url, headers: { 'bad name': 'v' } }, 'headers.bad name'],
    [{ name: 'x', url: upstream.url, headers: { 'x-a': 'one\r\nx-b: two' } }, 'headers.x-a'],
  ] as const) {
    const res = await register(body);
    t.is(res.status, 422, JSON.stringify(res.body));
    t.is(res.body.error.details[0].field, field);
  }
  await registered('twice');
  t.is((await register({ name: 'twice', url: upstream.url })).status, 409);
});

test.serial('without the allow flag loopback and private urls are refused at registration (422) and forwarding is 502', async (t) => {
  const p = await registered('before-the-flag-went-off');
  server.services.settings.urlFetchAllowPrivate = false;
  t.teardown(() => void (server.services.settings.urlFetchAllowPrivate = true));
  const from = upstream.seen.length;

  for (const url of [upstream.url, upstream.url.replace('127.0.0.1', 'localhost'), 'http://169.254.169.254/latest', 'http://10.0.0.1/mcp', 'http://[::ffff:127.0.0.1]/mcp']) {
    const res = await register({ name: 'private', url });
    t.is(res.status, 422, url);
    t.is(res.body.error.details[0].field, 'url');
    t.regex(res.body.message, /non-public|not a public address/);
  }
  const put = await server.api('PUT', `/mcp/proxy/${p.id}`, { token, body: { url: 'http://192.168.1.1/mcp' } });
  t.is(put.status, 422);

  const forwarded = await rawPost(p.proxy_url, { authorization: `Bearer ${token}` }, initializeMessage);
  t.is(forwarded.status, 502);
  const body = JSON.parse(forwarded.text);
  t.is(body.code, 'UPSTREAM_ERROR');
  t.regex(body.message, /address is refused: 127\.0\.0\.1 is not a public address/);
  t.is(upstream.seen.length, from, 'nothing reached the loopback server');
});

test.serial('callers: none is 401, another project\'s key 404, a key of the project connects, a viewer forwards but cannot manage', async (t) => {
  const p = await registered('access');
  const none = await rawPost(p.proxy_url, {}, initializeMessage);
  t.is(none.status, 401);

  const otherProject = await createProject(server, token, orgId, 'other');
  const otherKey = await createKey(server, token, otherProject);
  t.is((await rawPost(p.proxy_url, { authorization: `Bearer ${otherKey.key}` }, initializeMessage)).status, 404);
  t.is((await server.api('GET', `/mcp/proxy/${p.id}`, { token: otherKey.key })).status, 404);

  const ownKey = await createKey(server, token, projectId, { mode: 'read' });
  const s = await connect(p.proxy_url, ownKey.key);
  t.deepEqual((await s.client.listTools()).tools.map((x) => x.name), ['add']);
  await s.close();
  t.is((await server.api('GET', `/mcp/proxy/${p.id}`, { token: ownKey.key })).status, 403, 'a key cannot manage');

  const viewer = await server.createUser('proxy-viewer@example.com');
  await server.api('POST', `/projects/${projectId}/members`, { token, body: { user_id: viewer.id, role: 'viewer' } });
  t.is((await rawPost(p.proxy_url, { authorization: `Bearer ${viewer.token}` }, initializeMessage)).status, 200);
  t.is((await server.api('GET', `/mcp/proxy/${p.id}`, { token: viewer.token })).status, 403);
  t.is((await server.api('GET', `/mcp/proxy?project_id=${projectId}`, { token: viewer.token })).status, 403);
  t.is((await register({ name: 'by-viewer', url: upstream.url }, viewer.token)).status, 403);

  const outsider = await server.createUser('proxy-outsider@example.com');
  t.is((await rawPost(p.proxy_url, { authorization: `Bearer ${outsider.token}` }, initializeMessage)).status, 404);
  t.is((await server.api('DELETE', `/mcp/proxy/${p.id}`, { token: outsider.token })).status, 404);
});

test.serial('an unreachable server is 502; a deleted one is 404', async (t) => {
  const closed = createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((r) => closed.close(() => r()));
  const gone = await registered('gone', {}, `http://127.0.0.1:${port}/mcp`);
  const res = await rawPost(gone.proxy_url, { authorization: `Bearer ${token}` }, initializeMessage);
  t.is(res.status, 502);
  t.regex(JSON.parse(res.text).message, /could not be reached/);

  const p = await registered('to-delete');
  const del = await server.api('DELETE', `/mcp/proxy/${p.id}`, { token });
  t.is(del.status, 200);
  t.deepEqual(del.body.data, { id: p.id, deleted: true });
  t.is((await server.api('GET', `/mcp/proxy/${p.id}`, { token })).status, 404);
  t.is((await rawPost(p.proxy_url, { authorization: `Bearer ${token}` }, initializeMessage)).status, 404);
});
