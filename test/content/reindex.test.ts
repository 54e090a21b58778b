import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alice, bot, fixture } from './helpers.ts';

const P = 'proj';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    env: { ...process.env, GIT_AUTHOR_NAME: 'Pusher', GIT_AUTHOR_EMAIL: 'pusher@example.com', GIT_COMMITTER_NAME: 'Pusher', GIT_COMMITTER_EMAIL: 'pusher@example.com' },
  }).toString();
}

function indexDump(db: import('../../src/db/database.ts').Db) {
  const nodes = db.prepare(`SELECT id, path, type, state, version, parent_id, content_hash, size, original_path FROM nodes WHERE project_id = ? ORDER BY id`).all(P);
  const versions = db.prepare(`SELECT node_id, version, commit_id, blob_id, path, operation, actor_type, actor_id, project_version FROM node_versions WHERE project_id = ? ORDER BY node_id, version`).all(P);
  return { nodes, versions };
}

test('reindex rebuilds an identical index from git alone', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  await store.bulkWrite(P, alice, [
    { path: 'a/one.md', type: 'markdown', content: '1' },
    { path: 'a/two.json', type: 'json', content: { two: 2 } },
    { path: 'b/three.bin', type: 'file', content: Buffer.from('3') },
  ]);
  await store.write(P, bot, { path: 'a/one.md', type: 'markdown', content: '1b' });
  await store.move(P, alice, 'a', 'c/a');
  await store.remove(P, alice, 'b');
  await store.mkdir(P, alice, 'empty');
  await store.rollbackNode(P, alice, { path: 'c/a/one.md' }, 1);
  await store.commit(P, alice, [
    { op: 'write', path: 'm.md', type: 'markdown', content: 'm' },
    { op: 'move', from: 'm.md', to: 'n.md' },
    { op: 'write', path: 'n.md', type: 'markdown', content: 'n' },
  ]);
  const before = indexDump(f.db);
  f.db.prepare('DELETE FROM nodes WHERE project_id = ?').run(P);
  f.db.prepare('DELETE FROM node_versions WHERE project_id = ?').run(P);
  const report = await store.reindexProject(P);
  t.is(report.commits, 7);
  t.true(report.extraNodes.length > 0);
  t.deepEqual(indexDump(f.db), before);
  const again = await store.reindexProject(P);
  t.deepEqual(again.differences, []);
  // Audit entries that are not in git (push summaries, node_id '') survive a rebuild.
  f.db.prepare(`INSERT INTO content_audit_log (project_id, node_id, path, action, actor_type, actor_id, author, details, created_at)
    VALUES (?, '', '', 'push', 'user', 'u', 'u@example.com', '{}', '2026-01-01T00:00:00.000Z')`).run(P);
  await store.reindexProject(P);
  t.is((f.db.prepare(`SELECT COUNT(*) AS n FROM content_audit_log WHERE project_id = ? AND action = 'push'`).get(P) as { n: number }).n, 1);
  t.deepEqual(store.listVersions(P, { path: 'n.md' }).versions.map((v) => [v.version, v.operation]), [[1, 'create']]);
});

