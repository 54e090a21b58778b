import test from 'ava';
import { createKey, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;
let pid: string;

test.before(async () => {
  server = await startTestServer();
  token = (await server.login()).token;
  pid = (await defaultProject(server, token)).projectId;
  await server.api('POST', `/content/${pid}/bulk-write`, {
    token,
    body: {
      files: [
        { path: 'public/a.md', content: 'a', node_type: 'markdown' },
        { path: 'private/b.md', content: 'b', node_type: 'markdown' },
      ],
    },
  });
});
test.after.always(() => server.stop());

const as = (key: string) => (method: string, route: string, body?: unknown) => server.api(method, `/content/${pid}${route}`, { token: key, body });

test('a key writes as its connection: actor agent, author agent:<name>', async (t) => {
  const { key, id } = await createKey(server, token, pid, { name: 'writer-bot' });
  const res = await as(key)('POST', '/write', { path: 'public/bot.md', content: 'hi', node_type: 'markdown' });
  t.is(res.status, 201);
  const v = (await as(key)('GET', '/versions?path=public/bot.md')).body.data.versions[0];
  t.is(v.actor_type, 'agent');
  t.is(v.actor_id, id);
  t.is(v.author, 'agent:writer-bot');
});

test('a read key reads and cannot write', async (t) => {
  const { key } = await createKey(server, token, pid, { mode: 'read' });
  t.is((await as(key)('GET', '/cat?path=public/a.md')).status, 200);
  const res = await as(key)('POST', '/write', { path: 'public/a.md', content: 'changed', node_type: 'markdown' });
  t.is(res.status, 403);
  t.is((await as(key)('GET', '/cat?path=public/a.md')).body.data.content_text, 'a');
});

test('a scoped key stays inside its subtree', async (t) => {
  const { key } = await createKey(server, token, pid, { scope_path: 'public' });
  const c = as(key);
  t.is((await c('GET', '/cat?path=public/a.md')).status, 200);
  t.is((await c('GET', '/cat?path=private/b.md')).status, 403);
  t.is((await c('POST', '/write', { path: 'private/x.md', content: 'x', node_type: 'markdown' })).status, 403);
  t.is((await c('POST', '/mv', { old_path: 'public/a.md', new_path: 'private/a.md' })).status, 403);
  t.is((await c('POST', '/rollback', { target_version: 1 })).status, 403);
  const root = await c('GET', '/ls');
  t.is(root.status, 200);
  t.deepEqual(root.body.data.entries.map((e: { name: string }) => e.name), ['public'], 'only the way down to its scope');
  t.is((await c('GET', '/ls?path=private')).status, 403);
});

test('a key of one project cannot reach another project', async (t) => {
  const { key } = await createKey(server, token, pid);
  const orgs = await server.api('GET', '/organizations/', { token });
  const orgId = orgs.body.data.organizations[0].id;
  const other = await server.api('POST', '/projects/', { token, body: { name: 'second', org_id: orgId } });
  const res = await server.api('GET', `/content/${other.body.data.id}/ls`, { token: key });
  t.is(res.status, 404);
});

test('an org viewer reads and cannot write', async (t) => {
  const viewer = await server.createUser('viewer@example.com');
  const orgs = await server.api('GET', '/organizations/', { token });
  const orgId = orgs.body.data.organizations[0].id;
  await server.services.metadata.db.insertInto('org_members').values({ org_id: orgId, user_id: viewer.id, role: 'viewer', created_at: new Date().toISOString() }).execute();
  t.is((await as(viewer.token)('GET', '/cat?path=public/a.md')).status, 200);
  t.is((await as(viewer.token)('POST', '/write', { path: 'public/v.md', content: 'v', node_type: 'markdown' })).status, 403);
});

test('an access key is also accepted in X-Access-Key; a user token there is not', async (t) => {
  const { key } = await createKey(server, token, pid, { mode: 'read' });
  const viaHeader = await server.api('GET', `/content/${pid}/cat?path=public/a.md`, { headers: { 'x-access-key': key } });
  t.is(viaHeader.status, 200);
  t.is(viaHeader.body.data.content_text, 'a');
  const jwtThere = await server.api('GET', `/content/${pid}/cat?path=public/a.md`, { headers: { 'x-access-key': token } });
  t.is(jwtThere.status, 401);
  const wrongKey = await server.api('GET', `/content/${pid}/cat?path=public/a.md`, { headers: { 'x-access-key': `${key}x` } });
  t.is(wrongKey.status, 401);
});

test('a scoped key learns nothing about paths beside its scope: missing or not, ls and cat there are 403', async (t) => {
  const { key } = await createKey(server, token, pid, { scope_path: 'public', mode: 'read' });
  for (const path of ['private', 'private/b.md', 'no-such-folder', 'no/such/file.md']) {
    t.is((await as(key)('GET', `/ls?path=${path}`)).status, 403, `ls ${path}`);
    t.is((await as(key)('GET', `/cat?path=${path}`)).status, 403, `cat ${path}`);
  }
});
