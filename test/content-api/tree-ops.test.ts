import test from 'ava';
import { type ContentCall, contentApi, createKey, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;
let pid: string;
let c: ContentCall;

test.before(async () => {
  server = await startTestServer();
  token = (await server.login()).token;
  pid = (await defaultProject(server, token)).projectId;
  c = contentApi(server, token, pid);
});
test.after.always(() => server.stop());

test('mkdir creates an empty folder that is listed and survives', async (t) => {
  const res = await c('POST', '/mkdir', { path: 'empty/inner' });
  t.is(res.status, 201, 'created');
  t.is(res.body.data.type, 'folder');
  const ls = await c('GET', '/ls?path=empty/inner');
  t.deepEqual(ls.body.data.entries, []);
  const parent = await c('GET', '/ls?path=empty');
  t.deepEqual(parent.body.data.entries.map((e: { name: string }) => e.name), ['inner']);
});

test('mv keeps the ids and histories of a moved folder and everything inside', async (t) => {
  const a = await c('POST', '/write', { path: 'mv/src/a.md', content: 'a', node_type: 'markdown' });
  await c('POST', '/write', { path: 'mv/src/a.md', content: 'a2', node_type: 'markdown' });
  const folder = await c('GET', '/stat?path=mv/src');
  const moved = await c('POST', '/mv', { old_path: 'mv/src', new_path: 'mv/dst', message: 'rename folder' });
  t.is(moved.status, 200);
  t.is(moved.body.data.id, folder.body.data.id);
  const after = await c('GET', '/stat?path=mv/dst/a.md');
  t.is(after.body.data.id, a.body.data.id);
  const versions = await c('GET', '/versions?path=mv/dst/a.md');
  t.true(versions.body.data.total >= 2);
  t.true(versions.body.data.versions.some((v: { path: string }) => v.path === 'mv/src/a.md'));
  t.is((await c('GET', '/stat?path=mv/src')).status, 404);
});

test('mv onto an existing path is 409 and changes nothing', async (t) => {
  await c('POST', '/write', { path: 'mvc/a.md', content: 'a', node_type: 'markdown' });
  await c('POST', '/write', { path: 'mvc/b.md', content: 'b', node_type: 'markdown' });
  const res = await c('POST', '/mv', { old_path: 'mvc/a.md', new_path: 'mvc/b.md' });
  t.is(res.status, 409);
  t.is(res.body.error.code, 'CONFLICT');
  t.is((await c('GET', '/cat?path=mvc/b.md')).body.data.content_text, 'b');
  t.is((await c('GET', '/cat?path=mvc/a.md')).body.data.content_text, 'a');
});

test('rm moves to the trash keeping id and history; restore brings it back', async (t) => {
  const w = await c('POST', '/write', { path: 'rm/note.md', content: 'keep me', node_type: 'markdown' });
  const rm = await c('POST', '/rm', { path: 'rm/note.md' });
  t.is(rm.status, 200);
  t.is((await c('GET', '/stat?path=rm/note.md')).status, 404);
  const root = await c('GET', '/ls');
  t.false(root.body.data.entries.some((e: { name: string }) => e.name === '.trash'), '.trash is hidden at the root');
  const trash = await c('GET', '/trash');
  const item = trash.body.data.items.find((i: { original_path: string }) => i.original_path === 'rm/note.md');
  t.truthy(item);
  t.is(item.id, w.body.data.id);
  t.is(item.deleted_by, 'admin@example.com');
  t.regex(item.trash_path, /^\.trash\//);
  const restored = await c('POST', '/restore', { trash_path: item.trash_path, original_path: 'rm/note.md' });
  t.is(restored.status, 200);
  t.is(restored.body.data.id, w.body.data.id);
  t.is((await c('GET', '/cat?path=rm/note.md')).body.data.content_text, 'keep me');
  const versions = await c('GET', '/versions?path=rm/note.md');
  t.deepEqual(versions.body.data.versions.map((v: { operation: string }) => v.operation), ['restore', 'trash', 'create']);
});

test('restore onto a taken path is 409', async (t) => {
  await c('POST', '/write', { path: 'rt/x.md', content: 'one', node_type: 'markdown' });
  await c('POST', '/rm', { path: 'rt/x.md' });
  await c('POST', '/write', { path: 'rt/x.md', content: 'two', node_type: 'markdown' });
  const item = (await c('GET', '/trash')).body.data.items.find((i: { original_path: string }) => i.original_path === 'rt/x.md');
  const res = await c('POST', '/restore', { trash_path: item.trash_path, original_path: 'rt/x.md' });
  t.is(res.status, 409);
  t.is((await c('GET', '/cat?path=rt/x.md')).body.data.content_text, 'two');
});

test('permanent rm removes the node from the tree and the trash', async (t) => {
  await c('POST', '/write', { path: 'perm/gone.md', content: 'x', node_type: 'markdown' });
  const res = await c('POST', '/rm', { path: 'perm/gone.md', permanent: true });
  t.is(res.status, 200);
  t.is((await c('GET', '/stat?path=perm/gone.md')).status, 404);
  const trash = await c('GET', '/trash');
  t.false(trash.body.data.items.some((i: { original_path: string }) => i.original_path === 'perm/gone.md'));
});

test('bulk-write is one commit, all or nothing', async (t) => {
  const ok = await c('POST', '/bulk-write', {
    message: 'import',
    files: [
      { path: 'bulk/a.md', content: 'a', node_type: 'markdown' },
      { path: 'bulk/b.json', content: { b: 1 }, node_type: 'json' },
    ],
  });
  t.is(ok.status, 200);
  const va = (await c('GET', '/versions?path=bulk/a.md')).body.data.versions[0];
  const vb = (await c('GET', '/versions?path=bulk/b.json')).body.data.versions[0];
  t.is(va.commit_id, vb.commit_id);
  t.is(va.message, 'import');

  const bad = await c('POST', '/bulk-write', {
    files: [
      { path: 'bulk2/ok.md', content: 'fine', node_type: 'markdown' },
      { path: 'bulk2/bad.json', content: 'not an object', node_type: 'json' },
    ],
  });
  t.is(bad.status, 422);
  t.is((await c('GET', '/stat?path=bulk2/ok.md')).status, 404, 'nothing written');
});

test('base_version guards against lost updates', async (t) => {
  const w1 = await c('POST', '/write', { path: 'bv.md', content: 'v1', node_type: 'markdown' });
  await c('POST', '/write', { path: 'bv.md', content: 'v2', node_type: 'markdown', base_version: w1.body.data.version });
  const stale = await c('POST', '/write', { path: 'bv.md', content: 'v3', node_type: 'markdown', base_version: w1.body.data.version });
  t.is(stale.status, 409);
  t.is((await c('GET', '/cat?path=bv.md')).body.data.content_text, 'v2');
});

test('seed is idempotent and the dashboard counts content', async (t) => {
  const first = await server.api('POST', `/projects/${pid}/seed`, { token });
  t.is(first.status, 200);
  t.true(first.body.data.changed);
  const second = await server.api('POST', `/projects/${pid}/seed`, { token });
  t.false(second.body.data.changed);
  await createKey(server, token, pid, { name: 'dash key' });
  const sync = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: pid, provider: 'folder' } });
  t.is(sync.status, 201, JSON.stringify(sync.body));
  const dash = await server.api('GET', `/projects/${pid}/dashboard`, { token });
  t.is(dash.status, 200);
  t.true(dash.body.data.nodes.markdown >= 3);
  t.true(dash.body.data.commits >= 1);
  t.truthy(dash.body.data.last_change.commit_id);
  t.true(dash.body.data.connections.active >= 2, 'the key and the sync connection');
  t.is(dash.body.data.sync.syncs, 1);
  t.is(dash.body.data.sync.behind, 1, 'a new sync has confirmed nothing yet');
  t.is(dash.body.data.sync.items[0].commits_behind, dash.body.data.commits);
});
