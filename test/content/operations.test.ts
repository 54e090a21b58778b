import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { alice, bot, errorCode, fixture } from './helpers.ts';

const P = 'proj';

test('write creates parents, reads back each type, identical write is unchanged', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  const md = await store.write(P, alice, { path: 'docs/guides/intro.md', type: 'markdown', content: '# Intro\n' });
  t.true(md.changed);
  t.is(md.node.version, 1);
  t.is(md.node.type, 'markdown');
  t.is(md.node.mimeType, 'text/markdown');
  t.is(md.projectVersion, 1);
  t.is(store.getByPath(P, 'docs').type, 'folder');
  t.is(store.getByPath(P, 'docs/guides').childrenCount, 1);
  t.is(md.node.parentId, store.getByPath(P, 'docs/guides').id);

  const js = await store.write(P, bot, { path: 'data.json', type: 'json', content: { b: 1, a: [1, 2] } });
  const { bytes } = await store.readContent(P, { path: 'data.json' });
  t.is(bytes.toString(), '{\n  "b": 1,\n  "a": [\n    1,\n    2\n  ]\n}\n');
  t.deepEqual((await store.readValue(P, { id: js.node.id })).value, { b: 1, a: [1, 2] });

  const bin = Buffer.from([0, 1, 2, 255]);
  await store.write(P, alice, { path: 'img.png', type: 'file', content: bin });
  t.deepEqual((await store.readContent(P, { path: 'img.png' })).bytes, bin);
  t.is(store.getByPath(P, 'img.png').mimeType, 'image/png');

  const again = await store.write(P, alice, { path: 'docs/guides/intro.md', type: 'markdown', content: '# Intro\n' });
  t.false(again.changed);
  t.is(again.commitId, null);
  t.is(again.node.version, 1);
  t.is(store.projectVersion(P), 3);
  t.deepEqual(
    store.listChildren(P).map((n) => n.name),
    ['docs', 'data.json', 'img.png'],
  );
});

test('commit author and trailers name the actor and the touched nodes', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const r = await f.store.write(f.dir ? P : P, bot, { path: 'a.md', type: 'markdown', content: 'x', message: 'my message' });
  const log = execFileSync('git', ['log', '-1', '--format=%an|%ae|%B'], { cwd: join(f.dir, `${P}.git`) }).toString();
  t.true(log.startsWith('agent:bot|agent+c_bot@cns.invalid|my message\n\nCns-Actor: agent c_bot agent:bot\n'));
  t.true(log.includes(`Cns-Node: ${r.node.id} 1 markdown create - 1 ${r.node.contentHash} a.md`));
  const v = f.store.listVersions(P, { path: 'a.md' }).versions[0];
  t.like(v, { actorType: 'agent', actorId: 'c_bot', author: 'agent:bot', message: 'my message', operation: 'create', size: 1 });
});

test('baseVersion conflicts leave nothing changed', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  await store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'one' });
  await store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'two', baseVersion: 1 });
  const e = await t.throwsAsync(store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'three', baseVersion: 1 }));
  t.is((e as { code?: string }).code, 'CONFLICT');
  t.is((e as { details?: { current_version?: number } }).details?.current_version, 2);
  const e2 = await t.throwsAsync(store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'x', baseVersion: 0 }));
  t.is((e2 as { code?: string }).code, 'CONFLICT');
  await store.write(P, alice, { path: 'new.md', type: 'markdown', content: 'x', baseVersion: 0 });
  t.is((await store.readValue(P, { path: 'a.md' })).value, 'two');
  t.is(store.projectVersion(P), 3);
});

test('mkdir keeps empty folders with a hidden placeholder', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  const r = await store.mkdir(P, alice, 'a/b/c');
  t.true(r.changed);
  t.false((await store.mkdir(P, alice, 'a/b')).changed);
  const files = execFileSync('git', ['ls-tree', '-r', '--name-only', 'main'], { cwd: join(f.dir, `${P}.git`) }).toString();
  t.is(files, 'a/b/c/.cnskeep\n');
  t.deepEqual(store.listChildren(P, 'a/b/c'), []);
  await store.write(P, alice, { path: 'a/b/c/x.md', type: 'markdown', content: 'x' });
  const after = execFileSync('git', ['ls-tree', '-r', '--name-only', 'main'], { cwd: join(f.dir, `${P}.git`) }).toString();
  t.is(after, 'a/b/c/x.md\n');
  await store.write(P, alice, { path: 'file.md', type: 'markdown', content: 'x' });
  t.is(await errorCode(store.mkdir(P, alice, 'file.md')), 'CONFLICT');
  t.is(await errorCode(store.mkdir(P, alice, 'file.md/sub')), 'CONFLICT');
});

