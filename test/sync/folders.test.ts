import test from 'ava';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { engineFor, folderWith, put, read, startWorld, tree, type World } from './helpers.ts';

let w: World;
test.before(async () => {
  w = await startWorld();
});
test.after.always(async () => {
  await w?.server.stop();
});

/** Two folders synced to the same subtree, both already in sync with it. */
async function pair(path: string, files: Record<string, string> = {}) {
  const a = folderWith(files);
  const b = folderWith();
  const ea = await engineFor(w, a, { path });
  const eb = await engineFor(w, b, { path });
  await ea.cycle();
  await eb.cycle();
  return { a, b, ea, eb };
}

test('two folders converge after creations, edits, deletions and renames on either side', async (t) => {
  const { a, b, ea, eb } = await pair('converge', { 'readme.md': '# readme\n', 'docs/guide.md': 'guide\n', 'data/x.json': '{\n  "x": 1\n}\n' });
  t.deepEqual(tree(b), tree(a));

  // Creations and edits on both sides.
  put(a, 'new-in-a.txt', 'from a');
  put(b, 'docs/new-in-b.md', 'from b\n');
  put(a, 'readme.md', '# readme\nedited in a\n');
  put(b, 'docs/guide.md', 'guide\nedited in b\n');
  await ea.cycle();
  await eb.cycle();
  await ea.cycle();
  t.deepEqual(tree(a), tree(b));
  t.is(read(a, 'docs/guide.md'), 'guide\nedited in b\n');
  t.is(read(b, 'readme.md'), '# readme\nedited in a\n');

  // Renames: a file in A, a folder in B.
  renameSync(join(a, 'readme.md'), join(a, 'README.md'));
  renameSync(join(b, 'docs'), join(b, 'manual'));
  const ra = await ea.cycle();
  t.deepEqual(ra.renamedRemote, [{ from: 'readme.md', to: 'README.md' }]);
  const rb = await eb.cycle();
  t.deepEqual(rb.renamedLocal, [{ from: 'readme.md', to: 'README.md' }]);
  await ea.cycle();
  t.deepEqual(tree(a), tree(b));
  t.true(existsSync(join(a, 'manual/guide.md')));
  t.false(existsSync(join(a, 'docs')));
  // A renamed node keeps its id and history in the project.
  const versions = await w.server.api('GET', `/content/${w.projectId}/versions?path=converge/README.md`, { token: w.token });
  t.true(versions.body.data.versions.length >= 2);

  // Deletions on both sides: remote deletions go to the project's trash, local ones to .cns/trash/.
  rmSync(join(a, 'new-in-a.txt'));
  rmSync(join(b, 'manual/new-in-b.md'));
  const da = await ea.cycle();
  t.deepEqual(da.deletedRemote, ['new-in-a.txt']);
  const db = await eb.cycle();
  t.deepEqual(db.deletedLocal, ['new-in-a.txt']);
  await ea.cycle();
  t.deepEqual(tree(a), tree(b));
  t.deepEqual(Object.keys(tree(a)).sort(), ['README.md', 'data/x.json', 'manual/guide.md']);
  const trashed = readdirSync(join(b, '.cns/trash'), { recursive: true }).map(String);
  t.true(trashed.some((p) => p.endsWith('new-in-a.txt')));
  const projectTrash = await w.server.api('GET', `/content/${w.projectId}/trash`, { token: w.token });
  t.true(projectTrash.body.data.items.some((i: { original_path: string }) => i.original_path === 'converge/new-in-a.txt'));
});

