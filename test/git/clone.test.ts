import test from 'ava';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CNS_BIN } from '../helpers/cli.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { GitClient, newKey, newProject, remoteUrl, storeFiles, workingTreeFiles, type ProjectFixture } from './gitFixture.ts';

let server: TestServer;
let git: GitClient;
let project: ProjectFixture;
const actor = { type: 'user' as const, id: 'usr_writer', author: 'writer@example.com' };

test.before(async () => {
  server = await startTestServer();
  git = new GitClient();
  project = await newProject(server, 'clone me');
  const c = server.services.content;
  await c.write(project.projectId, actor, { path: 'notes/intro.md', type: 'markdown', content: '# Intro\n\nSome *text* with ünïcode.\n' });
  await c.write(project.projectId, actor, { path: 'data/config.json', type: 'json', content: { b: [1, 2, { deep: true }], a: 'ä' } });
  await c.write(project.projectId, actor, { path: 'assets/blob.bin', type: 'file', content: randomBytes(70_000) });
  await c.write(project.projectId, actor, { path: 'a/b/c/deep.md', type: 'markdown', content: 'deep' });
  await c.mkdir(project.projectId, actor, 'empty');
  await c.write(project.projectId, actor, { path: 'notes/intro.md', type: 'markdown', content: '# Intro v2\n' });
});

test.after.always(async () => {
  await server?.stop();
  git?.dispose();
});

test('a full clone has every file byte for byte as the store returns it, and the whole history', async (t) => {
  const dir = git.dir('full');
  await git.ok(['clone', remoteUrl(server, project.projectId, project.token), dir]);
  const expected = await storeFiles(server, project.projectId);
  t.deepEqual([...workingTreeFiles(dir).keys()].sort(), [...expected.keys()].sort());
  for (const [path, bytes] of expected) t.true(readFileSync(`${dir}/${path}`).equals(bytes), path);
  const count = await git.ok(['rev-list', '--count', 'HEAD'], { cwd: dir });
  t.is(Number(count.trim()), server.services.content.stats(project.projectId).commitCount);
  t.is((await git.ok(['rev-parse', '--abbrev-ref', 'HEAD'], { cwd: dir })).trim(), 'main');
});

test('a --depth 1 clone has the same files and one commit', async (t) => {
  const dir = git.dir('shallow');
  await git.ok(['clone', '--depth', '1', remoteUrl(server, project.projectId, project.token), dir]);
  const expected = await storeFiles(server, project.projectId);
  const files = workingTreeFiles(dir);
  t.is(files.size, expected.size);
  for (const [path, bytes] of expected) t.true(files.get(path)?.equals(bytes), path);
  t.is((await git.ok(['rev-list', '--count', 'HEAD'], { cwd: dir })).trim(), '1');
});

test('fetch speaks protocol v2, and gzip-compressed request bodies are passed through', async (t) => {
  // A project of its own: the other tests compare against a project nobody writes to meanwhile.
  const own = await newProject(server, 'gzip');
  await server.services.content.write(own.projectId, actor, { path: 'first.md', type: 'markdown', content: 'first' });
  const dir = git.dir('gzip');
  await git.ok(['clone', remoteUrl(server, own.projectId, own.token), dir]);
  // Many local commits make the negotiation request large enough for git to gzip it.
  for (let i = 0; i < 60; i++) await git.ok(['commit', '--allow-empty', '-qm', `local ${i}`], { cwd: dir });
  await server.services.content.write(own.projectId, actor, { path: 'later.md', type: 'markdown', content: 'later' });
  const r = await git.run(['-c', 'protocol.version=2', 'fetch', 'origin'], { cwd: dir, env: { GIT_TRACE_CURL: '1', GIT_TRACE_CURL_NO_DATA: '1', GIT_TRACE_PACKET: '1' } });
  t.is(r.code, 0, r.stderr.slice(-2000));
  t.regex(r.stderr, /Git-Protocol: version=2/);
  t.regex(r.stderr, /packet:\s+git< version 2/);
  t.regex(r.stderr, /Content-Encoding: gzip/);
  const tip = await git.ok(['rev-parse', 'origin/main'], { cwd: dir });
  t.is(tip.trim(), server.services.content.stats(own.projectId).lastChange!.commitId);
});