test('move keeps ids and histories of everything inside a folder', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  const a = await store.write(P, alice, { path: 'src/deep/a.md', type: 'markdown', content: 'a1' });
  await store.write(P, alice, { path: 'src/deep/a.md', type: 'markdown', content: 'a2' });
  const folder = store.getByPath(P, 'src');
  const moved = await store.move(P, alice, 'src', 'dst/inner');
  t.is(moved.node.id, folder.id);
  const n = store.getByPath(P, 'dst/inner/deep/a.md');
  t.is(n.id, a.node.id);
  t.is(n.version, 2);
  t.is(store.findByPath(P, 'src'), null);
  t.deepEqual(store.listVersions(P, { id: n.id }).versions.map((v) => v.version), [2, 1]);
  const file = await store.move(P, alice, 'dst/inner/deep/a.md', 'b.md');
  t.is(file.node.version, 3);
  t.deepEqual(store.listVersions(P, { path: 'b.md' }).versions.map((v) => [v.version, v.operation, v.path]), [
    [3, 'move', 'b.md'],
    [2, 'update', 'src/deep/a.md'],
    [1, 'create', 'src/deep/a.md'],
  ]);
  await store.write(P, alice, { path: 'c.md', type: 'markdown', content: 'c' });
  t.is(await errorCode(store.move(P, alice, 'b.md', 'c.md')), 'CONFLICT');
  t.is(await errorCode(store.move(P, alice, 'dst', 'dst/x')), 'VALIDATION_ERROR');
  t.is(await errorCode(store.move(P, alice, 'nope.md', 'x.md')), 'NOT_FOUND');
  const logs = store.auditLogs(P, { id: n.id });
  t.like(logs[0], { action: 'move', path: 'b.md', details: { old_path: 'dst/inner/deep/a.md', new_path: 'b.md', version: 3 } });
});

test('soft remove goes to the trash with id and history; restore and permanent removal', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  const a = await store.write(P, alice, { path: 'notes/a.md', type: 'markdown', content: 'a' });
  await store.write(P, alice, { path: 'notes/b.md', type: 'markdown', content: 'b' });
  await store.remove(P, bot, 'notes');
  t.is(store.findByPath(P, 'notes'), null);
  t.deepEqual(store.listChildren(P).map((n) => n.name), []);
  const [item] = store.listTrash(P);
  t.like(item, { originalPath: 'notes', name: 'notes', type: 'folder', deletedBy: 'agent:bot' });
  t.true(item.trashPath.startsWith('.trash/'));
  const inTrash = store.getByPath(P, `${item.trashPath}/a.md`);
  t.is(inTrash.id, a.node.id);
  t.is(inTrash.state, 'trashed');
  t.deepEqual(store.listChildren(P, '.trash').map((n) => n.path), [item.trashPath]);

  await store.write(P, alice, { path: 'notes', type: 'markdown', content: 'taken' });
  t.is(await errorCode(store.restore(P, alice, item.trashPath, 'notes')), 'CONFLICT');
  const restored = await store.restore(P, alice, item.trashPath, 'back/notes');
  t.is(restored.node.state, 'active');
  t.is(store.getByPath(P, 'back/notes/a.md').id, a.node.id);
  t.deepEqual(store.listTrash(P), []);
  t.deepEqual(store.listVersions(P, { path: 'back/notes' }).versions.map((v) => v.operation), ['restore', 'trash', 'create']);

  await store.remove(P, alice, 'back/notes/a.md', { permanent: true });
  t.is(store.findByPath(P, 'back/notes/a.md'), null);
  t.is(await errorCode(async () => store.getById(P, a.node.id)), 'NOT_FOUND');
  await store.remove(P, alice, 'back/notes/b.md');
  const trashPath = store.listTrash(P)[0].trashPath;
  await store.remove(P, alice, trashPath);
  t.deepEqual(store.listTrash(P), []);
  t.is(await errorCode(store.remove(P, alice, 'missing')), 'NOT_FOUND');
});