test('reconcile indexes commits pushed by the git CLI, with rename detection', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  const guide = await store.write(P, alice, { path: 'docs/guide.md', type: 'markdown', content: '# Guide\n' });
  await store.write(P, alice, { path: 'docs/old.txt', type: 'file', content: 'old' });
  const work = mkdtempSync(join(tmpdir(), 'cns-clone-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  git(work, 'clone', '-q', join(f.dir, `${P}.git`), 'c');
  const c = join(work, 'c');
  git(c, 'mv', 'docs/guide.md', 'docs/renamed.md');
  writeFileSync(join(c, 'new.json'), '{"x": 1}\n');
  writeFileSync(join(c, 'broken.json'), 'not json');
  writeFileSync(join(c, 'notes.markdown'), 'hello');
  git(c, 'rm', '-q', 'docs/old.txt');
  git(c, 'add', '-A');
  git(c, 'commit', '-q', '-m', 'pushed change');
  git(c, 'push', '-q', 'origin', 'main');

  const report = await store.reconcile(P);
  t.is(report.indexedCommits, 1);
  const renamed = store.getByPath(P, 'docs/renamed.md');
  t.is(renamed.id, guide.node.id);
  t.is(renamed.version, 2);
  t.like(store.listVersions(P, { id: renamed.id }).versions[0], { operation: 'move', actorType: 'user', actorId: 'pusher@example.com', message: 'pushed change', projectVersion: 3 });
  t.is(store.getByPath(P, 'new.json').type, 'json');
  t.is(store.getByPath(P, 'broken.json').type, 'file');
  t.is(store.getByPath(P, 'notes.markdown').type, 'markdown');
  t.is(store.findByPath(P, 'docs/old.txt'), null);
  t.deepEqual((await store.readValue(P, { path: 'new.json' })).value, { x: 1 });
  // A write after the push builds on the pushed tip.
  await store.write(P, bot, { path: 'docs/renamed.md', type: 'markdown', content: 'after push' });
  git(c, 'pull', '-q', 'origin', 'main');
  t.is(git(c, 'show', 'HEAD:docs/renamed.md'), 'after push');
  t.true(git(c, 'log', '--format=%s').startsWith('write docs/renamed.md\npushed change'));
});

test('a ref moved by the system git between writes is respected, never overwritten', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  await store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'a' });
  const gitdir = join(f.dir, `${P}.git`);
  // An outside commit made with plumbing and moved with update-ref (which takes main.lock).
  const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: gitdir, input: 'outside\n' }).toString().trim();
  const parentTree = git(gitdir, 'rev-parse', 'main^{tree}').trim();
  const tree = execFileSync('git', ['mktree'], {
    cwd: gitdir,
    input: git(gitdir, 'ls-tree', parentTree) + `100644 blob ${blob}\toutside.md\n`,
  }).toString().trim();
  const commit = git(gitdir, 'commit-tree', tree, '-p', 'main', '-m', 'outside').trim();
  git(gitdir, 'update-ref', 'refs/heads/main', commit);
  // The store has not been told: its next write must notice, index the outside commit, and chain on it.
  const r = await store.write(P, bot, { path: 'b.md', type: 'markdown', content: 'b' });
  t.is(git(gitdir, 'rev-parse', 'main^').trim(), commit);
  t.is(git(gitdir, 'rev-parse', 'main').trim(), r.commitId!);
  t.is(r.projectVersion, 3);
  t.is(store.getByPath(P, 'outside.md').type, 'markdown');
  t.is(execFileSync('git', ['fsck', '--strict', '--no-dangling'], { cwd: gitdir, stdio: 'pipe' }).toString(), '');
});

test('a held main.lock makes writes wait instead of overwriting', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  await store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'a' });
  const lock = join(f.dir, `${P}.git`, 'refs', 'heads', 'main.lock');
  writeFileSync(lock, '');
  let done = false;
  const pending = store.write(P, alice, { path: 'b.md', type: 'markdown', content: 'b' }).then((r) => {
    done = true;
    return r;
  });
  await new Promise((r) => setTimeout(r, 100));
  t.false(done);
  rmSync(lock);
  const r = await pending;
  t.is(r.projectVersion, 2);
});

test('repack keeps every version readable', async (t) => {
  const f = fixture({ repackEvery: 5 });
  t.teardown(f.cleanup);
  const { store } = f;
  for (let i = 1; i <= 12; i++) await store.write(P, alice, { path: `f${i % 3}.md`, type: 'markdown', content: `v${i}` });
  t.true(await store.repack(P));
  const loose = git(join(f.dir, `${P}.git`), 'count-objects', '-v');
  t.regex(loose, /^packs: 1$/m);
  t.regex(loose, /^count: [01]$/m); // at most the (unreferenced) empty placeholder blob stays loose
  for (let v = 1; v <= 4; v++) {
    t.is((await store.versionContent(P, { path: 'f1.md' }, v)).bytes.toString(), `v${1 + (v - 1) * 3}`);
  }
  await store.write(P, alice, { path: 'after.md', type: 'markdown', content: 'x' });
  t.is((await store.readValue(P, { path: 'after.md' })).value, 'x');
});

