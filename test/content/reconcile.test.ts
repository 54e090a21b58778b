import test from 'ava';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { ContentStore, type Actor } from '../../src/content/contentStore.ts';
import { alice, bot, fixture } from './helpers.ts';

const P = 'proj';
const pusher: Actor = { type: 'agent', id: 'con_pusher', author: 'agent:pusher' };

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    env: { ...process.env, GIT_AUTHOR_NAME: 'Pusher', GIT_AUTHOR_EMAIL: 'pusher@example.com', GIT_COMMITTER_NAME: 'Pusher', GIT_COMMITTER_EMAIL: 'pusher@example.com' },
  }).toString();
}

function put(dir: string, path: string, text: string): void {
  mkdirSync(join(dir, path, '..'), { recursive: true });
  writeFileSync(join(dir, path), text);
}

/**
 * The index with node ids replaced by a stable label (the path each node was created at), so
 * that two indexes built with fresh ids for pushed files can be compared.
 */
function canonical(db: Db) {
  const created = db.prepare(`SELECT node_id, path FROM node_versions WHERE project_id = ? AND version = 1`).all(P) as { node_id: string; path: string }[];
  const label = new Map(created.map((r) => [r.node_id, `<${r.path}>`]));
  const id = (v: unknown) => (typeof v === 'string' && label.has(v) ? label.get(v)! : v);
  const relabel = (rows: Record<string, unknown>[]) => rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, id(v)])));
  const nodes = relabel(db.prepare(`SELECT id, path, parent_id, type, content_hash, size, state, version, original_path, created_at FROM nodes WHERE project_id = ? ORDER BY path`).all(P) as Record<string, unknown>[]);
  const versions = relabel(
    db.prepare(`SELECT node_id, version, commit_id, blob_id, type, path, parent_id, operation, actor_type, actor_id, author, size, created_at FROM node_versions WHERE project_id = ? ORDER BY project_version, path`).all(P) as Record<string, unknown>[],
  );
  return { nodes, versions };
}

/** A clone of the project's repository to commit into with the git CLI, pushing to it directly. */
function cloneOf(f: { dir: string }) {
  const work = mkdtempSync(join(tmpdir(), 'cns-clone-'));
  git(work, 'clone', '-q', join(f.dir, `${P}.git`), 'c');
  return { c: join(work, 'c'), cleanup: () => rmSync(work, { recursive: true, force: true }) };
}