test('bulk write is one commit, all or nothing', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  await store.write(P, alice, { path: 'taken', type: 'markdown', content: 'file' });
  const bad = await t.throwsAsync(
    store.bulkWrite(P, alice, [
      { path: 'x/1.md', type: 'markdown', content: '1' },
      { path: 'taken/2.md', type: 'markdown', content: '2' },
    ]),
  );
  t.is((bad as Error & { code: string }).code, 'CONFLICT');
  const invalid = await t.throwsAsync(
    store.bulkWrite(P, alice, [
      { path: 'x/1.md', type: 'markdown', content: '1' },
      { path: 'x/../2.md', type: 'markdown', content: '2' },
    ]),
  );
  t.is((invalid as Error & { details: { index: number } }).details.index, 1);
  t.is(store.findByPath(P, 'x/1.md'), null);
  t.is(store.projectVersion(P), 1);
  const r = await store.bulkWrite(P, alice, [
    { path: 'x/1.md', type: 'markdown', content: '1' },
    { path: 'x/y/2.json', type: 'json', content: [2] },
  ], { message: 'import' });
  t.true(r.changed);
  t.is(r.projectVersion, 2);
  t.deepEqual(r.nodes.map((n) => n.path), ['x', 'x/1.md', 'x/y', 'x/y/2.json']);
  t.is(store.listVersions(P, { path: 'x/y/2.json' }).versions[0].message, 'import');
});

test('bad input is rejected with the right code and changes nothing', async (t) => {
  const f = fixture({ maxContentBytes: 100 });
  t.teardown(f.cleanup);
  const { store } = f;
  await store.write(P, alice, { path: 'ok.md', type: 'markdown', content: 'ok' });
  const code = async (p: Promise<unknown>) => await errorCode(p);
  const w = (path: string, more: object = {}) =>
    store.write(P, alice, { path, type: 'markdown', content: 'x', ...more } as never);
  for (const p of ['../x', '/abs', 'a//b', 'a/./b', '.git/config', 'a/.GIT/b', 'nul\0', 'ctl\u0007', 'x'.repeat(256), ('a/'.repeat(600)) + 'b', '.trash/x', '.trash', '', 'a/.cnskeep']) {
    t.is(await code(w(p)), 'VALIDATION_ERROR', p.slice(0, 20));
  }
  t.is(await code(w('ok.md/child.md')), 'CONFLICT');
  await store.mkdir(P, alice, 'dir');
  t.is(await code(w('dir')), 'CONFLICT');
  t.is(await code(store.write(P, alice, { path: 'j.json', type: 'json', content: 'string' }) as Promise<unknown>), 'VALIDATION_ERROR');
  t.is(await code(store.write(P, alice, { path: 'j.json', type: 'folder' as never, content: {} })), 'VALIDATION_ERROR');
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  t.is(await code(store.write(P, alice, { path: 'j.json', type: 'json', content: circular })), 'VALIDATION_ERROR');
  t.is(await code(store.write(P, alice, { path: 'j.json', type: 'json', content: { big: 1n } })), 'VALIDATION_ERROR');
  t.is(await code(store.write(P, alice, { path: 'big.md', type: 'markdown', content: 'x'.repeat(101) })), 'PAYLOAD_TOO_LARGE');
  t.is(await code(store.commit('../evil', alice, [{ op: 'mkdir', path: 'x' }])), 'VALIDATION_ERROR');
  t.is(await code(store.move(P, alice, 'ok.md', '.trash/ok.md')), 'VALIDATION_ERROR');
  t.is(store.projectVersion(P), 2);
  t.deepEqual(store.listChildren(P).map((n) => n.name), ['dir', 'ok.md']);
});

