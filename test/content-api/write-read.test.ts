import test from 'ava';
import { type ContentCall, contentApi, createProject, defaultProject } from '../helpers/project.ts';
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

test('write creates parent folders and versions; cat returns each type', async (t) => {
  const md = await c('POST', '/write', { path: 'docs/guide.md', content: '# Guide\n', node_type: 'markdown', message: 'first draft' });
  t.is(md.status, 201, 'a write that creates the node answers 201');
  t.is(md.body.data.version, 1);
  t.true(md.body.data.changed);
  t.is(md.body.data.type, 'markdown');
  const json = await c('POST', '/write', { path: 'data/item.json', content: { a: 1, b: [1, 2] }, node_type: 'json' });
  t.is(json.status, 201);
  const bin = Buffer.from([0, 1, 2, 250, 255]);
  const file = await c('POST', '/write', { path: 'assets/blob.bin', content: bin.toString('base64'), node_type: 'file' });
  t.is(file.status, 201);

  const catMd = await c('GET', '/cat?path=docs/guide.md');
  t.is(catMd.body.data.content_text, '# Guide\n');
  t.is(catMd.body.data.version, 1);
  const catJson = await c('GET', '/cat?path=data/item.json');
  t.deepEqual(catJson.body.data.content, { a: 1, b: [1, 2] });
  const catFile = await c('GET', '/cat?path=assets/blob.bin');
  t.truthy(catFile.body.data.download_url);
  const raw = await fetch(catFile.body.data.download_url, { headers: { authorization: `Bearer ${token}` } });
  t.deepEqual(Buffer.from(await raw.arrayBuffer()), bin);
  const ranged = await fetch(catFile.body.data.download_url, { headers: { authorization: `Bearer ${token}`, range: 'bytes=1-2' } });
  t.is(ranged.status, 206);
  t.is(ranged.headers.get('content-range'), 'bytes 1-2/5');
  t.deepEqual(Buffer.from(await ranged.arrayBuffer()), bin.subarray(1, 3));

  const folder = await c('GET', '/stat?path=docs');
  t.is(folder.body.data.type, 'folder');
  t.is(folder.body.data.children_count, 1);
});

test('identical content creates no version and says so', async (t) => {
  await c('POST', '/write', { path: 'same.md', content: 'x', node_type: 'markdown' });
  const again = await c('POST', '/write', { path: 'same.md', content: 'x', node_type: 'markdown' });
  t.is(again.status, 200);
  t.false(again.body.data.changed);
  t.is(again.body.data.version, 1);
  const versions = await c('GET', '/versions?path=same.md');
  t.is(versions.body.data.total, 1);
});

test('stat, ls and tree show the shapes of the issue', async (t) => {
  await c('POST', '/bulk-write', {
    files: [
      { path: 'tree/a.md', content: 'a', node_type: 'markdown' },
      { path: 'tree/sub/b.json', content: { b: true }, node_type: 'json' },
    ],
  });
  const stat = await c('GET', '/stat?path=tree/a.md');
  for (const key of ['type', 'name', 'path', 'id', 'content_hash', 'mime_type', 'size', 'children_count', 'version', 'created_at', 'updated_at']) {
    t.true(key in stat.body.data, key);
  }
  t.is(stat.body.data.mime_type, 'text/markdown');
  const ls = await c('GET', '/ls?path=tree');
  t.is(ls.body.data.path, 'tree');
  t.deepEqual(ls.body.data.entries.map((e: { name: string }) => e.name).sort(), ['a.md', 'sub']);
  const tree = await c('GET', '/tree?path=tree&max_depth=-1');
  const sub = tree.body.data.children.find((n: { name: string }) => n.name === 'sub');
  t.is(sub.children[0].name, 'b.json');
  const shallow = await c('GET', '/tree?path=tree&max_depth=1');
  const shallowSub = shallow.body.data.children.find((n: { name: string }) => n.name === 'sub');
  t.is(shallowSub.children, undefined);
});

test('versions list newest first with both record shapes, and old versions are readable', async (t) => {
  for (const text of ['one', 'two', 'three']) await c('POST', '/write', { path: 'hist.md', content: text, node_type: 'markdown', message: `set ${text}` });
  const list = await c('GET', '/versions?path=hist.md');
  t.is(list.status, 200);
  t.is(list.body.data.total, 3);
  t.is(list.body.data.current_version, 3);
  const [newest] = list.body.data.versions;
  t.is(newest.version, 3);
  t.is(newest.actor_type, 'user');
  t.is(newest.author, 'admin@example.com');
  t.is(newest.message, 'set three');
  for (const key of ['version', 'actor_type', 'actor_id', 'author', 'created_at', 'message', 'size', 'commit_id', 'operation', 'project_version']) {
    t.true(key in newest, key);
  }
  const limited = await c('GET', '/versions?path=hist.md&limit=1');
  t.is(limited.body.data.versions.length, 1);
  const since = await c('GET', '/versions?path=hist.md&since_version=1');
  t.deepEqual(since.body.data.versions.map((v: { version: number }) => v.version), [3, 2]);
  const v1 = await c('GET', '/version-content?path=hist.md&version=1');
  t.is(v1.body.data.content_text, 'one');
  const v2 = await c('GET', '/versions?path=hist.md&version=2');
  t.is(v2.body.data.content_text, 'two');
  const missing = await c('GET', '/version-content?path=hist.md&version=9');
  t.is(missing.status, 404);
});