test('commits without trailers index the same with the system git as with isomorphic-git', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  await f.store.bulkWrite(P, alice, [
    { path: 'team/a.md', type: 'markdown', content: 'a' },
    { path: 'team/sub/b.json', type: 'json', content: { b: 1 } },
    { path: 'old.txt', type: 'file', content: 'old' },
    { path: 'twin1.md', type: 'markdown', content: 'same' },
  ]);
  await f.store.mkdir(P, alice, 'empty');
  const trashed = f.store.getByPath(P, 'old.txt');
  const team = f.store.getByPath(P, 'team');
  const { c, cleanup } = cloneOf(f);
  t.teardown(cleanup);
  const commit = (message: string) => {
    git(c, 'add', '-A');
    git(c, 'commit', '-q', '--allow-empty', '-m', message);
  };
  git(c, 'mv', 'team', 'crew');
  put(c, 'broken.json', 'not json');
  put(c, 'scalar.json', '42');
  commit('rename folder, add json');
  put(c, 'crew/a.md', 'a, edited');
  put(c, 'crew/new.json', '{"x": [1]}');
  git(c, 'mv', 'twin1.md', 'twin2.md');
  put(c, 'deep/er/still/file.md', 'deep');
  put(c, 'keep/.cnskeep', '');
  commit('edit, rename, nested folders, an empty folder');
  mkdirSync(join(c, '.trash'), { recursive: true });
  git(c, 'mv', 'old.txt', `.trash/${trashed.id}_old.txt`);
  git(c, 'rm', '-q', '-r', 'empty');
  commit('trash a file, remove an empty folder');
  git(c, 'rm', '-q', '-r', 'deep', 'crew/sub');
  put(c, 'crew/sub', 'a file where a folder was');
  commit('remove a folder tree, a folder becomes a file');
  git(c, 'mv', `.trash/${trashed.id}_old.txt`, 'restored.txt');
  put(c, 'broken.json', '{"now": "valid"}');
  commit('restore from the trash; json becomes valid');
  commit('an empty commit');
  git(c, 'push', '-q', 'origin', 'main');

  // The same repository and index, copied before syncing: one store reads with git, one without.
  const other = mkdtempSync(join(tmpdir(), 'cns-content-'));
  t.teardown(() => rmSync(other, { recursive: true, force: true }));
  f.db.exec(`VACUUM INTO '${join(other, 'cns.db')}'`);
  cpSync(join(f.dir, `${P}.git`), join(other, `${P}.git`), { recursive: true });
  const db2 = openDatabase(join(other, 'cns.db'));
  const store2 = new ContentStore({ dataDir: other, db: db2, gitBinary: null });
  t.teardown(async () => {
    await store2.close();
    db2.close();
  });

  const viaGit = await f.store.reconcile(P);
  const viaIso = await store2.reconcile(P);
  t.is(viaGit.indexedCommits, 6);
  t.is(viaIso.indexedCommits, 6);
  t.deepEqual(canonical(f.db), canonical(db2));

  // Spot checks of the semantics both share.
  const s = f.store;
  t.is(s.getByPath(P, 'crew').id, team.id);
  t.is(s.getByPath(P, 'crew/a.md').version, 2); // create, then the edit (the folder move is the folder's version)
  t.is(s.getByPath(P, 'twin2.md').version, 2);
  t.is(s.getByPath(P, 'crew/new.json').type, 'json');
  t.is(s.getByPath(P, 'scalar.json').type, 'file');
  t.is(s.getByPath(P, 'broken.json').type, 'file');
  t.is(s.getByPath(P, 'restored.txt').id, trashed.id);
  t.deepEqual(
    s.listVersions(P, { id: trashed.id }).versions.map((v) => v.operation),
    ['restore', 'trash', 'create'],
  );
  t.is(s.getByPath(P, 'keep').type, 'folder');
  t.deepEqual(s.listChildren(P, 'keep'), []);
  t.is(s.findByPath(P, 'empty'), null);
  t.is(s.findByPath(P, 'deep'), null);
  t.is(s.getByPath(P, 'crew/sub').type, 'file');
  t.is(s.getByPath(P, 'crew').contentHash, git(c, 'rev-parse', 'HEAD:crew').trim());
  t.is(s.getByPath(P, 'keep').contentHash, git(c, 'rev-parse', 'HEAD:keep').trim());
});