test('tree, stats and audit logs', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  await store.bulkWrite(P, alice, [
    { path: 'a/b/c.md', type: 'markdown', content: 'c' },
    { path: 'a/d.json', type: 'json', content: {} },
    { path: 'e.bin', type: 'file', content: Buffer.alloc(10) },
  ]);
  await store.remove(P, alice, 'e.bin');
  const full = store.tree(P);
  t.deepEqual(full.children!.map((c) => c.name), ['a']);
  t.deepEqual(full.children![0].children!.map((c) => c.name), ['b', 'd.json']);
  t.deepEqual(full.children![0].children![0].children!.map((c) => c.name), ['c.md']);
  const shallow = store.tree(P, 'a', 1);
  t.deepEqual(shallow.children!.map((c) => [c.name, c.children === null]), [['b', true], ['d.json', true]]);
  const stats = store.stats(P);
  t.deepEqual(stats.nodesByType, { folder: 2, json: 1, markdown: 1, file: 0 });
  t.is(stats.trashedCount, 1);
  t.is(stats.trashBytes, 10);
  t.is(stats.commitCount, 2);
  t.is(stats.lastChange?.message, 'trash e.bin');
  const byPath = store.auditLogs(P, { path: 'a/d.json' });
  t.like(byPath[0], { action: 'create', actorType: 'user', actorId: 'u_alice', path: 'a/d.json', details: { version: 1 } });
});

test('fsync mode and a small project cache keep working across evictions', async (t) => {
  const f = fixture({ fsync: true, maxCachedProjects: 2, blobCacheBytes: 1024 });
  t.teardown(f.cleanup);
  const { store } = f;
  for (let round = 0; round < 3; round++) {
    for (let p = 0; p < 5; p++) {
      await store.write(`p${p}`, alice, { path: 'dir/file.md', type: 'markdown', content: `p${p} r${round}` });
    }
  }
  for (let p = 0; p < 5; p++) {
    t.is((await store.readValue(`p${p}`, { path: 'dir/file.md' })).value, `p${p} r2`);
    t.is(store.getByPath(`p${p}`, 'dir/file.md').version, 3);
    t.is((await store.versionContent(`p${p}`, { path: 'dir/file.md' }, 1)).bytes.toString(), `p${p} r0`);
  }
  t.deepEqual(store.listProjects(), ['p0', 'p1', 'p2', 'p3', 'p4']);
});

test('a commit reaching into trees not read yet (fresh process) loads them and succeeds', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  await f.store.bulkWrite(P, alice, [
    { path: 'a/x/one.md', type: 'markdown', content: '1' },
    { path: 'a/x/deeper/two.md', type: 'markdown', content: '2' },
    { path: 'keep/three.md', type: 'markdown', content: '3' },
  ]);
  const store = await f.reopen();
  const r = await store.commit(P, alice, [
    { op: 'move', from: 'a', to: 'b' },
    { op: 'write', path: 'b/x/deeper/new.md', type: 'markdown', content: 'new' },
    { op: 'write', path: 'b/x/one.md', type: 'markdown', content: '1b' },
  ]);
  t.true(r.changed);
  t.is((await store.readValue(P, { path: 'b/x/deeper/new.md' })).value, 'new');
  t.is((await store.readValue(P, { path: 'b/x/one.md' })).value, '1b');
  t.is((await store.readValue(P, { path: 'b/x/deeper/two.md' })).value, '2');
  const files = execFileSync('git', ['ls-tree', '-r', '--name-only', 'main'], { cwd: join(f.dir, `${P}.git`) }).toString();
  t.is(files, 'b/x/deeper/new.md\nb/x/deeper/two.md\nb/x/one.md\nkeep/three.md\n');
  t.deepEqual((await store.reindexProject(P)).differences, []);
});

test('deleteProject removes the repository and the index rows, and the id can be used again', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  await store.write('gone', alice, { path: 'a.md', type: 'markdown', content: 'a' });
  await store.write('kept', alice, { path: 'b.md', type: 'markdown', content: 'b' });
  await store.deleteProject('gone');
  t.deepEqual(store.listProjects(), ['kept']);
  t.is(store.findByPath('gone', 'a.md'), null);
  t.is(store.projectVersion('gone'), 0);
  t.is((f.db.prepare(`SELECT COUNT(*) AS n FROM content_audit_log WHERE project_id = 'gone'`).get() as { n: number }).n, 0);
  // A deleted project takes no writes (nothing may recreate it behind the deletion) until it is created again.
  t.is(await errorCode(store.write('gone', alice, { path: 'a.md', type: 'markdown', content: 'late' })), 'NOT_FOUND');
  t.false(existsSync(join(f.dir, 'gone.git')));
  await store.createProject('gone');
  const again = await store.write('gone', alice, { path: 'a.md', type: 'markdown', content: 'new' });
  t.is(again.node.version, 1);
  t.is(again.projectVersion, 1);
  t.is((await store.readValue('kept', { path: 'b.md' })).value, 'b');
});