test('without credentials the server challenges with Basic; a bad token is refused', async (t) => {
  const url = `${remoteUrl(server, project.projectId)}/info/refs?service=git-upload-pack`;
  const res = await fetch(url);
  t.is(res.status, 401);
  t.is(res.headers.get('www-authenticate'), 'Basic realm="cns"');
  const bad = await fetch(url, { headers: { authorization: `Basic ${Buffer.from('cns:nope').toString('base64')}` } });
  t.is(bad.status, 401);
  const r = await git.run(['clone', remoteUrl(server, project.projectId), git.dir('anonymous')]);
  t.not(r.code, 0);
  t.regex(r.stderr, /could not read Username|Authentication failed/);
});

test('the challenge is answered by `cns git-credential` with CNS_TOKEN, or with the credentials file', async (t) => {
  const helper = ['-c', `credential.helper=!"${process.execPath}" "${CNS_BIN}" git-credential`];
  const url = remoteUrl(server, project.projectId);
  await git.ok([...helper, 'clone', url, git.dir('helper-env')], { env: { CNS_TOKEN: project.token } });
  t.true(workingTreeFiles(git.dir('helper-env')).has('notes/intro.md'));

  const config = git.dir('xdg');
  const { saveServerCredentials } = await import('../../src/cli/credentials.ts');
  saveServerCredentials(server.url, { token: project.token, email: 'admin@example.com' }, `${config}/cns/credentials.json`);
  await git.ok([...helper, 'clone', url, git.dir('helper-file')], { env: { XDG_CONFIG_HOME: config } });
  t.true(workingTreeFiles(git.dir('helper-file')).has('data/config.json'));
});

test('a Bearer header and an access key in the URL work too', async (t) => {
  await git.ok(['-c', `http.extraHeader=Authorization: Bearer ${project.token}`, 'clone', remoteUrl(server, project.projectId), git.dir('bearer')]);
  const key = await newKey(server, project, { name: 'cloner', mode: 'read' });
  await git.ok(['clone', remoteUrl(server, project.projectId, key), git.dir('key')]);
  t.pass();
});

test('a key limited to a subtree cannot clone, and git shows why', async (t) => {
  const key = await newKey(server, project, { name: 'scoped', scope_path: 'notes' });
  const r = await git.run(['clone', remoteUrl(server, project.projectId, key), git.dir('scoped')]);
  t.not(r.code, 0);
  t.regex(r.stderr, /remote: This access key is limited to "notes". Cloning or pushing needs a key whose scope is the whole project/);
  t.regex(r.stderr, /403/);
});

test('an unknown project or another project answers 404 without revealing it', async (t) => {
  const other = await server.createUser('stranger@example.com');
  const r = await git.run(['clone', remoteUrl(server, project.projectId, other.token), git.dir('stranger')]);
  t.not(r.code, 0);
  t.regex(r.stderr, /Project not found/);
  const res = await fetch(`${server.url}/git/prj_missing.git/info/refs?service=git-upload-pack`, {
    headers: { authorization: `Bearer ${project.token}` },
  });
  t.is(res.status, 404);
  const dumb = await fetch(`${server.url}/git/${project.projectId}.git/HEAD`, { headers: { authorization: `Bearer ${project.token}` } });
  t.is(dumb.status, 404);
});

test('API writes appear to `git pull` as one commit each, with the actor as author', async (t) => {
  const own = await newProject(server, 'pull');
  await server.services.content.write(own.projectId, actor, { path: 'first.md', type: 'markdown', content: 'first' });
  const dir = git.dir('pull');
  await git.ok(['clone', remoteUrl(server, own.projectId, own.token), dir]);
  const agent = { type: 'agent' as const, id: 'con_x', author: 'agent:summarizer' };
  await server.services.content.write(own.projectId, agent, { path: 'pulled/one.md', type: 'markdown', content: 'one' });
  await server.services.content.write(own.projectId, agent, { path: 'pulled/two.md', type: 'markdown', content: 'two' });
  await git.ok(['pull', '-q', '--ff-only'], { cwd: dir });
  const log = (await git.ok(['log', '-2', '--format=%an|%s', '--name-only'], { cwd: dir })).trim();
  t.regex(log, /^agent:summarizer\|write pulled\/two\.md\n+pulled\/two\.md\n+agent:summarizer\|write pulled\/one\.md\n+pulled\/one\.md$/);
});
