import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { CliUser } from '../cli/harness.ts';
import { GitClient, newKey, newProject, remoteUrl, type ProjectFixture } from './gitFixture.ts';

let server: TestServer;
let git: GitClient;
let f: ProjectFixture;
const SECRET = 'SECRET-TOKEN-4f1b9c';
const actor = { type: 'user' as const, id: 'usr_writer', author: 'writer@example.com' };

test.before(async () => {
  server = await startTestServer();
  git = new GitClient();
  f = await newProject(server, 'purge me');
});

test.after.always(async () => {
  await server?.stop();
  git?.dispose();
});

/** Every object of a repository, contents included. */
function allObjects(gitdir: string): string {
  return execFileSync('git', ['--git-dir', gitdir, 'cat-file', '--batch-all-objects', '--batch'], { maxBuffer: 1 << 28 }).toString('latin1');
}

test('a purge removes a path from the whole history; other nodes keep ids and versions; old clones must re-clone', async (t) => {
  const c = server.services.content;
  const p = f.projectId;
  await c.write(p, actor, { path: 'docs/a.md', type: 'markdown', content: 'a1' });
  await c.write(p, actor, { path: 'secret.txt', type: 'file', content: `${SECRET} v1` });
  await c.write(p, actor, { path: 'docs/a.md', type: 'markdown', content: 'a2' });
  await c.write(p, actor, { path: 'secret.txt', type: 'file', content: `${SECRET} v2` });
  await c.move(p, actor, 'secret.txt', 'private/secret.txt');
  // A push in between: its node ids come from the notes after the rewrite.
  const old = git.dir('old');
  await git.ok(['clone', remoteUrl(server, p, f.token), old]);
  execFileSync('sh', ['-c', 'echo pushed > pushed.md'], { cwd: old });
  await git.ok(['add', '-A'], { cwd: old });
  await git.ok(['commit', '-m', 'pushed file'], { cwd: old });
  await git.ok(['push', 'origin', 'HEAD:main'], { cwd: old });
  await c.write(p, actor, { path: 'docs/a.md', type: 'markdown', content: 'a3' });
  await c.remove(p, actor, 'private/secret.txt', { permanent: true });
  await git.ok(['pull', '--no-rebase'], { cwd: old });

  // Deleted permanently, yet still in every clone's history.
  t.true((await git.ok(['log', '--all', '-p'], { cwd: old })).includes(SECRET));

  const keep = ['docs/a.md', 'pushed.md'].map((path) => {
    const n = c.getByPath(p, path);
    return { path, id: n.id, versions: c.listVersions(p, { id: n.id }).versions.map((v) => [v.version, v.operation, v.actorId, v.blobId, v.projectVersion]) };
  });
  const pv = c.projectVersion(p);

  // Only organization owners and admins may purge.
  const member = await server.createUser('project-admin@example.com');
  const add = await server.api('POST', `/projects/${p}/members`, { token: f.token, body: { email: member.email, role: 'admin' } });
  t.is(add.status, 201, JSON.stringify(add.body));
  const byMember = await server.api('POST', `/projects/${p}/purge`, { token: member.token, body: { path: 'secret.txt' } });
  t.is(byMember.status, 403);
  const key = await newKey(server, f, { name: 'k', mode: 'read_write' });
  t.is((await server.api('POST', `/projects/${p}/purge`, { token: key, body: { path: 'secret.txt' } })).status, 403);
  t.is((await server.api('POST', `/projects/${p}/purge`, { token: f.token, body: { path: 'never-there.txt' } })).status, 404);
  t.is((await server.api('POST', `/projects/${p}/purge`, { token: f.token, body: {} })).status, 422);

  const res = await server.api('POST', `/projects/${p}/purge`, { token: f.token, body: { path: 'secret.txt' } });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.true(res.body.data.commits_rewritten > 0);

  // Gone from the server's repository and from a new clone.
  const gitdir = join(server.dataDir, `${p}.git`);
  t.false(allObjects(gitdir).includes(SECRET));
  t.is(spawnSync('git', ['--git-dir', gitdir, 'fsck', '--strict', '--no-dangling'], { encoding: 'utf8' }).status, 0);
  const fresh = git.dir('fresh');
  await git.ok(['clone', remoteUrl(server, p, f.token), fresh]);
  t.false((await git.ok(['log', '--all', '-p'], { cwd: fresh })).includes(SECRET));
  const messages = await git.ok(['log', '--all', '--format=%B'], { cwd: fresh });
  t.false(messages.includes('secret.txt'), messages);

  // Every other node keeps its id and its versions; the commit count is unchanged.
  for (const k of keep) {
    const n = c.getByPath(p, k.path);
    t.is(n.id, k.id, k.path);
    t.deepEqual(
      c.listVersions(p, { id: n.id }).versions.map((v) => [v.version, v.operation, v.actorId, v.projectVersion]),
      k.versions.map(([version, op, actorId, , projectVersion]) => [version, op, actorId, projectVersion]),
    );
  }
  t.is(c.projectVersion(p), pv);
  t.is(c.findByPath(p, 'private/secret.txt'), null);
  t.deepEqual((await c.reindexProject(p)).differences, []);

  // The old clone is told to clone again: fetching and merging, then pushing, is refused.
  await git.ok(['fetch', 'origin'], { cwd: old });
  await git.ok(['merge', '--allow-unrelated-histories', '-m', 'merge', 'origin/main'], { cwd: old });
  const push = await git.run(['push', 'origin', 'HEAD:main'], { cwd: old });
  t.not(push.code, 0);
  t.regex(push.stderr, /Clone the project again/);
  t.false(allObjects(gitdir).includes(SECRET));

  // Writes go on as before.
  await c.write(p, actor, { path: 'docs/a.md', type: 'markdown', content: 'a4' });
  t.is(c.getByPath(p, 'docs/a.md').version, 4);
});

test('cns purge PATH asks for confirmation, then purges through the API', async (t) => {
  const c = server.services.content;
  const p = (await newProject(server, 'purge by cli')).projectId;
  await c.write(p, actor, { path: 'keys.txt', type: 'file', content: SECRET });
  await c.write(p, actor, { path: 'keep.md', type: 'markdown', content: 'keep' });
  const u = new CliUser();
  t.teardown(() => u.dispose());
  await u.login(server);
  const unconfirmed = await u.run(['purge', 'keys.txt', '--project', p]);
  t.not(unconfirmed.code, 0);
  t.regex(unconfirmed.stderr, /--yes/);
  t.not(c.findByPath(p, 'keys.txt'), null);
  const r = await u.run(['purge', 'keys.txt', '--project', p, '--yes', '--json']);
  t.is(r.code, 0, r.stderr);
  t.true(r.json.data?.commits_rewritten > 0 || r.json.commits_rewritten > 0, r.stdout);
  t.is(c.findByPath(p, 'keys.txt'), null);
  t.false(allObjects(join(server.dataDir, `${p}.git`)).includes(SECRET));
  t.is((await c.readValue(p, { path: 'keep.md' })).value, 'keep');
});
