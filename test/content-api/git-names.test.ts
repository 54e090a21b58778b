import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gitNameProblem } from '../../src/content/paths.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { GitClient, newProject, remoteUrl } from '../git/gitFixture.ts';

/** Names git itself treats as `.git` (NTFS and HFS+ spellings), from issue 9. */
const DOTGIT = ['.git', '.git.', '.GiT.', 'git~1', 'GIT~1', '.git ', '.g\u200cit', '.git\u200d', '\ufeff.git', '.git::$INDEX_ALLOCATION', '.git . .'];
/** Close to them, fine for git. */
const FINE = ['.gitx', 'git~2', '.github', 'git', '.gitignore', 'gitx~1', '.git~1', 'git~1x', 'x.git', '.gi\u200ct.x'];

let server: TestServer;
let git: GitClient;
test.before(async () => {
  server = await startTestServer();
  git = new GitClient();
});
test.after.always(async () => {
  await server?.stop();
  git?.dispose();
});

test('the name rule agrees with git fsck: hasDotgit exactly for the names git reads as .git', (t) => {
  const repo = mkdtempSync(join(tmpdir(), 'cns-fsck-'));
  t.teardown(() => rmSync(repo, { recursive: true, force: true }));
  const g = (args: string[], input?: string) => execFileSync('git', args, { cwd: repo, input, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', HOME: repo } }).toString().trim();
  g(['init', '-q', '--bare']);
  const blob = g(['hash-object', '-w', '--stdin'], 'x');
  for (const name of [...DOTGIT, ...FINE]) {
    const tree = g(['mktree'], `100644 blob ${blob}\t${name}\n`);
    const r = spawnSync('git', ['fsck', '--strict', '--no-dangling', tree], { cwd: repo, encoding: 'utf8' });
    // fsck looks at every object of the repository: only lines about this tree count.
    const gitSays = (r.stdout + r.stderr).split('\n').some((l) => l.includes(tree) && l.includes('hasDotgit'));
    t.is(gitNameProblem(name) !== null, gitSays, `${JSON.stringify(name)}: git fsck ${gitSays ? 'refuses' : 'accepts'} it`);
  }
  t.truthy(gitNameProblem('a\\b'), 'a backslash is a separator on NTFS');
});

test('REST refuses names git reads as .git, backslashes and lone surrogates with 422, and changes nothing', async (t) => {
  const p = await newProject(server, 'names');
  const c = (method: string, route: string, body?: unknown) => server.api(method, `/content/${p.projectId}${route}`, { token: p.token, body });
  for (const name of [...DOTGIT, 'a\\b', '..\\x', 'x\\.git', '\ud800x', 'x\udc00']) {
    for (const path of [name, `dir/${name}/f.md`]) {
      const w = await c('POST', '/write', { path: `${path}`, content: 'x', node_type: 'markdown' });
      t.is(w.status, 422, `write ${JSON.stringify(path)}`);
      t.is(w.body.error.code, 'VALIDATION_ERROR');
    }
    t.is((await c('POST', '/mkdir', { path: name })).status, 422, `mkdir ${JSON.stringify(name)}`);
  }
  await c('POST', '/write', { path: 'ok.md', content: 'x', node_type: 'markdown' });
  t.is((await c('POST', '/mv', { old_path: 'ok.md', new_path: 'GIT~1' })).status, 422);
  t.is((await c('POST', '/bulk-write', { files: [{ path: 'fine.md', content: 'x', node_type: 'markdown' }, { path: '.git./x.md', content: 'x', node_type: 'markdown' }] })).status, 422);
  // The id surface goes through the same rule.
  for (const name of ['.git\u200d', 'GIT~1', 'a\\b']) {
    const created = await server.api('POST', '/nodes/markdown', { token: p.token, body: { project_id: p.projectId, name, content: 'x' } });
    t.is(created.status, 422, `id surface ${JSON.stringify(name)}: ${JSON.stringify(created.body)}`);
  }
  const ls = await c('GET', '/ls');
  t.deepEqual(ls.body.data.entries.map((e: { name: string }) => e.name), ['ok.md']);
  // The project still clones, and fsck is clean.
  const dir = git.dir('names-clone');
  await git.ok(['clone', remoteUrl(server, p.projectId, p.token), dir]);
  await git.ok(['fsck', '--strict'], { cwd: dir });
});

test('a push adding a name git reads as .git is refused and main does not move', async (t) => {
  const p = await newProject(server, 'push names');
  await server.services.content.write(p.projectId, { type: 'user', id: 'usr_x', author: 'x@example.com' }, { path: 'a.md', type: 'markdown', content: 'a' });
  const dir = git.dir('push-names');
  await git.ok(['clone', remoteUrl(server, p.projectId, p.token), dir]);
  const before = await git.ok(['rev-parse', 'origin/main'], { cwd: dir });
  for (const name of ['.GiT.', 'git~1', '.g\u200cit', 'a\\b']) {
    await git.ok(['reset', '-q', '--hard', 'origin/main'], { cwd: dir });
    // Plumbing: a working tree cannot hold these names, a pushed tree can.
    const blob = (await git.ok(['hash-object', '-w', '--stdin'], { cwd: dir, input: 'evil' })).trim();
    const sub = (await git.ok(['mktree'], { cwd: dir, input: `100644 blob ${blob}\tconfig\n` })).trim();
    const base = (await git.ok(['ls-tree', 'HEAD'], { cwd: dir })).trim();
    const tree = (await git.ok(['mktree'], { cwd: dir, input: `${base}\n040000 tree ${sub}\t${name}\n` })).trim();
    const commit = (await git.ok(['commit-tree', tree, '-p', 'HEAD', '-m', 'evil'], { cwd: dir })).trim();
    const push = await git.run(['push', 'origin', `${commit}:refs/heads/main`], { cwd: dir });
    t.not(push.code, 0, `push of ${JSON.stringify(name)} must fail`);
  }
  const after = (await git.ok(['ls-remote', 'origin', 'refs/heads/main'], { cwd: dir })).split('\t')[0];
  t.is(after, before.trim());
  const again = git.dir('push-names-again');
  await git.ok(['clone', remoteUrl(server, p.projectId, p.token), again]);
  await git.ok(['fsck', '--strict'], { cwd: again });
  t.deepEqual((await server.api('GET', `/content/${p.projectId}/ls`, { token: p.token })).body.data.entries.map((e: { name: string }) => e.name), ['a.md']);
});
