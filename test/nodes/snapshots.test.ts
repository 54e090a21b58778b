import test from 'ava';
import { nodesFixture, type NodesFixture } from './helpers.ts';

let f: NodesFixture;
test.before(async () => {
  f = await nodesFixture();
});
test.after.always(() => f.server.stop());

const content = async (id: string) => (await f.call('GET', `/nodes/${id}`)).body.data;

test('snapshot list and rollback: changed, created and deleted nodes beneath the folder; a sibling outside untouched', async (t) => {
  const folder = await f.make('folder', 'snap');
  const sub = await f.make('folder', 'sub', folder.id);
  const bulk = await f.call('POST', '/nodes/bulk-create', {
    project_id: f.pid,
    parent_id: folder.id,
    nodes: [
      { name: 'a.md', type: 'markdown', content: 'a1' },
      { name: 'b.json', type: 'json', content: { b: 1 } },
    ],
  });
  const [a, b] = bulk.body.data.nodes;
  const c = await f.make('markdown', 'c.md', sub.id, 'c1');
  const sibling = await f.make('markdown', 'sibling.md', null, 's1');

  const before = (await f.call('GET', `/nodes/${folder.id}/snapshots`)).body.data;
  const target = before.snapshots[0];
  t.is(target.files_count, 3);
  t.is(target.changed_count, 1, 'the commit that made c.md');

  await f.call('PUT', `/nodes/${a.id}`, { content: 'a2' }); // changed
  await f.call('DELETE', `/nodes/${b.id}`); // deleted (trash)
  await f.call('DELETE', `/nodes/${sub.id}`); // a folder with its file
  const d = await f.make('markdown', 'd.md', folder.id, 'new'); // created
  await f.call('PUT', `/nodes/${sibling.id}`, { content: 's2' }); // outside

  const list = await f.call('GET', `/nodes/${folder.id}/snapshots`);
  t.is(list.status, 200);
  const snaps = list.body.data.snapshots;
  for (const k of ['snapshot_id', 'created_at', 'actor_type', 'actor_id', 'message', 'files_count', 'changed_count']) t.true(k in snaps[0], k);
  t.deepEqual(
    snaps.map((s: { files_count: number; changed_count: number }) => [s.files_count, s.changed_count]),
    [
      [1 + 1, 1], // d.md created: a.md, d.md
      [1, 1], // sub (and c.md with it) trashed
      [2, 1], // b.json trashed
      [3, 1], // a.md changed
      [3, 1], // c.md created
      [2, 2], // bulk-create
      [0, 1], // sub created
      [0, 0], // the folder itself created
    ],
  );
  t.is(snaps[0].actor_type, 'user');
  t.deepEqual((await f.call('GET', `/collab/snapshots/${folder.id}`)).body, list.body, '/collab twin');
  t.false(snaps.some((s: { message: string }) => /sibling/.test(s.message)), 'changes outside the folder are not snapshots');

  const versionsBefore = (await f.call('GET', `/nodes/${b.id}/versions`)).body.data.total;
  const rb = await f.call('POST', `/nodes/${folder.id}/rollback-snapshot/${target.snapshot_id}`);
  t.is(rb.status, 200, JSON.stringify(rb.body));
  t.true(rb.body.data.changed);

  t.is((await content(a.id)).content, 'a1', 'changed node restored');
  const aVersions = (await f.call('GET', `/nodes/${a.id}/versions`)).body.data;
  t.is(aVersions.versions[0].operation, 'rollback');
  t.is(aVersions.total, 3, 'versions are never deleted');
  const bNow = await content(b.id);
  t.is(bNow.state, 'active', 'deleted node is back');
  t.is(bNow.path, 'snap/b.json');
  t.deepEqual(bNow.content, { b: 1 });
  t.is((await f.call('GET', `/nodes/${b.id}/versions`)).body.data.total, versionsBefore + 1, 'with its history');
  const cNow = await content(c.id);
  t.is(cNow.path, 'snap/sub/c.md', 'a trashed folder comes back with its content and ids');
  t.is(cNow.content, 'c1');
  t.is((await content(sub.id)).state, 'active');
  const dNow = await content(d.id);
  t.is(dNow.state, 'trashed', 'a node created since goes to the trash (recoverable)');
  const s = await content(sibling.id);
  t.is(s.content, 's2', 'the sibling outside is untouched');
  t.is(s.version, 2);

  const ls = await f.call('GET', `/content/${f.pid}/tree?path=snap`);
  const names = (n: { name: string; children?: unknown[] | null }): unknown => (n.children ? [n.name, n.children.map((k) => names(k as never))] : n.name);
  t.deepEqual(names(ls.body.data), ['snap', [['sub', ['c.md']], 'a.md', 'b.json']], 'the git tree matches');
  const trash = (await f.call('GET', `/content/${f.pid}/trash`)).body.data.items;
  t.true(trash.some((i: { id: string }) => i.id === d.id));
  t.false(trash.some((i: { id: string }) => i.id === b.id || i.id === sub.id));

  const after = (await f.call('GET', `/nodes/${folder.id}/snapshots`)).body.data.snapshots[0];
  t.is(after.files_count, 3, 'the rollback is a snapshot too');
  t.is(after.changed_count, 4);
  const again = await f.call('POST', `/collab/rollback-snapshot/${folder.id}/${target.snapshot_id}`);
  t.is(again.status, 200);
  t.false(again.body.data.changed, 'rolling back to the state it is in changes nothing');
});

test('snapshot errors: not a folder, unknown snapshot, paging', async (t) => {
  const folder = await f.make('folder', 'snap2');
  const md = await f.make('markdown', 'x.md', folder.id, 'x');
  t.is((await f.call('GET', `/nodes/${md.id}/snapshots`)).status, 422);
  t.is((await f.call('POST', `/nodes/${folder.id}/rollback-snapshot/${'0'.repeat(40)}`)).status, 404);
  t.is((await f.call('POST', `/nodes/${folder.id}/rollback-snapshot/nothex`)).status, 422);
  for (let i = 0; i < 3; i++) await f.call('PUT', `/nodes/${md.id}`, { content: String(i) });
  const page = (await f.call('GET', `/nodes/${folder.id}/snapshots?limit=2`)).body.data;
  t.is(page.snapshots.length, 2);
  t.is(page.total, 5);
  const next = (await f.call('GET', `/nodes/${folder.id}/snapshots?limit=2&before=${page.snapshots[1].project_version}`)).body.data;
  t.true(next.snapshots[0].project_version < page.snapshots[1].project_version);
});
