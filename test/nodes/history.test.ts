import test from 'ava';
import { nodesFixture, type NodesFixture } from './helpers.ts';

let f: NodesFixture;
test.before(async () => {
  f = await nodesFixture();
});
test.after.always(() => f.server.stop());

test('versions, version content, diff and rollback by id answer like the path routes', async (t) => {
  const md = await f.make('markdown', 'hist.md', null, 'line one\n');
  await f.call('PUT', `/nodes/${md.id}`, { content: 'line one\nline two\n' });
  await f.call('PUT', `/nodes/${md.id}`, { content: 'line 1\nline two\n' });
  const path = 'hist.md';

  const byId = await f.call('GET', `/nodes/${md.id}/versions`);
  const byPath = await f.call('GET', `/content/${f.pid}/versions?path=${path}`);
  t.is(byId.status, 200);
  t.deepEqual(byId.body, byPath.body, 'same records and container');
  t.is(byId.body.data.total, 3);
  t.is(byId.body.data.current_version, 3);
  for (const k of ['version', 'actor_type', 'actor_id', 'created_at', 'author', 'size', 'message']) t.true(k in byId.body.data.versions[0]);
  t.deepEqual((await f.call('GET', `/collab/versions/${md.id}`)).body, byId.body, '/collab twin');

  const v2 = await f.call('GET', `/nodes/${md.id}/versions/2`);
  t.deepEqual(v2.body, (await f.call('GET', `/content/${f.pid}/version-content?path=${path}&version=2`)).body);
  t.is(v2.body.data.content_text, 'line one\nline two\n');
  t.deepEqual((await f.call('GET', `/collab/versions/${md.id}/2`)).body, v2.body);
  t.is((await f.call('GET', `/nodes/${md.id}/versions/9`)).status, 404);

  const diff = await f.call('GET', `/nodes/${md.id}/diff/1/3`);
  t.deepEqual(diff.body, (await f.call('GET', `/content/${f.pid}/diff?path=${path}&v1=1&v2=3`)).body);
  t.is(diff.body.data.kind, 'text');
  t.is(diff.body.data.added_lines, 2);
  t.deepEqual((await f.call('GET', `/collab/diff/${md.id}/1/3`)).body, diff.body);

  const rb = await f.call('POST', `/nodes/${md.id}/rollback/1`);
  t.is(rb.status, 200);
  t.is(rb.body.data.version, 4, 'a rollback is a new version');
  t.is(rb.body.data.restored_version, 1);
  t.is((await f.call('GET', `/nodes/${md.id}`)).body.data.content, 'line one\n');
  const viaPath = await f.call('POST', `/content/${f.pid}/rollback`, { path, version: 2 });
  const viaCollab = await f.call('POST', `/collab/rollback/${md.id}/3`);
  t.deepEqual(Object.keys(viaCollab.body.data).sort(), Object.keys(viaPath.body.data).sort(), 'same answer shape');
  t.is(viaCollab.body.data.version, 6);
  t.is((await f.call('GET', `/nodes/${md.id}/versions`)).body.data.total, 6, 'no version is ever deleted');
});

test('versions follow a node across renames and moves, each with the path it had', async (t) => {
  const a = await f.make('folder', 'from');
  const b = await f.make('folder', 'to');
  const doc = await f.make('json', 'doc.json', a.id, { v: 1 });
  await f.call('POST', `/nodes/${doc.id}/move`, { new_parent_id: b.id });
  await f.call('PUT', `/nodes/${doc.id}`, { name: 'renamed.json', content: { v: 2 } });
  await f.call('POST', `/nodes/${doc.id}/move`, { new_parent_id: null });
  const list = (await f.call('GET', `/nodes/${doc.id}/versions`)).body.data;
  t.is(list.total, 4);
  t.deepEqual(
    list.versions.map((v: { version: number; path: string }) => [v.version, v.path]),
    [
      [4, 'renamed.json'],
      [3, 'to/renamed.json'],
      [2, 'to/doc.json'],
      [1, 'from/doc.json'],
    ],
  );
  t.deepEqual((await f.call('GET', `/nodes/${doc.id}/versions/1`)).body.data.content, { v: 1 });
  const audit = await f.call('GET', `/nodes/${doc.id}/audit-logs?project_id=${f.pid}`);
  t.is(audit.status, 200);
  t.is(audit.body.data.logs.length, 4);
  t.true(audit.body.data.logs.every((l: { node_id: string }) => l.node_id === doc.id));
});

test('version list paging: limit and since_version', async (t) => {
  const md = await f.make('markdown', 'paged.md', null, '0');
  for (let i = 1; i < 6; i++) await f.call('PUT', `/nodes/${md.id}`, { content: String(i) });
  const page = (await f.call('GET', `/nodes/${md.id}/versions?limit=2`)).body.data;
  t.deepEqual(page.versions.map((v: { version: number }) => v.version), [6, 5]);
  t.is(page.total, 6);
  const since = (await f.call('GET', `/nodes/${md.id}/versions?since_version=4`)).body.data;
  t.deepEqual(since.versions.map((v: { version: number }) => v.version), [6, 5]);
});

test('rollbacks are recorded with paths, not node ids (node by id, node by path, folder snapshot)', async (t) => {
  const folder = await f.make('folder', 'rb-docs');
  const md = await f.make('markdown', 'page.md', folder.id, 'one\n');
  await f.call('PUT', `/nodes/${md.id}`, { content: 'two\n' });
  const snapshots = (await f.call('GET', `/nodes/${folder.id}/snapshots`)).body.data.snapshots;
  const first = snapshots[snapshots.length - 1];
  t.is((await f.call('POST', `/nodes/${md.id}/rollback/1`)).status, 200);
  t.is((await f.call('POST', `/content/${f.pid}/rollback`, { path: 'rb-docs/page.md', version: 2 })).status, 200);
  t.is((await f.call('POST', `/nodes/${folder.id}/rollback-snapshot/${first.snapshot_id}`)).status, 200);
  // Other tests of this file write to the same project meanwhile: the commits that touched rb-docs.
  const commits: { message: string; changes: { path: string; old_path: string | null }[] }[] = (await f.call('GET', `/content/${f.pid}/versions`)).body.data.commits;
  const inDocs = (c: (typeof commits)[number]) => c.changes.some((ch) => `${ch.path} ${ch.old_path}`.includes('rb-docs/'));
  const messages = commits.filter(inDocs).slice(0, 3).map((c) => c.message);
  t.deepEqual(messages, [
    `rollback folder rb-docs to project version ${first.project_version}`,
    'rollback rb-docs/page.md to version 2',
    'rollback rb-docs/page.md to version 1',
  ]);
  for (const m of messages) t.notRegex(m, /nod_/);
});
