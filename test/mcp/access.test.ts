import test from 'ava';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { contentApi, createKey, defaultProject, type ContentCall } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { call, connect, createEndpoint, initializeMessage, rawPost } from './helpers.ts';

let server: TestServer;
let token: string;
let projectId: string;
let c: ContentCall;

test.before(async () => {
  server = await startTestServer();
  ({ token } = await server.login());
  ({ projectId } = await defaultProject(server, token));
  c = contentApi(server, token, projectId);
  await c('POST', '/write', { path: 'docs/guide.md', node_type: 'markdown', content: '# Guide' });
  await c('POST', '/write', { path: 'notes/n.md', node_type: 'markdown', content: 'n' });
});

test.after.always(async () => server?.stop());

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

test('no credential, a wrong key, another connection\'s key or a bad token are 401 before any MCP processing', async (t) => {
  const e = await createEndpoint(server, token, projectId, 'docs');
  const { key: apiKey } = await createKey(server, token, projectId);
  const other = await createEndpoint(server, token, projectId, 'notes');
  const notJsonRpc = { hello: 'world' }; // the transport would answer 400; the gate answers first
  for (const [what, headers] of [
    ['no credential', {}],
    ['a wrong key', bearer('cns_' + 'x'.repeat(43))],
    ['an api key of the project', bearer(apiKey)],
    ["another endpoint's key", bearer(other.key)],
    ['a bad token', bearer('not.a.jwt')],
    ['a wrong key in X-Access-Key', { 'x-access-key': 'cns_' + 'y'.repeat(43) }],
  ] as const) {
    const r = await rawPost(e.url, headers, notJsonRpc);
    t.is(r.status, 401, `${what}: ${r.text}`);
    t.is(JSON.parse(r.text).code, 'UNAUTHORIZED');
  }
  const err = await t.throwsAsync(connect(e.url, 'cns_' + 'z'.repeat(43)), { instanceOf: StreamableHTTPError });
  t.is((err as StreamableHTTPError).code, 401, 'the SDK client fails to connect with the status');
  t.is((await rawPost(e.url, { 'x-access-key': e.key }, initializeMessage)).status, 200, 'the right key in X-Access-Key is accepted');
});

test('a regenerated key replaces the old one: the old key is 401 and its sessions end; the new key works', async (t) => {
  const e = await createEndpoint(server, token, projectId, 'docs');
  const s = await connect(e.url, e.key);
  t.teardown(() => s.close());
  t.false((await call(s.client, 'ls')).isError);
  const regen = await server.api('POST', `/mcp-endpoints/${e.id}/regenerate-key`, { token });
  t.is((await rawPost(e.url, bearer(e.key), initializeMessage)).status, 401);
  const err = await t.throwsAsync(s.client.callTool({ name: 'ls', arguments: {} }), { instanceOf: StreamableHTTPError });
  t.is((err as StreamableHTTPError).code, 401);
  const fresh = await connect(e.url, regen.body.data.key);
  t.teardown(() => fresh.close());
  t.false((await call(fresh.client, 'ls')).isError);
});

test('a deleted endpoint is 404, and its open sessions end', async (t) => {
  const e = await createEndpoint(server, token, projectId, 'docs');
  const s = await connect(e.url, e.key);
  t.teardown(() => s.client.close());
  const id = s.transport.sessionId!;
  t.true(server.services.mcp.sessions.has(id));
  t.is((await server.api('DELETE', `/mcp-endpoints/${e.id}`, { token })).status, 200);
  t.false(server.services.mcp.sessions.has(id), 'its session ended');
  const r = await rawPost(e.url, bearer(e.key), initializeMessage);
  t.is(r.status, 404);
  t.is(JSON.parse(r.text).message, 'MCP endpoint not found.');
  t.is((await rawPost(e.url, bearer(token), initializeMessage)).status, 404, 'for users too');
  const err = await t.throwsAsync(s.client.callTool({ name: 'ls', arguments: {} }), { instanceOf: StreamableHTTPError });
  t.is((err as StreamableHTTPError).code, 404);
  t.is((await rawPost(`${server.url}/api/v1/mcp/e/con_unknown`, bearer(e.key), initializeMessage)).status, 404);
});