test('reconcile: a pushed folder rename keeps every id inside; a rewritten history is rebuilt', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  const r = await store.bulkWrite(P, alice, [
    { path: 'team/a.md', type: 'markdown', content: 'a' },
    { path: 'team/sub/b.json', type: 'json', content: { b: 1 } },
  ]);
  const ids = new Map(r.nodes.map((n) => [n.path, n.id]));
  const work = mkdtempSync(join(tmpdir(), 'cns-clone-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  git(work, 'clone', '-q', join(f.dir, `${P}.git`), 'c');
  const c = join(work, 'c');
  git(c, 'mv', 'team', 'crew');
  git(c, 'commit', '-q', '-m', 'rename folder');
  git(c, 'push', '-q', 'origin', 'main');
  await store.reconcile(P);
  t.is(store.getByPath(P, 'crew').id, ids.get('team')!);
  t.is(store.getByPath(P, 'crew/a.md').id, ids.get('team/a.md')!);
  t.is(store.getByPath(P, 'crew/sub/b.json').id, ids.get('team/sub/b.json')!);
  t.is(store.getByPath(P, 'crew/sub').id, ids.get('team/sub')!);
  t.is(store.getByPath(P, 'crew').contentHash, git(c, 'rev-parse', 'HEAD:crew').trim());

  // History rewritten by a forced update: the index is rebuilt from the new history.
  git(c, 'reset', '-q', '--hard', 'HEAD~1');
  writeFileSync(join(c, 'other.md'), 'other');
  git(c, 'add', '-A');
  git(c, 'commit', '-q', '-m', 'diverged');
  git(join(f.dir, `${P}.git`), 'config', 'receive.denyNonFastForwards', 'false');
  git(c, 'push', '-q', '-f', 'origin', 'main');
  const report = await store.reconcile(P);
  t.true(report.rebuilt);
  t.is(store.getByPath(P, 'team/a.md').id, ids.get('team/a.md')!);
  t.is(store.getByPath(P, 'other.md').version, 1);
  t.is(store.findByPath(P, 'crew'), null);
  t.is(store.projectVersion(P), 2);
});

test('reads during automatic repacks never fail', async (t) => {
  const f = fixture({ repackEvery: 10 });
  t.teardown(f.cleanup);
  const { store } = f;
  await store.write(P, alice, { path: 'old.md', type: 'markdown', content: 'v1' });
  let reads = 0;
  let writing = true;
  const reader = (async () => {
    while (writing) {
      const v = await store.versionContent(P, { path: 'old.md' }, 1);
      t.is(v.bytes.toString(), 'v1');
      reads++;
      await new Promise((r) => setImmediate(r));
    }
  })();
  for (let i = 0; i < 60; i++) await store.write(P, alice, { path: `w${i % 4}.md`, type: 'markdown', content: `${i}` });
  writing = false;
  await reader;
  t.true(reads > 0);
  const packs = git(join(f.dir, `${P}.git`), 'count-objects', '-v');
  t.regex(packs, /^packs: [1-9]\d*$/m);
  for (let i = 56; i < 60; i++) t.is((await store.readValue(P, { path: `w${i % 4}.md` })).value, `${i}`);
});

test('pushed history rebuilds exactly: node ids, actor ids, types and the push audit come back from the notes', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const { store } = f;
  await store.bulkWrite(P, alice, [
    { path: 'config', type: 'json', content: { a: 1 } },
    { path: 'notes/readme', type: 'markdown', content: '# one' },
    { path: 'keep.md', type: 'markdown', content: 'keep' },
  ]);
  const work = mkdtempSync(join(tmpdir(), 'cns-notes-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  git(work, 'clone', '-q', join(f.dir, `${P}.git`), 'c');
  const c = join(work, 'c');
  const before = git(c, 'rev-parse', 'HEAD').trim();
  writeFileSync(join(c, 'config'), '{"a": 2}\n');
  writeFileSync(join(c, 'notes', 'readme'), '# two\n');
  writeFileSync(join(c, 'new.txt'), 'new');
  git(c, 'add', '-A');
  git(c, 'commit', '-q', '-m', 'edit without extensions');
  git(c, 'mv', 'keep.md', 'kept.md');
  writeFileSync(join(c, 'data.json'), '[1, 2]');
  git(c, 'add', '-A');
  git(c, 'commit', '-q', '-m', 'rename and add');
  const after = git(c, 'rev-parse', 'HEAD').trim();
  const pusher = { type: 'user' as const, id: 'u_pusher', author: 'pusher@example.com' };
  store.expectPush(P, { before, after, commits: 2, actor: pusher, receivedAt: '2026-01-02T03:04:05Z' });
  git(c, 'push', '-q', 'origin', 'main');
  await store.reconcile(P);

  // Item 17: a json or markdown node keeps its type while the pushed content fits it.
  t.is(store.getByPath(P, 'config').type, 'json');
  t.deepEqual((await store.readValue(P, { path: 'config' })).value, { a: 2 });
  t.is(store.getByPath(P, 'notes/readme').type, 'markdown');
  t.is(store.getByPath(P, 'new.txt').type, 'file');
  // Item 18: actors stay ids.
  const v = store.listVersions(P, { path: 'config' }).versions[0]!;
  t.is(v.actorId, 'u_pusher');
  t.is(v.author, 'pusher@example.com');

  const ids = new Map(['config', 'notes/readme', 'new.txt', 'kept.md', 'data.json'].map((p) => [p, store.getByPath(P, p).id]));
  const dump = indexDump(f.db);
  const pushAudit = () => store.auditLogs(P, { path: '' }).filter((e) => e.action === 'push').map((e) => ({ ...e, id: 0 }));
  const audit = pushAudit();
  t.is(audit.length, 1);
  for (let round = 0; round < 2; round++) {
    const report = await store.reindexProject(P);
    t.deepEqual(report.differences, [], `round ${round}`);
    t.deepEqual(indexDump(f.db), dump);
    for (const [p, id] of ids) t.is(store.getByPath(P, p).id, id);
    t.deepEqual(pushAudit(), audit);
  }
  // The notes are git's own: `git notes` reads them.
  t.regex(git(join(f.dir, `${P}.git`), 'notes', '--ref=cns', 'show', after), /^Cns-Actor: user u_pusher pusher@example.com/);
});
