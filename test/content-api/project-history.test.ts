import test from 'ava';
import { type ContentCall, contentApi, createKey, createProject, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

// Project history on the path surface: commits, project diffs and path-only rollback.
let server: TestServer;
let token: string;
let orgId: string;

test.before(async () => {
  server = await startTestServer();
  token = (await server.login()).token;
  orgId = (await defaultProject(server, token)).orgId;
});
test.after.always(() => server.stop());

async function freshProject(name: string): Promise<{ pid: string; c: ContentCall }> {
  const pid = await createProject(server, token, orgId, name);
  return { pid, c: contentApi(server, token, pid) };
}

const md = (path: string, content: string, message?: string) => ({ path, content, node_type: 'markdown', message });

test('versions without path lists the project commits newest first, with actor, message and changed paths, paged by before', async (t) => {
  const { c } = await freshProject('history');
  await c('POST', '/write', md('a.md', 'a1', 'first'));
  await c('POST', '/write', md('b.md', 'b1', 'second'));
  await c('POST', '/mv', { old_path: 'b.md', new_path: 'c.md' });

  const all = await c('GET', '/versions');
  t.is(all.status, 200);
  t.is(all.body.data.current_version, 3);
  t.deepEqual(all.body.data.commits.map((x: { version: number }) => x.version), [3, 2, 1]);
  const [moved, second, first] = all.body.data.commits;
  t.is(first.message, 'first');
  t.is(first.actor_type, 'user');
  t.truthy(first.actor_id);
  t.truthy(first.created_at);
  t.deepEqual(first.changes.map((ch: { path: string; action: string }) => [ch.path, ch.action]), [['a.md', 'create']]);
  t.is(second.changes[0].path, 'b.md');
  t.deepEqual([moved.changes[0].old_path, moved.changes[0].path, moved.changes[0].action], ['b.md', 'c.md', 'move']);
  t.is(all.body.data.next_before, null);

  const page1 = await c('GET', '/versions?limit=2');
  t.deepEqual(page1.body.data.commits.map((x: { version: number }) => x.version), [3, 2]);
  t.is(page1.body.data.next_before, 2);
  const page2 = await c('GET', `/versions?limit=2&before=${page1.body.data.next_before}`);
  t.deepEqual(page2.body.data.commits.map((x: { version: number }) => x.version), [1]);
});

test('node-only parameters without path, and offset, are refused with 422 rather than ignored', async (t) => {
  const { c } = await freshProject('history-422');
  await c('POST', '/write', md('a.md', 'a1'));
  for (const q of ['version=1', 'since_version=0', 'offset=5', 'path=a.md&before=2']) {
    const res = await c('GET', `/versions?${q}`);
    t.is(res.status, 422, q);
  }
  t.is((await c('POST', '/rollback', { path: 'a.md', version: 1, target_version: 1 })).status, 422);
});

test('diff without path lists the changed paths with their operation between two project versions', async (t) => {
  const { c } = await freshProject('diff');
  await c('POST', '/write', md('keep.md', 'k1'));
  await c('POST', '/write', md('edit.md', 'e1'));
  const v1 = (await c('POST', '/write', md('old.md', 'o1'))).body.data.project_version;
  await c('POST', '/write', md('edit.md', 'e2'));
  await c('POST', '/mv', { old_path: 'old.md', new_path: 'renamed.md' });
  await c('POST', '/write', md('new.md', 'n1'));
  await c('POST', '/rm', { path: 'keep.md' });
  await c('POST', '/write', md('temp.md', 't'));
  const v2 = (await c('POST', '/rm', { path: 'temp.md' })).body.data.project_version;

  const res = await c('GET', `/diff?v1=${v1}&v2=${v2}`);
  t.is(res.status, 200);
  const ops = Object.fromEntries(res.body.data.changes.map((ch: { path: string; operation: string }) => [ch.path, ch.operation]));
  t.deepEqual(ops, { 'edit.md': 'modified', 'keep.md': 'deleted', 'new.md': 'added', 'renamed.md': 'moved' });
  t.is(res.body.data.changes.find((ch: { path: string }) => ch.path === 'renamed.md').old_path, 'old.md');
  t.is((await c('GET', `/diff?v1=${v2}&v2=${v1}`)).status, 422);
  t.is((await c('GET', `/diff?v1=1&v2=999`)).status, 404);
});

test('rollback {path, target_version} rolls back that path only, never the rest of the project', async (t) => {
  const { c } = await freshProject('path-rollback');
  const target = (await c('POST', '/bulk-write', { files: [md('docs/a.md', 'a1'), md('docs/b.md', 'b1'), md('other.md', 'o1')] })).body.data.project_version;
  await c('POST', '/write', md('docs/a.md', 'a2'));
  await c('POST', '/write', md('docs/new.md', 'new'));
  await c('POST', '/write', md('other.md', 'o2'));

  const file = await c('POST', '/rollback', { path: 'docs/b.md', target_version: target });
  t.is(file.status, 200);
  t.false(file.body.data.changed, 'b.md did not change since the target');

  const folder = await c('POST', '/rollback', { path: 'docs', target_version: target });
  t.is(folder.status, 200);
  t.is((await c('GET', '/cat?path=docs/a.md')).body.data.content_text, 'a1');
  t.is((await c('GET', '/stat?path=docs/new.md')).status, 404, 'created since the target: to the trash');
  t.is((await c('GET', '/cat?path=other.md')).body.data.content_text, 'o2', 'outside the path: untouched');

  const single = await c('POST', '/rollback', { path: 'other.md', target_version: target });
  t.is(single.status, 200);
  t.is((await c('GET', '/cat?path=other.md')).body.data.content_text, 'o1');
  t.is((await c('GET', '/versions?path=other.md')).body.data.versions[0].operation, 'rollback');

  t.is((await c('POST', '/rollback', { path: 'docs/a.md', target_version: 999 })).status, 404);
  const later = (await c('POST', '/write', md('later.md', 'l'))).body.data;
  t.is((await c('POST', '/rollback', { path: 'later.md', target_version: target })).status, 422, 'did not exist then');
  t.truthy(later.id);
});

test('a scoped key sees only commits and diff entries inside its scope, and rolls back only paths inside it', async (t) => {
  const { pid, c } = await freshProject('history-scope');
  await c('POST', '/write', md('pub/a.md', 'a1', 'public edit'));
  await c('POST', '/write', md('secret/s.md', 's1', 'secret edit'));
  const { key } = await createKey(server, token, pid, { scope_path: 'pub' });
  const k = contentApi(server, key, pid);
  const list = await k('GET', '/versions');
  t.is(list.status, 200);
  t.deepEqual(list.body.data.commits.map((x: { message: string }) => x.message), ['public edit']);
  const diff = await k('GET', '/diff?v1=0&v2=2');
  t.deepEqual(diff.body.data.changes.map((ch: { path: string }) => ch.path), ['pub', 'pub/a.md'], 'nothing of secret/');
  t.is((await k('POST', '/rollback', { path: 'secret/s.md', target_version: 1 })).status, 403);
});
