import test from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { alice, fixture, until } from './helpers.ts';

const P = 'proj';

test('100 concurrent writers to one file: none lost, versions contiguous, each readable', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  const results = await Promise.all(
    Array.from({ length: 100 }, (_, i) => store.write(P, alice, { path: 'shared.md', type: 'markdown', content: `writer ${i}` })),
  );
  t.deepEqual(results.map((r) => r.node.version).sort((a, b) => a - b), Array.from({ length: 100 }, (_, i) => i + 1));
  const list = store.listVersions(P, { path: 'shared.md' }, { limit: 1000 });
  t.is(list.total, 100);
  t.deepEqual(list.versions.map((v) => v.version), Array.from({ length: 100 }, (_, i) => 100 - i));
  for (const r of results) {
    const { bytes } = await store.versionContent(P, { path: 'shared.md' }, r.node.version);
    t.is(bytes.toString(), `writer ${results.indexOf(r)}`);
  }
  t.is(store.projectVersion(P), 100);
});

test('100 concurrent writers to different files, with invalid calls failing alone', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  await store.write(P, alice, { path: 'blocker', type: 'markdown', content: 'a file' });
  const calls = Array.from({ length: 100 }, (_, i) =>
    i % 10 === 9
      ? store.write(P, alice, { path: `blocker/${i}.md`, type: 'markdown', content: 'x' })
      : store.write(P, alice, { path: `dir${i % 7}/file${i}.md`, type: 'markdown', content: `content ${i}` }),
  );
  const settled = await Promise.allSettled(calls);
  const failed = settled.filter((s) => s.status === 'rejected');
  t.is(failed.length, 10);
  for (const s of failed) t.is((s as PromiseRejectedResult).reason.code, 'CONFLICT');
  for (let i = 0; i < 100; i++) {
    if (i % 10 === 9) continue;
    const n = store.getByPath(P, `dir${i % 7}/file${i}.md`);
    t.is(n.version, 1);
    t.is((await store.readValue(P, { id: n.id })).value, `content ${i}`);
  }
  t.is(store.projectVersion(P), 91);
  const report = await store.reindexProject(P);
  t.deepEqual(report.differences, []);
});

test('kill -9 while writing: every acknowledged write survives, fsck clean, reindex equal', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const child = spawn(process.execPath, ['--import=tsx', join(import.meta.dirname, 'fixtures', 'crashWriter.ts'), f.dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise((r) => child.on('exit', r));
  const target = 200 + Math.floor(Math.random() * 400);
  await until(() => (out.split('\n').length > target ? true : undefined), 60_000).catch((e) => {
    throw new Error(`${e.message}: ${err}`);
  });
  child.kill('SIGKILL');
  await exited;
  const acks = out.split('\n').filter((l) => l.startsWith('ACK '));
  t.true(acks.length >= target);

  const store = await f.reopen();
  await store.reconcileAll();
  for (const line of acks) {
    const [, path, version, ...rest] = line.split(' ');
    const content = rest.join(' ');
    const node = store.getByPath('crash', path);
    t.true(node.version >= Number(version), path);
    const v = await store.versionContent('crash', { path }, Number(version));
    t.is(v.bytes.toString(), content);
  }
  const fsck = execFileSync('git', ['fsck', '--strict', '--no-dangling'], { cwd: join(f.dir, 'crash.git'), stdio: 'pipe' });
  t.is(fsck.toString(), '');
  const report = await store.reindexProject('crash');
  t.deepEqual(report.differences, []);
  // And the store keeps working on the recovered repository.
  const r = await store.write('crash', alice, { path: 'after.md', type: 'markdown', content: 'after' });
  t.true(r.changed);
});