test('reconcile options: actor, received time and commit author; commits grouped into few transactions stay consistent', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  await f.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'a' });
  const { c, cleanup } = cloneOf(f);
  t.teardown(cleanup);
  // 2,100 commits: more than one round of git reads and several SQLite transactions.
  const parts: string[] = [];
  const data = (x: string) => `data ${Buffer.byteLength(x)}\n${x}\n`;
  for (let i = 0; i < 2100; i++) {
    parts.push(`commit refs/heads/main\ncommitter Pusher <pusher@example.com> ${1_700_000_000 + i} +0000\n`, data(`c${i}`));
    if (i === 0) parts.push(`from ${git(c, 'rev-parse', 'HEAD').trim()}\n`);
    if (i === 600) parts.push('R d1 moved\n');
    parts.push(`M 100644 inline d${i % 7}/f${i % 50}.md\n`, data(`commit ${i}`));
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: c, input: parts.join('') });
  git(c, 'push', '-q', 'origin', 'main');
  const moved = f.store.findByPath(P, 'moved');
  const receivedAt = '2030-01-02T03:04:05.678Z';
  const report = await f.store.reconcile(P, { actor: pusher, receivedAt, keepCommitAuthor: true });
  t.is(moved, null);
  t.is(report.indexedCommits, 2100);
  t.is(f.store.projectVersion(P), 2101);
  t.is(f.store.getByPath(P, 'moved').type, 'folder');
  const v = f.store.listVersions(P, { path: 'd0/f0.md' }).versions[0]!;
  t.like(v, { actorType: 'agent', actorId: 'con_pusher', author: 'agent:pusher', commitAuthor: 'pusher@example.com', createdAt: '2030-01-02T03:04:05.000Z' });
  t.is(f.store.listVersions(P, { path: 'a.md' }).versions[0]!.author, 'alice@example.com');
  t.is(f.store.stats(P).lastChange?.commitId, git(c, 'rev-parse', 'HEAD').trim());
  await t.throwsAsync(f.store.reconcile(P, { receivedAt: 'yesterday' }), { message: /received_at/ });
  // A rebuild from git finds the same nodes at the same paths (ids of pushed files are new: git does not know them).
  const paths = f.store.tree(P).children!.map((n) => n.path);
  const versions = (f.db.prepare(`SELECT COUNT(*) AS n FROM node_versions WHERE project_id = ?`).get(P) as { n: number }).n;
  const again = await f.store.reindexProject(P);
  t.is(again.versions, versions);
  t.deepEqual(f.store.tree(P).children!.map((n) => n.path), paths);
});

test('a registered push is attributed by whichever path indexes it first, and recorded once in the audit log', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  await f.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'a' });
  const before = git(join(f.dir, `${P}.git`), 'rev-parse', 'main').trim();
  const { c, cleanup } = cloneOf(f);
  t.teardown(cleanup);
  put(c, 'pushed.md', 'pushed');
  git(c, 'add', '-A');
  git(c, 'commit', '-q', '-m', 'one');
  put(c, 'pushed.md', 'pushed twice');
  git(c, 'commit', '-q', '-am', 'two');
  const after = git(c, 'rev-parse', 'HEAD').trim();
  const receivedAt = '2031-05-06T07:08:09.000Z';
  f.store.expectPush(P, { before, after, commits: 2, actor: pusher, receivedAt });
  git(c, 'push', '-q', 'origin', 'main');

  // An API write arrives before the post-push sync: it indexes the pushed commits first.
  await f.store.write(P, bot, { path: 'b.md', type: 'markdown', content: 'b' });
  t.is((await f.store.reconcile(P, { actor: alice })).indexedCommits, 0);
  const versions = f.store.listVersions(P, { path: 'pushed.md' }).versions;
  t.deepEqual(
    versions.map((v) => [v.actorType, v.actorId, v.author, v.commitAuthor, v.createdAt, v.message]),
    [
      ['agent', 'con_pusher', 'agent:pusher', 'pusher@example.com', receivedAt, 'two'],
      ['agent', 'con_pusher', 'agent:pusher', 'pusher@example.com', receivedAt, 'one'],
    ],
  );
  t.is(f.store.listVersions(P, { path: 'b.md' }).versions[0]!.actorId, bot.id);
  const pushes = f.store.auditLogs(P, { path: '' }).filter((e) => e.action === 'push');
  t.is(pushes.length, 1);
  t.like(pushes[0]!, { actorType: 'agent', actorId: 'con_pusher', author: 'agent:pusher', nodeId: '', path: '', timestamp: receivedAt });
  t.deepEqual(pushes[0]!.details, { ref: 'refs/heads/main', before, after, commits: 2 });

  // A push that never lands is forgotten; later commits are not attributed to it.
  f.store.expectPush(P, { before: after, after: 'f'.repeat(40), commits: 1, actor: pusher, receivedAt });
  f.store.forgetPush(P, 'f'.repeat(40));
  put(c, 'later.md', 'later');
  git(c, 'add', '-A');
  git(c, 'commit', '-q', '-m', 'later');
  git(c, 'pull', '-q', '--rebase', 'origin', 'main');
  git(c, 'push', '-q', 'origin', 'main');
  await f.store.reconcile(P);
  t.like(f.store.listVersions(P, { path: 'later.md' }).versions[0]!, { actorType: 'user', actorId: 'pusher@example.com' });
  t.is(f.store.auditLogs(P, { path: '' }).filter((e) => e.action === 'push').length, 1);
  t.throws(() => f.store.expectPush(P, { before: null, after: 'nope', commits: 1, actor: pusher, receivedAt }), { message: /commit ids/ });
});

