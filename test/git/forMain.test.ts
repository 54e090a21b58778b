import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { GitClient, newProject, remoteUrl, storeFiles, workingTreeFiles } from './gitFixture.ts';

let server: TestServer;
let git: GitClient;
const apiActor = { type: 'agent' as const, id: 'con_api', author: 'agent:api-writer' };

test.before(async () => {
  server = await startTestServer();
  git = new GitClient();
});

test.after.always(async () => {
  await server?.stop();
  git?.dispose();
});

async function setUp(name: string) {
  const project = await newProject(server, name);
  const content = server.services.content;
  const p = project.projectId;
  await content.write(p, apiActor, { path: 'a.md', type: 'markdown', content: 'line1\nline2\nline3\n' });
  await content.write(p, apiActor, { path: 'config', type: 'json', content: { a: 1, b: 1 } });
  await content.write(p, apiActor, { path: 'old.txt', type: 'file', content: 'old' });
  const dir = git.dir(name.replace(/\W+/g, '-'));
  await git.ok(['clone', remoteUrl(server, p, project.token), dir]);
  return { project, p, content, dir };
}

const commitAll = async (dir: string, message: string) => {
  await git.ok(['add', '-A'], { cwd: dir });
  await git.ok(['commit', '-qm', message], { cwd: dir });
};

test.serial('a push to refs/for/main is merged three ways into main by the service, as the pusher', async (t) => {
  const { project, p, content, dir } = await setUp('for main merge');
  const me = (await server.api('GET', '/auth/me', { token: project.token })).body.data;
  // Main moves on through the API after the clone.
  await content.write(p, apiActor, { path: 'a.md', type: 'markdown', content: 'LINE1\nline2\nline3\n' });
  await content.write(p, apiActor, { path: 'config', type: 'json', content: { a: 2, b: 1 } });
  await content.write(p, apiActor, { path: 'api.md', type: 'markdown', content: 'from the API\n' });
  const oldId = content.getByPath(p, 'old.txt').id;

  writeFileSync(join(dir, 'a.md'), 'line1\nline2\nLINE3\n');
  writeFileSync(join(dir, 'config'), JSON.stringify({ a: 1, b: 2 }, null, 2) + '\n');
  writeFileSync(join(dir, 'new.md'), 'pushed\n');
  await git.ok(['mv', 'old.txt', 'renamed.txt'], { cwd: dir });
  await commitAll(dir, 'edit from git');

  const direct = await git.run(['push', 'origin', 'HEAD:main'], { cwd: dir });
  t.not(direct.code, 0, 'a plain push is refused: main moved');
  const pv = content.projectVersion(p);
  const r = await git.run(['push', 'origin', 'HEAD:refs/for/main'], { cwd: dir });
  t.is(r.code, 0, r.stderr);
  t.regex(r.stderr, /remote: cns: merged [0-9a-f]{12} into main as [0-9a-f]{12}/);
  t.notRegex(r.stderr, /error:/);

  t.is(content.projectVersion(p), pv + 1, 'one merge commit');
  t.is((await content.readValue(p, { path: 'a.md' })).value, 'LINE1\nline2\nLINE3\n');
  t.deepEqual((await content.readValue(p, { path: 'config' })).value, { a: 2, b: 2 });
  t.is(content.getByPath(p, 'config').type, 'json');
  t.is(content.getByPath(p, 'renamed.txt').id, oldId, 'a rename keeps the node id');
  t.is(content.findByPath(p, 'old.txt'), null);
  const v = content.listVersions(p, { path: 'new.md' }).versions[0]!;
  t.is(v.actorId, me.id ?? me.user?.id);
  t.is(v.actorType, 'user');

  // No ref refs/for/main is left; main's tip is a merge with the pushed commit as second parent.
  const gitdir = join(server.dataDir, `${p}.git`);
  t.is((await git.ok([`--git-dir=${gitdir}`, 'for-each-ref', '--format=%(refname)', 'refs/for'])).trim(), '');
  const pushed = (await git.ok(['rev-parse', 'HEAD'], { cwd: dir })).trim();
  const parents = (await git.ok([`--git-dir=${gitdir}`, 'log', '-1', '--format=%P', 'main'])).trim().split(' ');
  t.is(parents.length, 2);
  t.is(parents[1], pushed);

  // The clone fast-forwards to it and has what the store has.
  await git.ok(['pull', '--ff-only', 'origin', 'main'], { cwd: dir });
  const expected = await storeFiles(server, p);
  const files = workingTreeFiles(dir);
  t.deepEqual([...files.keys()].sort(), [...expected.keys()].sort());
  for (const [path, bytes] of expected) t.true(readFileSync(join(dir, path)).equals(bytes), path);
  t.deepEqual((await content.reindexProject(p)).differences, []);
});

test.serial('a real conflict refuses the push to refs/for/main with the conflicting paths; main is unchanged', async (t) => {
  const { p, content, dir } = await setUp('for main conflict');
  await content.write(p, apiActor, { path: 'a.md', type: 'markdown', content: 'line1\nby the API\nline3\n' });
  const pv = content.projectVersion(p);
  writeFileSync(join(dir, 'a.md'), 'line1\nby git\nline3\n');
  writeFileSync(join(dir, 'fine.md'), 'fine\n');
  await commitAll(dir, 'conflicting edit');
  const r = await git.run(['push', 'origin', 'HEAD:refs/for/main'], { cwd: dir });
  t.not(r.code, 0);
  t.regex(r.stderr, /remote: cns: conflict/);
  t.regex(r.stderr, /a\.md \(changed in the push and in main\)/);
  t.regex(r.stderr, /refs\/for\/main \(merge conflict in 1 path\(s\)\)/);
  t.is(content.projectVersion(p), pv);
  t.is(content.findByPath(p, 'fine.md'), null);
});

test.serial('pushes to refs/for/main do not starve under concurrent API writers', async (t) => {
  const { p, content, dir } = await setUp('for main load');
  let stop = false;
  let apiWrites = 0;
  const writers = [0, 1, 2, 3].map(async (w) => {
    for (let i = 0; !stop; i++) {
      await content.write(p, apiActor, { path: `api/w${w}.md`, type: 'markdown', content: `writer ${w} write ${i}\n` });
      apiWrites++;
    }
  });
  const results: number[] = [];
  try {
    for (let i = 0; i < 4; i++) {
      writeFileSync(join(dir, `git-${i}.md`), `push ${i}\n`);
      await commitAll(dir, `push ${i}`);
      const r = await git.run(['push', 'origin', 'HEAD:refs/for/main'], { cwd: dir });
      results.push(r.code);
    }
  } finally {
    stop = true;
    await Promise.all(writers);
  }
  t.deepEqual(results, [0, 0, 0, 0]);
  t.true(apiWrites > 0);
  for (let i = 0; i < 4; i++) t.is((await content.readValue(p, { path: `git-${i}.md` })).value, `push ${i}\n`);
});