test('a paused endpoint is 403 with its own key (and for users); resumed, it works again', async (t) => {
  const e = await createEndpoint(server, token, projectId, 'docs');
  const s = await connect(e.url, e.key);
  t.teardown(() => s.client.close());
  await server.api('PUT', `/mcp-endpoints/${e.id}`, { token, body: { status: 'paused' } });
  const r = await rawPost(e.url, bearer(e.key), initializeMessage);
  t.is(r.status, 403);
  t.is(JSON.parse(r.text).message, 'This MCP endpoint is paused.');
  t.is((await rawPost(e.url, bearer(token), initializeMessage)).status, 403);
  const err = await t.throwsAsync(s.client.callTool({ name: 'ls', arguments: {} }), { instanceOf: StreamableHTTPError });
  t.is((err as StreamableHTTPError).code, 403);
  await server.api('PUT', `/mcp-endpoints/${e.id}`, { token, body: { status: 'active' } });
  const again = await connect(e.url, e.key);
  t.teardown(() => again.close());
  t.false((await call(again.client, 'cat', { path: 'docs/guide.md' })).isError);
  await server.api('PUT', `/mcp-endpoints/${e.id}`, { token, body: { status: 'revoked' } });
  t.is((await rawPost(e.url, bearer(e.key), initializeMessage)).status, 403);
});

test('a user who cannot read the project gets 404; a session belongs to its credential and its endpoint', async (t) => {
  const e = await createEndpoint(server, token, projectId, 'docs');
  const other = await createEndpoint(server, token, projectId, 'notes');
  const stranger = await server.createUser(`mcp-stranger-${process.pid}@example.com`);
  t.is((await rawPost(e.url, bearer(stranger.token), initializeMessage)).status, 404);
  const init = await rawPost(e.url, bearer(token), initializeMessage);
  t.is(init.status, 200);
  t.regex(init.headers.get('content-type') ?? '', /application\/json/);
  const sessionId = init.headers.get('mcp-session-id')!;
  t.truthy(sessionId);
  const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
  const session = { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
  t.is((await rawPost(e.url, { ...bearer(token), ...session }, list)).status, 200);
  t.is((await rawPost(e.url, { ...bearer(e.key), ...session }, list)).status, 404, 'another credential cannot use the session');
  t.is((await rawPost(other.url, { ...bearer(token), ...session }, list)).status, 404, 'nor can another endpoint');
  t.is((await rawPost(e.url, bearer(token), list)).status, 400, 'a request without a session must initialize first');
});

test('the endpoint follows its folder when it is moved; a folder in the trash is 409', async (t) => {
  await c('POST', '/write', { path: 'moving/a.md', node_type: 'markdown', content: 'a' });
  const e = await createEndpoint(server, token, projectId, 'moving');
  const s = await connect(e.url, e.key);
  t.teardown(() => s.client.close());
  t.is((await c('POST', '/mv', { old_path: 'moving', new_path: 'moved' })).status, 200);
  const ls = await call(s.client, 'ls');
  t.false(ls.isError, ls.text);
  t.is(ls.data.path, 'moved');
  t.false((await call(s.client, 'write', { path: 'moved/b.md', content: 'b' })).isError, 'the key reaches the new place');
  t.true((await call(s.client, 'cat', { path: 'moving/a.md' })).isError);
  t.is((await server.api('GET', `/mcp-endpoints/${e.id}`, { token })).body.data.path, 'moved');
  await c('POST', '/rm', { path: 'moved' });
  const r = await rawPost(e.url, bearer(e.key), initializeMessage);
  t.is(r.status, 409);
  t.regex(JSON.parse(r.text).message, /folder is in the trash/);
});

test('answers are JSON unless the client ranks text/event-stream first; GET opens the session stream; DELETE ends the session', async (t) => {
  const e = await createEndpoint(server, token, projectId, 'docs');
  const sse = await rawPost(e.url, { ...bearer(e.key), accept: 'text/event-stream, application/json' }, initializeMessage);
  t.is(sse.status, 200);
  t.regex(sse.headers.get('content-type') ?? '', /text\/event-stream/);
  t.regex(sse.text, /^event: message\ndata: \{.*"serverInfo"/m);
  t.is((await rawPost(e.url, { ...bearer(e.key), accept: 'application/json' }, initializeMessage)).status, 406, 'both media types are required');

  const init = await rawPost(e.url, bearer(e.key), initializeMessage);
  const id = init.headers.get('mcp-session-id')!;
  const headers = { ...bearer(e.key), 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' };
  const stream = new AbortController();
  const get = await fetch(e.url, { headers: { ...headers, accept: 'text/event-stream' }, signal: stream.signal });
  t.is(get.status, 200);
  t.regex(get.headers.get('content-type') ?? '', /text\/event-stream/);
  stream.abort();
  t.true(server.services.mcp.sessions.has(id));
  const del = await fetch(e.url, { method: 'DELETE', headers });
  t.is(del.status, 200);
  t.false(server.services.mcp.sessions.has(id));
  const after = await rawPost(e.url, headers, { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} });
  t.is(after.status, 404);
  const noSession = await fetch(e.url, { headers: { ...bearer(e.key), accept: 'text/event-stream' } });
  t.is(noSession.status, 400);
});
