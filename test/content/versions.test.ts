import test from 'ava';
import { alice, bot, errorCode, fixture } from './helpers.ts';

const P = 'proj';

test('versions: newest first, limit, sinceVersion, old content', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  for (let i = 1; i <= 7; i++) await store.write(P, i % 2 ? alice : bot, { path: 'a.md', type: 'markdown', content: `v${i}` });
  const all = store.listVersions(P, { path: 'a.md' });
  t.is(all.total, 7);
  t.is(all.currentVersion, 7);
  t.deepEqual(all.versions.map((v) => v.version), [7, 6, 5, 4, 3, 2, 1]);
  t.deepEqual(store.listVersions(P, { path: 'a.md' }, { limit: 2 }).versions.map((v) => v.version), [7, 6]);
  t.deepEqual(store.listVersions(P, { path: 'a.md' }, { sinceVersion: 5 }).versions.map((v) => v.version), [7, 6]);
  const v3 = await store.versionContent(P, { path: 'a.md' }, 3);
  t.is(v3.bytes.toString(), 'v3');
  t.like(v3.version, { actorType: 'user', actorId: 'u_alice', projectVersion: 3 });
  t.is(store.getVersion(P, { path: 'a.md' }, 2).author, 'agent:bot');
  t.is(await errorCode(store.versionContent(P, { path: 'a.md' }, 99)), 'NOT_FOUND');
});

test('node rollback adds a version with the old content and type', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  await store.write(P, alice, { path: 'doc', type: 'markdown', content: 'first' });
  await store.write(P, alice, { path: 'doc', type: 'json', content: { second: true } });
  const r = await store.rollbackNode(P, bot, { path: 'doc' }, 1);
  t.true(r.changed);
  t.is(r.node.version, 3);
  t.is(r.node.type, 'markdown');
  t.is((await store.readValue(P, { path: 'doc' })).value, 'first');
  t.deepEqual(store.listVersions(P, { path: 'doc' }).versions.map((v) => v.operation), ['rollback', 'update', 'create']);
  const same = await store.rollbackNode(P, bot, { path: 'doc' }, 3);
  t.false(same.changed);
  t.is(await errorCode(store.rollbackNode(P, bot, { path: 'doc' }, 9)), 'NOT_FOUND');
  await store.mkdir(P, alice, 'folder');
  t.is(await errorCode(store.rollbackNode(P, bot, { path: 'folder' }, 1)), 'VALIDATION_ERROR');
});

test('project rollback: one commit, changed nodes get versions, new nodes go to the trash', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  const a = await store.write(P, alice, { path: 'docs/a.md', type: 'markdown', content: 'a1' }); // pv 1
  const b = await store.write(P, alice, { path: 'docs/b.md', type: 'markdown', content: 'b1' }); // pv 2
  const target = store.projectVersion(P);
  await store.write(P, alice, { path: 'docs/a.md', type: 'markdown', content: 'a2' }); // pv 3
  await store.move(P, alice, 'docs/b.md', 'moved/b.md'); // pv 4
  const movedFolder = store.getByPath(P, 'moved');
  const c = await store.write(P, alice, { path: 'docs/c.md', type: 'markdown', content: 'c' }); // pv 5
  await store.remove(P, alice, 'docs/a.md'); // pv 6
  const r = await store.rollbackProject(P, bot, target);
  t.true(r.changed);
  t.is(r.projectVersion, 7);
  t.is(store.getByPath(P, 'docs/a.md').id, a.node.id);
  t.is((await store.readValue(P, { path: 'docs/a.md' })).value, 'a1');
  t.is(store.getByPath(P, 'docs/b.md').id, b.node.id);
  t.is(store.findByPath(P, 'docs/c.md'), null);
  t.deepEqual(store.listTrash(P).map((i) => [i.id, i.originalPath]).sort(), [[c.node.id, 'docs/c.md'], [movedFolder.id, 'moved']].sort());
  t.deepEqual(store.listVersions(P, { path: 'docs/a.md' }).versions.map((v) => v.operation), ['rollback', 'trash', 'update', 'create']);
  t.is(store.getByPath(P, 'docs/a.md').version, 4);
  t.deepEqual(store.listChildren(P).map((n) => n.name), ['docs']);
  const report = await store.reindexProject(P);
  t.deepEqual(report.differences, []);
  t.is(await errorCode(store.rollbackProject(P, bot, 99)), 'NOT_FOUND');
  t.false((await store.rollbackProject(P, bot, 7)).changed);
});

test('folder snapshots and folder rollback: one commit, nothing outside changes, reindex equal', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  const folder = (await store.mkdir(P, alice, 'snap')).node;
  await store.bulkWrite(P, alice, [
    { path: 'snap/a.md', type: 'markdown', content: 'a1' },
    { path: 'snap/sub/c.md', type: 'markdown', content: 'c1' },
  ]);
  await store.write(P, alice, { path: 'sibling.md', type: 'markdown', content: 's1' });
  const [target] = store.folderSnapshots(P, folder.id).snapshots;
  t.is(target.filesCount, 2);
  const sub = store.getByPath(P, 'snap/sub');
  await store.write(P, alice, { path: 'snap/a.md', type: 'markdown', content: 'a2' });
  await store.remove(P, alice, 'snap/sub');
  const d = await store.write(P, alice, { path: 'snap/d.md', type: 'markdown', content: 'd' });
  await store.write(P, alice, { path: 'sibling.md', type: 'markdown', content: 's2' });

  const r = await store.rollbackFolder(P, bot, folder.id, { commitId: target.snapshotId });
  t.true(r.changed);
  t.is((await store.readValue(P, { path: 'snap/a.md' })).value, 'a1');
  t.is(store.getByPath(P, 'snap/sub').id, sub.id);
  t.is((await store.readValue(P, { path: 'snap/sub/c.md' })).value, 'c1');
  t.is(store.getById(P, d.node.id).state, 'trashed');
  t.is((await store.readValue(P, { path: 'sibling.md' })).value, 's2');
  t.false((await store.rollbackFolder(P, bot, folder.id, { projectVersion: target.projectVersion })).changed);
  t.deepEqual((await store.reindexProject(P)).differences, []);
  t.is(await errorCode(store.rollbackFolder(P, bot, folder.id, { commitId: 'nothex' })), 'VALIDATION_ERROR');
  t.is(await errorCode(store.rollbackFolder(P, bot, folder.id, { commitId: '0'.repeat(40) })), 'NOT_FOUND');
  t.is(await errorCode(async () => store.folderSnapshots(P, d.node.id)), 'VALIDATION_ERROR');
});
