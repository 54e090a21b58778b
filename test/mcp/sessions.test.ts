import test from 'ava';
import { contentApi, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { until } from '../tools/helpers.ts';
import { call, connect, createEndpoint, initializeMessage, rawPost, type Endpoint } from './helpers.ts';

// The session store's bounds are changed by these tests: they run one at a time on their own server.

let server: TestServer;
let e: Endpoint;

test.before(async () => {
  server = await startTestServer();
  const { token } = await server.login();
  const { projectId } = await defaultProject(server, token);
  await contentApi(server, token, projectId)('POST', '/write', { path: 'docs/a.md', node_type: 'markdown', content: 'a' });
  e = await createEndpoint(server, token, projectId, 'docs');
});

test.after.always(async () => server?.stop());

const sessions = () => server.services.mcp.sessions;
const auth = () => ({ authorization: `Bearer ${e.key}` });

async function open(): Promise<string> {
  const r = await rawPost(e.url, auth(), initializeMessage);
  if (r.status !== 200) throw new Error(`initialize: ${r.status} ${r.text}`);
  return r.headers.get('mcp-session-id')!;
}

const use = (id: string) => rawPost(e.url, { ...auth(), 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' }, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });

test.serial('the store is bounded: a new session evicts the least recently used idle one', async (t) => {
  sessions().setLimits({ maxSessions: 2, idleMs: 60_000 });
  t.teardown(() => sessions().setLimits({ maxSessions: 1000, idleMs: 15 * 60_000 }));
  const a = await open();
  const b = await open();
  t.is((await use(a)).status, 200); // b is now the least recently used
  const c = await open();
  t.is(sessions().size, 2);
  t.true(sessions().has(a) && sessions().has(c));
  t.false(sessions().has(b));
  t.is((await use(b)).status, 404, 'the evicted session is gone: its client must initialize again');
  t.is((await use(c)).status, 200);
});

test.serial('idle sessions expire; one holding its event stream open stays until the stream closes', async (t) => {
  sessions().setLimits({ maxSessions: 1000, idleMs: 300 });
  t.teardown(() => sessions().setLimits({ maxSessions: 1000, idleMs: 15 * 60_000 }));
  const idle = await open();
  const streaming = await open();
  const stream = new AbortController();
  const get = await fetch(e.url, { headers: { ...auth(), 'mcp-session-id': streaming, 'mcp-protocol-version': '2025-06-18', accept: 'text/event-stream' }, signal: stream.signal });
  t.is(get.status, 200);
  await until('the idle session to expire', () => !sessions().has(idle), 30_000);
  t.true(sessions().has(streaming), 'a session with an open stream is in use');
  stream.abort();
  await until('the streaming session to expire once its stream closed', () => !sessions().has(streaming), 30_000);
  t.is((await use(idle)).status, 404);
});

test.serial('an SDK client that ends its session (DELETE) leaves nothing behind; one that just disconnects is swept', async (t) => {
  sessions().setLimits({ maxSessions: 1000, idleMs: 300 });
  t.teardown(() => sessions().setLimits({ maxSessions: 1000, idleMs: 15 * 60_000 }));
  const polite = await connect(e.url, e.key);
  t.false((await call(polite.client, 'cat', { path: 'docs/a.md' })).isError);
  const politeId = polite.transport.sessionId!;
  await polite.close();
  t.false(sessions().has(politeId));
  const abrupt = await connect(e.url, e.key);
  const abruptId = abrupt.transport.sessionId!;
  await abrupt.client.close(); // no DELETE: its GET stream is cut
  await until('the abandoned session to be swept', () => !sessions().has(abruptId), 30_000);
  t.is(sessions().size, 0);
});

test.serial('stopping the server ends open sessions and their streams at once (no wait for the shutdown grace period)', async (t) => {
  const other = await startTestServer();
  const { token } = await other.login();
  const { projectId } = await defaultProject(other, token);
  await contentApi(other, token, projectId)('POST', '/mkdir', { path: 'docs' });
  const ep = await createEndpoint(other, token, projectId, 'docs');
  const s = await connect(ep.url, ep.key);
  await until('the client to open its event stream', () => other.services.mcp.sessions.streams === 1);
  const started = Date.now();
  await other.stop();
  t.true(Date.now() - started < 8_000, `stopped in ${Date.now() - started} ms`);
  await s.client.close();
});

test.serial('an endpoint deleted while a call runs: the call still gets its answer, then the session ends', async (t) => {
  const { token } = await server.login();
  const projectId = e.record.project_id as string;
  const folder = server.services.content.findByPath(projectId, 'docs')!.id;
  const sh = await server.api('POST', '/tools', { token, body: { project_id: projectId, node_id: folder, name: 'slow', type: 'shell' } });
  const ep = await createEndpoint(server, token, projectId, 'docs', { name: 'doomed', tool_ids: [sh.body.data.id] });
  const s = await connect(ep.url, ep.key);
  t.teardown(() => s.client.close());
  const id = s.transport.sessionId!;
  const running = call(s.client, 'slow', { command: 'sleep 1; echo finished' });
  await until('the call to be in flight', () => sessions().inFlight === 1);
  t.is((await server.api('DELETE', `/mcp-endpoints/${ep.id}`, { token })).status, 200);
  t.false(sessions().has(id), 'no new request reaches the session');
  const r = await running;
  t.false(r.isError, r.text);
  t.is(r.data.stdout, 'finished\n');
});
