import test from 'ava';
import { contentApi, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { until } from '../tools/helpers.ts';
import { createEndpoint, initializeMessage, rawPost, type Endpoint } from './helpers.ts';

// The session transport answers a plain call itself (src/mcp/transport.ts) and leaves everything
// else to the SDK's transport: both kinds of request, on one real server.

let server: TestServer;
let token: string;
let projectId: string;
let e: Endpoint;

test.before(async () => {
  server = await startTestServer();
  ({ token } = await server.login());
  ({ projectId } = await defaultProject(server, token));
  await contentApi(server, token, projectId)('POST', '/write', { path: 'docs/a.md', node_type: 'markdown', content: '# A' });
  e = await createEndpoint(server, token, projectId, 'docs');
});

test.after.always(async () => server?.stop());

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

async function session(endpoint: Endpoint): Promise<Record<string, string>> {
  const init = await rawPost(endpoint.url, bearer(endpoint.key), initializeMessage);
  if (init.status !== 200) throw new Error(`initialize: ${init.status} ${init.text}`);
  const headers = { ...bearer(endpoint.key), 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
  await rawPost(endpoint.url, headers, { jsonrpc: '2.0', method: 'notifications/initialized' });
  return headers;
}

/** An endpoint with one shell tool, `slow`, over `docs`, and an initialized session on it: for calls still running. */
async function slowSession(name: string): Promise<{ ep: Endpoint; headers: Record<string, string> }> {
  const folder = server.services.content.findByPath(projectId, 'docs')!.id;
  const sh = await server.api('POST', '/tools', { token, body: { project_id: projectId, node_id: folder, name: 'slow', type: 'shell' } });
  const ep = await createEndpoint(server, token, projectId, 'docs', { name, tool_ids: [sh.body.data.id] });
  return { ep, headers: await session(ep) };
}

const catCall = (id: number | string, path = 'docs/a.md') => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'cat', arguments: { path } } });

test('a call is answered as the SDK answers in JSON: 200, application/json, the session id, the request id; errors keep their ids', async (t) => {
  const headers = await session(e);
  const r = await rawPost(e.url, headers, catCall('call-1'));
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type') ?? '', /^application\/json/);
  t.is(r.headers.get('mcp-session-id'), headers['mcp-session-id']);
  const answer = JSON.parse(r.text);
  t.like(answer, { jsonrpc: '2.0', id: 'call-1', result: { structuredContent: { path: 'docs/a.md', content: '# A' } } });

  const outside = JSON.parse((await rawPost(e.url, headers, catCall(2, 'elsewhere/b.md'))).text);
  t.like(outside, { id: 2, result: { isError: true } });
  const unknownTool = JSON.parse((await rawPost(e.url, headers, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'nope', arguments: {} } })).text);
  t.like(unknownTool, { id: 3, error: { code: -32602 } });
  const unknownMethod = JSON.parse((await rawPost(e.url, headers, { jsonrpc: '2.0', id: 4, method: 'no/such', params: {} })).text);
  t.like(unknownMethod, { id: 4, error: { code: -32601 } });
  const badParams = JSON.parse((await rawPost(e.url, headers, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { arguments: {} } })).text);
  t.is(badParams.id, 5);
  t.truthy(badParams.error, 'a call without a tool name is a protocol error');
});

test('what the shortcut does not take gets the SDK transport\'s own answers', async (t) => {
  const headers = await session(e);
  const unsupported = await rawPost(e.url, { ...headers, 'mcp-protocol-version': '1999-01-01' }, catCall(1));
  t.is(unsupported.status, 400);
  t.regex(unsupported.text, /Unsupported protocol version/);
  t.is((await rawPost(e.url, { ...headers, accept: 'application/json' }, catCall(2))).status, 406);
  const text = await fetch(e.url, { method: 'POST', headers: { ...headers, accept: 'application/json, text/event-stream', 'content-type': 'text/plain' }, body: JSON.stringify(catCall(3)) });
  t.is(text.status, 415);
  t.is((await rawPost(e.url, headers, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } })).status, 202);
  t.is((await rawPost(e.url, headers, { not: 'json-rpc' })).status, 400);
  t.is((await rawPost(e.url, headers, initializeMessage)).status, 400, 'a second initialize');
  const batch = await rawPost(e.url, headers, [catCall(10), { jsonrpc: '2.0', id: 11, method: 'tools/list', params: {} }]);
  t.is(batch.status, 200);
  const answers = JSON.parse(batch.text) as { id: number }[];
  t.deepEqual(answers.map((a) => a.id).sort(), [10, 11]);
  // Still answered by the shortcut afterwards.
  t.like(JSON.parse((await rawPost(e.url, headers, catCall(12))).text), { id: 12, result: { structuredContent: { content: '# A' } } });
});

test('a session that prefers text/event-stream gets its answers as events', async (t) => {
  const init = await rawPost(e.url, { ...bearer(e.key), accept: 'text/event-stream, application/json' }, initializeMessage);
  const headers = { ...bearer(e.key), accept: 'text/event-stream, application/json', 'mcp-session-id': init.headers.get('mcp-session-id')!, 'mcp-protocol-version': '2025-06-18' };
  const r = await rawPost(e.url, headers, catCall(7));
  t.is(r.status, 200);
  t.regex(r.headers.get('content-type') ?? '', /text\/event-stream/);
  t.regex(r.text, /^event: message\ndata: \{.*"id":7/m);
});

// Serial, these two: they count the calls of the whole session store, which the other tests' calls would add to.
test.serial('a client that goes away before its answer leaves the session working; the answer goes nowhere', async (t) => {
  const { ep, headers } = await slowSession('slow');
  const sessions = server.services.mcp.sessions;
  const gone = new AbortController();
  const slow = fetch(ep.url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { command: 'sleep 0.5; echo done' } } }),
    signal: gone.signal,
  });
  await until('the call to be in flight', () => sessions.inFlight === 1);
  gone.abort();
  await t.throwsAsync(slow, { any: true });
  await until('the abandoned call to be answered, into nothing', () => sessions.unanswered === 0);
  const next = await rawPost(ep.url, headers, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: { command: 'echo next' } } });
  t.like(JSON.parse(next.text), { id: 2, result: { structuredContent: { stdout: 'next\n' } } });
  t.is(sessions.unanswered, 0);
});

test.serial('a call still running when its session ends (DELETE) is answered with a closed-connection error, not left hanging', async (t) => {
  const { ep, headers } = await slowSession('ended');
  const sessions = server.services.mcp.sessions;
  const running = rawPost(ep.url, headers, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { command: 'sleep 0.5' } } });
  await until('the call to be in flight', () => sessions.inFlight === 1);
  t.is((await fetch(ep.url, { method: 'DELETE', headers })).status, 200);
  const r = await running;
  t.is(r.status, 200);
  t.like(JSON.parse(r.text), { id: 1, error: { code: -32000 } });
  t.is(sessions.unanswered, 0);
});

test('a call records the use of the endpoint\'s key', async (t) => {
  const fresh = await createEndpoint(server, token, projectId, 'docs', { name: 'fresh' });
  t.is((await server.api('GET', `/mcp-endpoints/${fresh.id}`, { token })).body.data.last_used_at, null);
  const headers = await session(fresh);
  t.is((await rawPost(fresh.url, headers, catCall(1))).status, 200);
  t.truthy((await server.api('GET', `/mcp-endpoints/${fresh.id}`, { token })).body.data.last_used_at);
});