test('changes made in the project (API) reach the folder, folder moves included', async (t) => {
  const { a, ea } = await pair('api-side', { 'keep.md': 'keep\n', 'dir/one.md': 'one\n' });
  const api = (path: string, body: unknown) => w.server.api('POST', `/content/${w.projectId}/${path}`, { token: w.token, body });
  await api('write', { path: 'api-side/from-api.md', node_type: 'markdown', content: 'hello from the API\n' });
  await api('mv', { old_path: 'api-side/dir', new_path: 'api-side/moved' });
  await api('rm', { path: 'api-side/keep.md' });
  const r = await ea.cycle();
  t.deepEqual(r.renamedLocal, [{ from: 'dir/one.md', to: 'moved/one.md' }]);
  t.deepEqual(r.deletedLocal, ['keep.md']);
  t.deepEqual(tree(a), { 'from-api.md': 'hello from the API\n', 'moved/one.md': 'one\n' });
});

test('a concurrent edit that merges cleanly is merged on both sides', async (t) => {
  const base = 'line 1\nline 2\nline 3\nline 4\nline 5\n';
  const { a, b, ea, eb } = await pair('merge', { 'notes.md': base });
  put(a, 'notes.md', base.replace('line 1', 'line 1 (a)'));
  put(b, 'notes.md', base.replace('line 5', 'line 5 (b)'));
  await ea.cycle();
  const r = await eb.cycle();
  t.deepEqual(r.merged, ['notes.md']);
  t.deepEqual(r.conflicts, []);
  await ea.cycle();
  const merged = 'line 1 (a)\nline 2\nline 3\nline 4\nline 5 (b)\n';
  t.is(read(a, 'notes.md'), merged);
  t.is(read(b, 'notes.md'), merged);
});

test('a conflicting edit keeps the project version in place and the local one beside it', async (t) => {
  const { a, b, ea, eb } = await pair('conflict', { 'plan.md': 'plan: A\n' });
  put(a, 'plan.md', 'plan: from a\n');
  put(b, 'plan.md', 'plan: from b\n');
  await ea.cycle();
  const r = await eb.cycle();
  t.is(r.conflicts.length, 1);
  t.is(r.conflicts[0]!.path, 'plan.md');
  t.regex(r.conflicts[0]!.localCopy, /^plan\.conflict-\d{8}T\d{6}Z\.md$/);
  t.is(read(b, 'plan.md'), 'plan: from a\n');
  t.is(read(b, r.conflicts[0]!.localCopy), 'plan: from b\n');
  await ea.cycle();
  t.deepEqual(tree(a), tree(b));
});

