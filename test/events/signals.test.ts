import test from 'ava';
import { sql } from 'kysely';
import type { BusMessage, BusSignal, BusTransport } from '../../src/events/changeBus.ts';
import { createKey, createProject, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { SseClient } from '../sync/sse.ts';

// One process: the bus's transport stands in for the other workers. What this process signals is
// what `send` hands them; `receive` delivers a signal as if another worker had sent it.

let server: TestServer;
let token: string;
let projectId: string;
let orgId: string;
const sent: BusSignal[] = [];
let receive: (message: BusMessage) => void;

test.before(async () => {
  server = await startTestServer();
  token = (await server.login()).token;
  ({ projectId, orgId } = await defaultProject(server, token));
  const transport: BusTransport = {
    send: (m) => {
      if ('signal' in m) sent.push(m.signal);
    },
    start: (r) => void (receive = r),
    close: async () => {},
  };
  await server.services.bus.connect(transport);
});
test.after.always(async () => server?.stop());

const api = (method: string, path: string, body?: unknown) => server.api(method, path, { token, body });
const sentSince = (from: number) => sent.slice(from).map((s) => `${s.kind}:${s.project}`);

async function write(project: string, path: string, content: string): Promise<{ id: string }> {
  const res = await api('POST', `/content/${project}/write`, { path, node_type: 'markdown', content });
  if (res.status !== 201 && res.status !== 200) throw new Error(`write ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

test.serial('deleting a project signals project-deleted (and access-changed: its streams end)', async (t) => {
  const doomed = await createProject(server, token, orgId, 'doomed');
  await write(doomed, 'a.md', 'a');
  const from = sent.length;
  t.is((await api('DELETE', `/projects/${doomed}`)).status, 200);
  t.deepEqual(sentSince(from), [`project-deleted:${doomed}`, `access-changed:${doomed}`]);
});

test.serial('a purge and a reindex signal project-reset', async (t) => {
  await write(projectId, 'secret.md', 'to be purged');
  let from = sent.length;
  const purged = await api('POST', `/projects/${projectId}/purge`, { path: 'secret.md' });
  t.is(purged.status, 200, JSON.stringify(purged.body));
  t.deepEqual(sentSince(from).filter((s) => !s.startsWith('access-changed')), [`project-reset:${projectId}`]);
  from = sent.length;
  await server.services.content.reindexProject(projectId);
  t.deepEqual(sentSince(from), [`project-reset:${projectId}`]);
});

test.serial('creating, changing and deleting a publish each signal publish-changed', async (t) => {
  const node = await write(projectId, 'pub/signalled.md', '# signalled');
  const from = sent.length;
  const created = await api('POST', '/publishes/', { project_id: projectId, node_id: node.id });
  t.is(created.status, 201);
  t.is((await api('PATCH', `/publishes/${created.body.data.id}`, { enabled: false })).status, 200);
  t.is((await api('DELETE', `/publishes/${created.body.data.id}`)).status, 200);
  t.deepEqual(sentSince(from), Array(3).fill(`publish-changed:${projectId}`));
});

test.serial('revoking a key and removing a member signal access-changed', async (t) => {
  const key = await createKey(server, token, projectId, { mode: 'read' });
  const member = await server.createUser(`signals-member-${Date.now()}@example.com`);
  t.is((await api('POST', `/projects/${projectId}/members`, { user_id: member.id, role: 'viewer' })).status, 201);
  const from = sent.length;
  t.is((await api('PATCH', `/connections/${key.id}`, { status: 'revoked' })).status, 200);
  t.is((await api('DELETE', `/projects/${projectId}/members/${member.id}`)).status, 200);
  t.deepEqual(sentSince(from), ['access-changed:', `access-changed:${projectId}`]);
});

test.serial('publish-changed from another worker: a publish disabled there stops being served here at once', async (t) => {
  const node = await write(projectId, 'pub/page.md', '# A public page');
  const publish = async () => (await api('POST', '/publishes/', { project_id: projectId, node_id: node.id })).body.data as { id: string; publish_key: string };
  const page = (key: string) => fetch(`${server.url}/api/v1/p/${key}`).then((r) => r.status);
  // The first page served loads the renderer (seconds on a busy machine): not the page under test.
  t.is(await page((await publish()).publish_key), 200);
  const { id, publish_key: key } = await publish();
  const filled = Date.now();
  t.is(await page(key), 200);
  // Another worker disables it: the row changes, nothing of this process hears of it but the signal.
  await sql`UPDATE publishes SET enabled = 0 WHERE id = ${id}`.execute(server.services.metadata.db);
  const stale = await page(key);
  // The address is cached for a short while: without the signal the disabled page is still served.
  if (Date.now() - filled < 1500) t.is(stale, 200, 'served from the cache until told');
  else t.log('the machine was too slow to see the cached answer');
  receive({ signal: { kind: 'publish-changed', project: projectId } });
  t.is(await page(key), 404);
});

test.serial('access-changed from another worker: a stream whose key was revoked there ends at once', async (t) => {
  const key = await createKey(server, token, projectId, { mode: 'read' });
  const feed = await SseClient.open(`${server.url}/api/v1/events?project_id=${projectId}`, key.key);
  t.teardown(() => feed.close());
  await feed.waitFor('ready', () => feed.events.some((e) => e.event === 'ready'));
  // Revoked by another worker: only the row changes here.
  await sql`UPDATE connections SET status = 'revoked' WHERE id = ${key.id}`.execute(server.services.metadata.db);
  t.false(feed.closed);
  receive({ signal: { kind: 'access-changed', project: '' } });
  // Well before the 15 s heartbeat that would also have noticed.
  await feed.waitFor('the stream to end', () => feed.closed || undefined, 10_000);
  t.true(feed.events.some((e) => e.event === 'revoked'));
});

test.serial('signals for what this process never cached, or of kinds it does not know, are harmless', async (t) => {
  const before = (await api('GET', `/content/${projectId}/ls?path=pub`)).body;
  for (const kind of ['project-reset', 'publish-changed', 'access-changed', 'project-deleted'] as const) {
    receive({ signal: { kind, project: 'prj_never_seen_here' } });
  }
  receive({ signal: { kind: 'something-new', project: projectId } as unknown as BusSignal });
  const after = await api('GET', `/content/${projectId}/ls?path=pub`);
  t.is(after.status, 200);
  t.deepEqual(after.body, before);
});
