import test from 'ava';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cns, cnsProcess, folderWith, put, read, spawnCns, startWorld, tree, until, type World } from './helpers.ts';

let w: World;
test.before(async () => {
  w = await startWorld();
});
test.after.always(async () => {
  await w?.server.stop();
});

test('cns sync: first run bootstraps, later runs are no-ops; --json reports; the key file is private', async (t) => {
  const dir = folderWith({ 'a.md': '# a\n', 'sub/b.txt': 'b' });
  const first = await cns(w, ['sync', dir, '--project', w.projectId, '--path', 'cli-basic']);
  t.is(first.code, 0, first.stderr);
  t.regex(first.stdout, /↑ 2 uploaded/);
  t.regex(first.stdout, /In sync: /);
  t.is(statSync(join(dir, '.cns/key')).mode & 0o777, 0o600);
  const config = JSON.parse(readFileSync(join(dir, '.cns/config.json'), 'utf8'));
  t.is(config.scopePath, 'cli-basic');
  t.false(readFileSync(join(dir, '.cns/config.json'), 'utf8').includes('cns_'), 'the key is not in the config');

  const again = await cns(w, ['sync', dir]);
  t.is(again.code, 0, again.stderr);
  t.regex(again.stdout, /Already in sync/);

  put(dir, 'a.md', '# a\nmore\n');
  const json = await cns(w, ['sync', dir, '--json']);
  t.is(json.code, 0, json.stderr);
  const report = JSON.parse(json.stdout);
  t.true(report.in_sync);
  t.deepEqual(report.uploaded, ['a.md']);
  t.deepEqual(report.conflicts, []);

  const runs = await w.server.api('GET', `/sync/syncs/${config.syncId}/runs`, { token: w.token });
  t.true(runs.body.data.runs.length >= 3);
  t.is(runs.body.data.runs[0].status, 'succeeded');
});

test('cns sync: a conflict exits 0 with both versions kept and listed', async (t) => {
  const a = folderWith({ 'doc.md': 'start\n' });
  const b = folderWith();
  t.is((await cns(w, ['sync', a, '--project', w.projectId, '--path', 'cli-conflict'])).code, 0);
  t.is((await cns(w, ['sync', b, '--project', w.projectId, '--path', 'cli-conflict'])).code, 0);
  put(a, 'doc.md', 'edited in a\n');
  put(b, 'doc.md', 'edited in b\n');
  t.is((await cns(w, ['sync', a])).code, 0);
  const r = await cns(w, ['sync', b, '--json']);
  t.is(r.code, 0, r.stderr);
  const report = JSON.parse(r.stdout);
  t.is(report.conflicts.length, 1);
  t.is(read(b, 'doc.md'), 'edited in a\n');
  t.is(read(b, report.conflicts[0].local_copy), 'edited in b\n');
  const human = await cns(w, ['sync', a]);
  t.is(human.code, 0);
  t.is(read(a, report.conflicts[0].local_copy), 'edited in b\n');
});