test('diff: unified for markdown, JSON Patch for json, sizes and hashes for binary', async (t) => {
  await c('POST', '/write', { path: 'd.md', content: 'a\nb\n', node_type: 'markdown' });
  await c('POST', '/write', { path: 'd.md', content: 'a\nc\nd\n', node_type: 'markdown' });
  const text = await c('GET', '/diff?path=d.md&v1=1&v2=2');
  t.is(text.body.data.kind, 'text');
  t.is(text.body.data.added_lines, 2);
  t.is(text.body.data.removed_lines, 1);
  t.regex(text.body.data.unified_diff, /-b\n\+c\n\+d/);

  await c('POST', '/write', { path: 'd.json', content: { a: 1, b: 2 }, node_type: 'json' });
  await c('POST', '/write', { path: 'd.json', content: { a: 1, c: 3 }, node_type: 'json' });
  const json = await c('GET', '/diff?path=d.json&v1=1&v2=2');
  t.is(json.body.data.kind, 'json');
  t.deepEqual(
    json.body.data.json_patch.map((op: { op: string; path: string }) => `${op.op} ${op.path}`).sort(),
    ['add /c', 'remove /b'],
  );

  await c('POST', '/write', { path: 'd.bin', content: Buffer.from([0, 1]).toString('base64'), node_type: 'file' });
  await c('POST', '/write', { path: 'd.bin', content: Buffer.from([0, 2, 3]).toString('base64'), node_type: 'file' });
  const bin = await c('GET', '/diff?path=d.bin&v1=1&v2=2');
  t.is(bin.body.data.kind, 'binary');
  t.is(bin.body.data.from.size, 2);
  t.is(bin.body.data.to.size, 3);
});

test('rollback of a node adds a version with the old content', async (t) => {
  await c('POST', '/write', { path: 'rb.md', content: 'first', node_type: 'markdown' });
  await c('POST', '/write', { path: 'rb.md', content: 'second', node_type: 'markdown' });
  const rb = await c('POST', '/rollback', { path: 'rb.md', version: 1 });
  t.is(rb.status, 200);
  t.is(rb.body.data.version, 3);
  t.is((await c('GET', '/cat?path=rb.md')).body.data.content_text, 'first');
  const list = await c('GET', '/versions?path=rb.md');
  t.is(list.body.data.total, 3);
  t.is(list.body.data.versions[0].operation, 'rollback');
});

test('rollback of the whole project to a commit number', async (t) => {
  // Its own project: a project rollback would undo the other tests' writes running alongside.
  const orgId = (await server.api('GET', '/organizations/', { token })).body.data.organizations[0].id;
  const own = await createProject(server, token, orgId, 'rollback');
  const c = contentApi(server, token, own);
  const a = await c('POST', '/write', { path: 'proj/a.md', content: 'a1', node_type: 'markdown' });
  const target = a.body.data.project_version;
  await c('POST', '/write', { path: 'proj/a.md', content: 'a2', node_type: 'markdown' });
  await c('POST', '/write', { path: 'proj/new.md', content: 'new', node_type: 'markdown' });
  const rb = await c('POST', '/rollback', { target_version: target });
  t.is(rb.status, 200);
  t.is((await c('GET', '/cat?path=proj/a.md')).body.data.content_text, 'a1');
  t.is((await c('GET', '/stat?path=proj/new.md')).status, 404);
  const trash = await c('GET', '/trash');
  t.true(trash.body.data.items.some((i: { original_path: string }) => i.original_path === 'proj/new.md'));
});

test('audit log of a path records writes and moves', async (t) => {
  const w = await c('POST', '/write', { path: 'aud/x.md', content: 'x', node_type: 'markdown' });
  await c('POST', '/mv', { old_path: 'aud/x.md', new_path: 'aud/y.md' });
  const logs = await server.api('GET', `/nodes/aud/y.md/audit-logs?project_id=${pid}`, { token });
  t.is(logs.status, 200);
  const actions = logs.body.data.logs.map((l: { action: string }) => l.action);
  t.true(actions.includes('move'));
  const byId = await server.api('GET', `/nodes/${w.body.data.id}/audit-logs?project_id=${pid}`, { token });
  t.deepEqual(byId.body.data.logs.map((l: { action: string }) => l.action).sort(), ['create', 'move']);
  const move = byId.body.data.logs.find((l: { action: string }) => l.action === 'move');
  t.is(move.actor_type, 'user');
  t.truthy(move.timestamp);
});
