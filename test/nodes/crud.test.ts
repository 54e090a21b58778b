import test from 'ava';
import { nodesFixture, type NodesFixture } from './helpers.ts';

let f: NodesFixture;
test.before(async () => {
  f = await nodesFixture();
});
test.after.always(() => f.server.stop());

test('create folder, json and markdown nodes; read them by id with the 2.1 shape', async (t) => {
  const folder = await f.make('folder', 'crud');
  t.is(folder.type, 'folder');
  t.is(folder.parent_id, null);
  t.is(folder.project_id, f.pid);
  const json = await f.make('json', 'data.json', folder.id, { a: 1 });
  const md = await f.make('markdown', 'notes.md', folder.id, '# hi\n');
  t.deepEqual(json.content, { a: 1 });
  t.is(md.content, '# hi\n');

  const got = await f.call('GET', `/nodes/${json.id}`);
  t.is(got.status, 200);
  const n = got.body.data;
  for (const k of ['id', 'name', 'type', 'content', 'parent_id', 'project_id', 'created_at', 'updated_at', 'path', 'version', 'content_hash', 'size', 'mime_type']) {
    t.true(k in n, `node has ${k}`);
  }
  t.is(n.parent_id, folder.id);
  t.is(n.path, 'crud/data.json');
  t.is(n.version, 1);
  t.is(n.mime_type, 'application/json');
  t.regex(n.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  t.is((await f.call('GET', `/nodes/${md.id}?project_id=${f.pid}`)).body.data.content, '# hi\n');
  t.is((await f.call('GET', `/nodes/${folder.id}`)).body.data.content, undefined, 'folders carry no content');
  t.is((await f.call('GET', `/nodes/${md.id}?project_id=other`)).status, 404, 'a wrong project_id is not found');
  t.is((await f.call('GET', '/nodes/nope')).status, 404);

  const dup = await f.call('POST', '/nodes/json', { project_id: f.pid, parent_id: folder.id, name: 'data.json', content: {} });
  t.is(dup.status, 409, 'a taken name conflicts');
  const bad = await f.call('POST', '/nodes/json', { project_id: f.pid, parent_id: folder.id, name: 'x.json', content: 'text' });
  t.is(bad.status, 422);
  const slash = await f.call('POST', '/nodes/markdown', { project_id: f.pid, name: 'a/b.md', content: 'x' });
  t.is(slash.status, 422);
  const intoFile = await f.call('POST', '/nodes/markdown', { project_id: f.pid, parent_id: md.id, name: 'c.md', content: 'x' });
  t.is(intoFile.status, 422, 'a parent must be a folder');
});

test('children by parent_id (root when omitted), by-path, by-id-path and batch', async (t) => {
  const top = await f.make('folder', 'lists');
  const sub = await f.make('folder', 'sub', top.id);
  const a = await f.make('markdown', 'a.md', sub.id, 'a');
  const b = await f.make('json', 'b.json', top.id, { b: true });

  const root = await f.call('GET', `/nodes/?project_id=${f.pid}`);
  t.is(root.status, 200);
  t.true(root.body.data.nodes.some((n: { id: string }) => n.id === top.id));
  t.true(root.body.data.nodes.every((n: { parent_id: string | null }) => n.parent_id === null));
  const kids = await f.call('GET', `/nodes/?project_id=${f.pid}&parent_id=${top.id}`);
  t.deepEqual(kids.body.data.nodes.map((n: { id: string }) => n.id), [sub.id, b.id], 'folders first, then by name');
  t.is(kids.body.data.nodes[1].content, undefined, 'lists carry no content unless asked');
  const withContent = await f.call('GET', `/nodes/?project_id=${f.pid}&parent_id=${top.id}&include_content=true`);
  t.deepEqual(withContent.body.data.nodes[1].content, { b: true });

  const byPath = await f.call('GET', `/nodes/by-path?project_id=${f.pid}&path=lists/sub/a.md`);
  t.is(byPath.body.data.id, a.id);
  t.is(byPath.body.data.content, 'a');
  t.is((await f.call('GET', `/nodes/by-path?project_id=${f.pid}&path=lists/none.md`)).status, 404);

  const idPath = await f.call('GET', `/nodes/by-id-path/?project_id=${f.pid}&id_path=${top.id}/${sub.id}/${a.id}`);
  t.is(idPath.status, 200);
  t.is(idPath.body.data.id, a.id);
  t.is((await f.call('GET', `/nodes/by-id-path?project_id=${f.pid}&id_path=${top.id}/${a.id}`)).status, 404, 'each id must be a child of the one before');
  t.is((await f.call('GET', `/nodes/by-id-path?project_id=${f.pid}&id_path=${sub.id}`)).status, 404, 'the first id must be at the root');

  const batch = await f.call('GET', `/nodes/batch?ids=${b.id},missing1,${a.id},${top.id}`);
  t.is(batch.status, 200);
  t.deepEqual(batch.body.data.nodes.map((n: { id: string }) => n.id), [b.id, a.id, top.id], 'in the order asked');
  t.deepEqual(batch.body.data.missing, [{ id: 'missing1', code: 'NOT_FOUND' }]);
});

test('PUT renames and changes content in ONE version; move keeps ids; moving into a descendant is 422', async (t) => {
  const box = await f.make('folder', 'box');
  const inner = await f.make('folder', 'inner', box.id);
  const doc = await f.make('markdown', 'doc.md', box.id, 'one\n');

  const put = await f.call('PUT', `/nodes/${doc.id}`, { name: 'renamed.md', content: 'two\n' });
  t.is(put.status, 200);
  t.is(put.body.data.version, 2, 'rename and content together make one version');
  t.is(put.body.data.path, 'box/renamed.md');
  t.is(put.body.data.content, 'two\n');
  t.is((await f.call('PUT', `/nodes/${doc.id}`, { content: 'three\n', base_version: 1 })).status, 409, 'a stale base_version conflicts');
  t.is((await f.call('PUT', `/nodes/${doc.id}`, {})).status, 422);
  t.is((await f.call('PUT', `/nodes/${box.id}`, { content: 'x' })).status, 422, 'folders have no content');

  const moved = await f.call('POST', `/nodes/${doc.id}/move`, { new_parent_id: inner.id });
  t.is(moved.status, 200);
  t.is(moved.body.data.id, doc.id);
  t.is(moved.body.data.parent_id, inner.id);
  t.is(moved.body.data.path, 'box/inner/renamed.md');
  const toRoot = await f.call('POST', `/nodes/${inner.id}/move`, { new_parent_id: null });
  t.is(toRoot.body.data.path, 'inner');
  t.is((await f.call('GET', `/nodes/${doc.id}`)).body.data.path, 'inner/renamed.md', 'children follow their folder');

  t.is((await f.call('POST', `/nodes/${box.id}/move`, { new_parent_id: box.id })).status, 422, 'into itself');
  const deep = await f.make('folder', 'deep', box.id);
  t.is((await f.call('POST', `/nodes/${box.id}/move`, { new_parent_id: deep.id })).status, 422, 'into a descendant');
});

test('the same node through both surfaces; ids stable across rename, move, trash and restore', async (t) => {
  const w = await f.call('POST', `/content/${f.pid}/write`, { path: 'both/page.md', content: 'via path', node_type: 'markdown' });
  const id = w.body.data.id;
  const viaId = await f.call('GET', `/nodes/${id}`);
  t.is(viaId.body.data.content, 'via path');
  t.is(viaId.body.data.path, 'both/page.md');

  await f.call('PUT', `/nodes/${id}`, { content: 'via id' });
  const cat = await f.call('GET', `/content/${f.pid}/cat?path=both/page.md`);
  t.is(cat.body.data.content_text, 'via id');
  t.is(cat.body.data.id, id);
  t.is(cat.body.data.version, 2);

  await f.call('PUT', `/nodes/${id}`, { name: 'renamed.md' });
  await f.call('POST', `/content/${f.pid}/mv`, { old_path: 'both/renamed.md', new_path: 'elsewhere/renamed.md' });
  t.is((await f.call('GET', `/nodes/${id}`)).body.data.path, 'elsewhere/renamed.md');

  const del = await f.call('DELETE', `/nodes/${id}`);
  t.is(del.status, 200);
  t.is(del.body.data.id, id);
  t.regex(del.body.data.trash_path, /^\.trash\//);
  t.is((await f.call('DELETE', `/nodes/${id}`)).status, 409, 'already in the trash');
  const trash = await f.call('GET', `/content/${f.pid}/trash`);
  const item = trash.body.data.items.find((i: { id: string }) => i.id === id);
  t.truthy(item, 'a soft delete goes to the trash of the path surface');
  t.is((await f.call('GET', `/nodes/${id}`)).body.data.state, 'trashed');

  await f.call('POST', `/content/${f.pid}/restore`, { trash_path: item.trash_path, original_path: 'elsewhere/renamed.md' });
  const back = await f.call('GET', `/nodes/${id}`);
  t.is(back.body.data.state, 'active');
  t.is(back.body.data.path, 'elsewhere/renamed.md');
  const versions = await f.call('GET', `/nodes/${id}/versions`);
  t.deepEqual(versions.body.data.versions.map((v: { operation: string }) => v.operation), ['restore', 'trash', 'move', 'move', 'update', 'create']);
});

test('bulk-create is one commit, all or nothing', async (t) => {
  const parent = await f.make('folder', 'bulk');
  const ok = await f.call('POST', '/nodes/bulk-create', {
    project_id: f.pid,
    parent_id: parent.id,
    nodes: [
      { name: 'x.md', type: 'markdown', content: 'x' },
      { name: 'dir', type: 'folder' },
      { name: 'y.json', type: 'json', content: { y: 1 } },
      { name: 'z.bin', type: 'file', content: Buffer.from([0, 1, 2]).toString('base64') },
    ],
  });
  t.is(ok.status, 201);
  t.deepEqual(ok.body.data.nodes.map((n: { name: string }) => n.name), ['x.md', 'dir', 'y.json', 'z.bin'], 'in the order given');
  t.true(ok.body.data.nodes.every((n: { parent_id: string }) => n.parent_id === parent.id));
  const pv = ok.body.data.project_version;
  const commits = new Set(
    await Promise.all(ok.body.data.nodes.filter((n: { type: string }) => n.type !== 'folder').map(async (n: { id: string }) => (await f.call('GET', `/nodes/${n.id}/versions`)).body.data.versions[0].project_version)),
  );
  t.deepEqual([...commits], [pv], 'every node was made by the same commit');

  const before = (await f.call('GET', `/nodes/?project_id=${f.pid}&parent_id=${parent.id}`)).body.data.nodes.length;
  const failing = await f.call('POST', '/nodes/bulk-create', {
    project_id: f.pid,
    parent_id: parent.id,
    nodes: [
      { name: 'new1.md', type: 'markdown', content: 'n' },
      { name: 'bad.json', type: 'json', content: 'not an object' },
    ],
  });
  t.is(failing.status, 422);
  const clash = await f.call('POST', '/nodes/bulk-create', {
    project_id: f.pid,
    parent_id: parent.id,
    nodes: [
      { name: 'new2.md', type: 'markdown', content: 'n' },
      { name: 'x.md', type: 'markdown', content: 'exists already' },
    ],
  });
  t.is(clash.status, 409);
  const after = (await f.call('GET', `/nodes/?project_id=${f.pid}&parent_id=${parent.id}`)).body.data.nodes;
  t.is(after.length, before, 'nothing of a failed bulk-create was written');
  t.is((await f.call('GET', `/nodes/${ok.body.data.nodes[0].id}`)).body.data.content, 'x');
});