test('edits made offline are reconciled on the next run; an unreachable server fails the run', async (t) => {
  const { a, b, ea, eb } = await pair('offline', { 'a.md': 'a\n', 'b.md': 'b\n', 'c.md': 'c\n' });
  const configFile = join(a, '.cns/config.json');
  const good = readFileSync(configFile, 'utf8');
  put(a, 'a.md', 'a edited offline\n');
  put(a, 'offline-new.md', 'new while offline\n');
  rmSync(join(a, 'c.md'));
  put(b, 'b.md', 'b edited meanwhile\n');
  await eb.cycle();
  // The server is unreachable for A: the run fails and nothing is lost.
  writeFileSync(configFile, good.replace(/"server": "[^"]+"/, '"server": "http://127.0.0.1:9"'));
  const offline = await engineFor(w, a);
  await t.throwsAsync(() => offline.cycle(), { message: /cannot reach/ });
  writeFileSync(configFile, good);
  const back = await engineFor(w, a);
  await back.cycle();
  await eb.cycle();
  t.deepEqual(tree(a), { 'a.md': 'a edited offline\n', 'b.md': 'b edited meanwhile\n', 'offline-new.md': 'new while offline\n' });
  t.deepEqual(tree(b), tree(a));
  void ea;
});

test('.cnsignore is honoured both ways', async (t) => {
  const { a, b, ea, eb } = await pair('ignored', { '.cnsignore': '*.log\nbuild/\n!keep.log\n', 'src/main.md': 'main\n' });
  put(a, 'debug.log', 'noise');
  put(a, 'keep.log', 'kept');
  put(a, 'build/out.md', 'artifact');
  put(a, '.git/HEAD', 'ref: refs/heads/main');
  await ea.cycle();
  await eb.cycle();
  t.deepEqual(Object.keys(tree(b)).sort(), ['.cnsignore', 'keep.log', 'src/main.md']);
  const remote = await w.server.api('GET', `/content/${w.projectId}/tree?path=ignored`, { token: w.token });
  const names = JSON.stringify(remote.body.data);
  t.false(names.includes('debug.log'));
  t.false(names.includes('build'));
  // A file that exists in the project but is ignored here is not downloaded.
  await w.server.api('POST', `/content/${w.projectId}/write`, { token: w.token, body: { path: 'ignored/remote.log', node_type: 'file', content: Buffer.from('x').toString('base64') } });
  await eb.cycle();
  t.false(existsSync(join(b, 'remote.log')));
});

test('a file edited here but deleted in the project is kept and uploaded again', async (t) => {
  const { a, b, ea, eb } = await pair('kept', { 'doc.md': 'v1\n' });
  rmSync(join(a, 'doc.md'));
  await ea.cycle();
  put(b, 'doc.md', 'v2 edited in b\n');
  const r = await eb.cycle();
  t.deepEqual(r.keptLocal, ['doc.md']);
  await ea.cycle();
  t.is(read(a, 'doc.md'), 'v2 edited in b\n');
});

test('a file the server refuses is reported and the others still go up', async (t) => {
  const small = await startWorld({ maxContentBytes: 1024 });
  t.teardown(() => small.server.stop());
  const dir = folderWith({ 'ok.md': 'fine\n', 'big.bin': Buffer.alloc(4096, 7), 'also-ok.txt': 'fine too' });
  const engine = await engineFor(small, dir);
  const r = await engine.cycle();
  t.deepEqual(r.uploaded.sort(), ['also-ok.txt', 'ok.md']);
  t.is(r.errors.length, 1);
  t.regex(r.errors[0]!, /^big\.bin: /);
  t.true(existsSync(join(dir, 'big.bin')), 'the local file stays');
});

test('JSON edited on both sides merges whatever the local formatting', async (t) => {
  const { a, b, ea, eb } = await pair('json-merge', { 'settings.json': '{"retries":1,"timeout":30}' });
  put(b, 'settings.json', read(b, 'settings.json').replace('30', '60'));
  await eb.cycle();
  put(a, 'settings.json', '{"retries":3,"timeout":30}');
  const r = await ea.cycle();
  t.deepEqual(r.merged, ['settings.json']);
  t.deepEqual(JSON.parse(read(a, 'settings.json')), { retries: 3, timeout: 60 });
  await eb.cycle();
  t.deepEqual(JSON.parse(read(b, 'settings.json')), { retries: 3, timeout: 60 });
});

test('moves into and out of the synced subtree appear and disappear here', async (t) => {
  const { a, ea } = await pair('inside', { 'stays.md': 'stays\n' });
  const api = (path: string, body: unknown) => w.server.api('POST', `/content/${w.projectId}/${path}`, { token: w.token, body });
  await api('write', { path: 'outside/incoming.md', node_type: 'markdown', content: 'moved in\n' });
  await api('write', { path: 'outside/dir/deep.md', node_type: 'markdown', content: 'deep\n' });
  await api('mv', { old_path: 'outside/incoming.md', new_path: 'inside/incoming.md' });
  await api('mv', { old_path: 'outside/dir', new_path: 'inside/dir' });
  await ea.cycle();
  t.deepEqual(tree(a), { 'stays.md': 'stays\n', 'incoming.md': 'moved in\n', 'dir/deep.md': 'deep\n' });
  await api('mv', { old_path: 'inside/dir', new_path: 'outside/dir-again' });
  await api('mv', { old_path: 'inside/stays.md', new_path: 'outside/left.md' });
  const r = await ea.cycle();
  t.deepEqual(r.deletedLocal.sort(), ['dir/deep.md', 'stays.md']);
  t.deepEqual(tree(a), { 'incoming.md': 'moved in\n' });
});