test('a registered push survives a restart: the reconciler attributes it, and stale registrations are dropped', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  await f.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'a' });
  const before = git(join(f.dir, `${P}.git`), 'rev-parse', 'main').trim();
  const { c, cleanup } = cloneOf(f);
  t.teardown(cleanup);
  put(c, 'pushed.md', 'pushed');
  git(c, 'add', '-A');
  git(c, 'commit', '-q', '-m', 'one');
  const after = git(c, 'rev-parse', 'HEAD').trim();
  const receivedAt = '2031-05-06T07:08:09.000Z';
  f.store.expectPush(P, { before, after, commits: 1, actor: pusher, receivedAt });
  // Pushes that never landed: one registered two hours ago (stale), one just now (may still land).
  f.store.expectPush(P, { before: after, after: 'e'.repeat(40), commits: 1, actor: pusher, receivedAt });
  f.store.expectPush(P, { before: after, after: 'f'.repeat(40), commits: 1, actor: pusher, receivedAt });
  const twoHoursAgo = new Date(Date.now() - 2 * 3600_000).toISOString();
  f.db.prepare(`UPDATE content_pending_pushes SET registered_at = ? WHERE after_commit IN (?, ?)`).run(twoHoursAgo, after, 'e'.repeat(40));
  git(c, 'push', '-q', 'origin', 'main');

  // The process dies before indexing: a new store on the same database is the restarted service.
  const store = await f.reopen();
  await store.reconcileAll();
  t.like(store.listVersions(P, { path: 'pushed.md' }).versions[0]!, { actorType: 'agent', actorId: 'con_pusher', createdAt: receivedAt });
  const pushes = store.auditLogs(P, { path: '' }).filter((e) => e.action === 'push');
  t.is(pushes.length, 1);
  t.like(pushes[0]!, { actorType: 'agent', actorId: 'con_pusher', timestamp: receivedAt });
  const left = f.db.prepare(`SELECT after_commit FROM content_pending_pushes WHERE project_id = ?`).all(P) as { after_commit: string }[];
  t.deepEqual(left.map((r) => r.after_commit), ['f'.repeat(40)], 'the landed push was consumed, the stale one dropped');
  store.forgetPush(P, 'f'.repeat(40));
  t.is((f.db.prepare(`SELECT COUNT(*) AS n FROM content_pending_pushes`).get() as { n: number }).n, 0);
});

test('without a git binary (not on PATH) pushed commits are still indexed, through isomorphic-git', async (t) => {
  const f = fixture({ gitBinary: join(tmpdir(), 'no-such-git') });
  t.teardown(f.cleanup);
  const a = await f.store.write(P, alice, { path: 'docs/a.md', type: 'markdown', content: 'a' });
  const { c, cleanup } = cloneOf(f);
  t.teardown(cleanup);
  git(c, 'mv', 'docs/a.md', 'docs/b.md');
  put(c, 'x.json', '{"x": 1}');
  git(c, 'add', '-A');
  git(c, 'commit', '-q', '-m', 'rename and add');
  git(c, 'push', '-q', 'origin', 'main');
  t.is((await f.store.reconcile(P)).indexedCommits, 1);
  t.is(f.store.getByPath(P, 'docs/b.md').id, a.node.id);
  t.is(f.store.getByPath(P, 'x.json').type, 'json');
  t.is(f.store.getByPath(P, 'docs').contentHash, git(c, 'rev-parse', 'HEAD:docs').trim());
});
