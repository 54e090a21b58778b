import test from 'ava';
import { type ContentCall, contentApi, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;
let pid: string;
let c: ContentCall;

test.before(async () => {
  server = await startTestServer({ maxContentBytes: 1024 });
  token = (await server.login()).token;
  pid = (await defaultProject(server, token)).projectId;
  c = contentApi(server, token, pid);
  await c('POST', '/write', { path: 'folder/file.md', content: 'x', node_type: 'markdown' });
});
test.after.always(() => server.stop());

/** Each bad write must be rejected with `status` and leave the project's commit count unchanged. */
async function rejects(t: import('ava').ExecutionContext, body: unknown, status: number, route = '/write') {
  const before = (await server.api('GET', `/projects/${pid}/dashboard`, { token })).body.data.commits;
  const res = await c('POST', route, body);
  t.is(res.status, status, JSON.stringify(body).slice(0, 120));
  t.false(res.body.success);
  const after = (await server.api('GET', `/projects/${pid}/dashboard`, { token })).body.data.commits;
  t.is(after, before, 'nothing changed');
}

const md = (path: string) => ({ path, content: 'x', node_type: 'markdown' });

test('invalid paths are 422', async (t) => {
  for (const p of ['../escape.md', '/abs.md', 'a//b.md', 'a/../b.md', '.git/config', 'x/.git/y', 'a\u0000b.md', 'a\u0007b.md', 'n'.repeat(256) + '.md', ('d'.repeat(200) + '/').repeat(6) + 'f.md', '.trash/sneaky.md']) {
    await rejects(t, md(p), 422);
  }
});

test('a rejected path names the field in the details list', async (t) => {
  const res = await c('POST', '/write', md('../x.md'));
  t.is(res.status, 422);
  t.is(res.body.error.details[0].field, 'path');
  t.is(res.body.error.details[0].message, res.body.message);
});

test('type mismatches are 422', async (t) => {
  await rejects(t, { path: 'x.json', content: 'str', node_type: 'json' }, 422);
  await rejects(t, { path: 'x.json', content: 5, node_type: 'json' }, 422);
  await rejects(t, { path: 'x.md', content: { a: 1 }, node_type: 'markdown' }, 422);
  await rejects(t, { path: 'x.bin', content: '***not base64***', node_type: 'file' }, 422);
  await rejects(t, { path: 'x.md', content: 'x', node_type: 'pdf' }, 422);
  await rejects(t, { path: 'x.md', node_type: 'markdown' }, 422);
});

test('a folder written as a file, or a file used as a parent, is 409', async (t) => {
  await rejects(t, md('folder'), 409);
  await rejects(t, md('folder/file.md/child.md'), 409);
});

test('content over the size limit is 413', async (t) => {
  await rejects(t, { path: 'big.md', content: 'x'.repeat(2048), node_type: 'markdown' }, 413);
});

test('missing nodes and versions are 404', async (t) => {
  t.is((await c('GET', '/cat?path=nope.md')).status, 404);
  t.is((await c('GET', '/stat?path=nope.md')).status, 404);
  t.is((await c('GET', '/versions?path=folder/file.md&version=99')).status, 404);
  await rejects(t, { old_path: 'nope.md', new_path: 'x.md' }, 404, '/mv');
  await rejects(t, { path: 'nope.md' }, 404, '/rm');
});

test('query parameters of the wrong type are 422', async (t) => {
  t.is((await c('GET', '/versions?path=folder/file.md&limit=abc')).status, 422);
  t.is((await c('GET', '/versions?path=folder/file.md&limit=5000')).status, 422);
  t.is((await c('GET', '/diff?path=folder/file.md&v1=x&v2=1')).status, 422);
  t.is((await c('GET', '/tree?max_depth=-5')).status, 422);
});

test('an unknown project is 404 and another user\'s project is 404', async (t) => {
  t.is((await server.api('GET', '/content/prj_doesnotexist/ls', { token })).status, 404);
  const other = await server.createUser('other@example.com');
  const res = await server.api('GET', `/content/${pid}/ls`, { token: other.token });
  t.is(res.status, 404);
});