test('cns sync: exit codes for usage, sign-in, missing project and unreachable server', async (t) => {
  const dir = folderWith({ 'x.md': 'x' });
  const noToken = await cns(w, ['sync', dir, '--project', w.projectId], { CNS_TOKEN: '' });
  t.is(noToken.code, 3, noToken.stderr);
  const missing = await cns(w, ['sync', dir, '--project', 'prj_doesnotexist']);
  t.is(missing.code, 4, missing.stderr);
  t.false(existsSync(join(dir, '.cns/config.json')));
  t.is((await cns(w, ['sync', dir, '--project', w.projectId, '--path', 'cli-codes'])).code, 0);
  const otherPath = await cns(w, ['sync', dir, '--path', 'elsewhere']);
  t.is(otherPath.code, 2);
  t.regex(otherPath.stderr, /already synced/);
  const cfg = join(dir, '.cns/config.json');
  const good = readFileSync(cfg, 'utf8');
  const { writeFileSync } = await import('node:fs');
  writeFileSync(cfg, good.replace(/"server": "[^"]+"/, '"server": "http://127.0.0.1:9"'));
  const down = await cns(w, ['sync', dir]);
  t.is(down.code, 1);
  t.regex(down.stderr, /cannot reach/);
  writeFileSync(cfg, good);
});

test('cns sync --watch on two clients: edits arrive live both ways', async (t) => {
  const a = folderWith({ 'shared.md': 'v0\n' });
  const b = folderWith();
  t.is((await cns(w, ['sync', a, '--project', w.projectId, '--path', 'cli-watch'])).code, 0);
  t.is((await cns(w, ['sync', b, '--project', w.projectId, '--path', 'cli-watch'])).code, 0);
  const wa = spawnCns(w, ['sync', a, '--watch']);
  const wb = spawnCns(w, ['sync', b, '--watch']);
  const outputs = { a: '', b: '' };
  wa.stderr!.on('data', (c: Buffer) => (outputs.a += c.toString()));
  wb.stderr!.on('data', (c: Buffer) => (outputs.b += c.toString()));
  const stopped = Promise.all([wa, wb].map((c) => new Promise<number | null>((r) => c.once('exit', (code) => r(code)))));
  t.teardown(() => {
    wa.kill('SIGTERM');
    wb.kill('SIGTERM');
  });
  await until('both watchers to start', () => outputs.a.includes('Watching') && outputs.b.includes('Watching'), 30_000);
  const second = await cns(w, ['sync', a]);
  t.is(second.code, 2, 'one sync per folder at a time');
  t.regex(second.stderr, /another cns sync \(pid \d+\) is working on/);

  put(a, 'shared.md', 'v1 from a\n');
  await until('a → b', () => existsSync(join(b, 'shared.md')) && read(b, 'shared.md') === 'v1 from a\n');
  put(b, 'new/from-b.md', 'hello from b\n');
  await until('b → a (new file)', () => existsSync(join(a, 'new/from-b.md')));
  rmSync(join(a, 'shared.md'));
  await until('a → b (deletion)', () => !existsSync(join(b, 'shared.md')));
  // A change made in the project through the API arrives through the feed too.
  await w.server.api('POST', `/content/${w.projectId}/write`, { token: w.token, body: { path: 'cli-watch/api.md', node_type: 'markdown', content: 'from the API\n' } });
  await until('API → both', () => existsSync(join(a, 'api.md')) && existsSync(join(b, 'api.md')));
  await until('folders equal', () => JSON.stringify(tree(a)) === JSON.stringify(tree(b)));

  wa.kill('SIGTERM');
  wb.kill('SIGTERM');
  t.deepEqual(await stopped, [0, 0]);
});

test('a 10,000-file first sync', async (t) => {
  const dir = folderWith();
  for (let i = 0; i < 10_000; i++) put(dir, `d${i % 100}/file-${i}.md`, `# file ${i}\n`);
  const started = Date.now();
  const r = await cnsProcess(w, ['sync', dir, '--project', w.projectId, '--path', 'cli-big', '--json']);
  const seconds = (Date.now() - started) / 1000;
  t.is(r.code, 0, r.stderr);
  t.is(JSON.parse(r.stdout).uploaded.length, 10_000);
  t.log(`first sync of 10,000 files: ${seconds.toFixed(1)} s`);
  const stats = await w.server.api('GET', `/content/${w.projectId}/tree?path=cli-big/d7&max_depth=1`, { token: w.token });
  t.is(stats.body.data.children.length, 100);
  const other = folderWith();
  const down = await cnsProcess(w, ['sync', other, '--project', w.projectId, '--path', 'cli-big', '--json']);
  t.is(down.code, 0, down.stderr);
  t.is(JSON.parse(down.stdout).downloaded.length, 10_000);
  t.is(read(other, 'd42/file-4242.md'), '# file 4242\n');
});
