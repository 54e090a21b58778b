import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { GitClient, newKey, newProject, projectState, remoteUrl, type ProjectFixture } from './gitFixture.ts';

const LIMIT = 3 * 1024 * 1024;
let server: TestServer;
let git: GitClient;
const actor = { type: 'user' as const, id: 'usr_writer', author: 'writer@example.com' };

test.before(async () => {
  server = await startTestServer({ maxContentBytes: LIMIT });
  git = new GitClient();
});

test.after.always(async () => {
  await server?.stop();
  git?.dispose();
});

/** A project with two notes written through the store, and a clone of it. */
async function clonedProject(name: string, token?: (p: ProjectFixture) => Promise<string>) {
  const project = await newProject(server, name);
  const c = server.services.content;
  await c.write(project.projectId, actor, { path: 'notes/a.md', type: 'markdown', content: '# A\n' });
  await c.write(project.projectId, actor, { path: 'notes/b.md', type: 'markdown', content: '# B\n' });
  const credential = token ? await token(project) : project.token;
  const dir = git.dir(name.replace(/\W+/g, '-'));
  await git.ok(['clone', remoteUrl(server, project.projectId, credential), dir]);
  return { project, dir, content: c };
}

function write(dir: string, path: string, bytes: string | Buffer): void {
  mkdirSync(join(dir, path, '..'), { recursive: true });
  writeFileSync(join(dir, path), bytes);
}

test('pushed commits become versions, in order, with the pusher as actor and the commit message', async (t) => {
  const { project, dir, content } = await clonedProject('edit and push');
  const adminId = (await server.login()).user.id;
  write(dir, 'notes/a.md', '# A, edited with git\n');
  write(dir, 'data/new.json', '{"x": [1, 2]}\n');
  write(dir, 'pics/pic.png', randomBytes(2000));
  await git.ok(['add', '-A'], { cwd: dir });
  await git.ok(['commit', '-qm', 'Edit from git\n\nWith a body.'], { cwd: dir });
  write(dir, 'notes/a.md', '# A, edited twice\n');
  await git.ok(['commit', '-qam', 'Second edit'], { cwd: dir });
  const pushedFrom = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();
  const r = await git.run(['push', 'origin', 'main'], { cwd: dir });
  t.is(r.code, 0, r.stderr);
  const pushedTo = new Date().toISOString();

  const versions = content.listVersions(project.projectId, { path: 'notes/a.md' }).versions;
  t.deepEqual(
    versions.map((v) => [v.version, v.message, v.actorType, v.actorId]),
    [
      [3, 'Second edit', 'user', adminId],
      [2, 'Edit from git\n\nWith a body.', 'user', adminId],
      [1, 'write notes/a.md', 'user', 'usr_writer'],
    ],
  );
  // Author text = the pusher's, the commit's own author beside it; created_at = when the push arrived (the same for both commits).
  t.deepEqual(versions.map((v) => [v.author, v.commitAuthor]), [
    ['admin@example.com', 'git-tester@example.com'],
    ['admin@example.com', 'git-tester@example.com'],
    ['writer@example.com', null],
  ]);
  const receivedAt = versions[0]!.createdAt;
  t.true(receivedAt >= pushedFrom && receivedAt <= pushedTo, receivedAt);
  t.is(versions[1]!.createdAt, receivedAt);
  t.is((await content.readValue(project.projectId, { path: 'notes/a.md' })).value, '# A, edited twice\n');
  t.is(content.getByPath(project.projectId, 'data/new.json').type, 'json');
  t.deepEqual((await content.readValue(project.projectId, { path: 'data/new.json' })).value, { x: [1, 2] });
  t.is(content.getByPath(project.projectId, 'pics/pic.png').type, 'file');
  t.true((await content.readContent(project.projectId, { path: 'pics/pic.png' })).bytes.equals(readFileSync(join(dir, 'pics/pic.png'))));
  const head = (await git.ok(['rev-parse', 'HEAD'], { cwd: dir })).trim();
  t.is(content.stats(project.projectId).lastChange?.commitId, head);

  const pushes = content.auditLogs(project.projectId, { path: '' }).filter((e) => e.action === 'push');
  t.is(pushes.length, 1, 'the push itself is in the audit log, once');
  const push = pushes[0]!;
  t.is(push.actorId, adminId);
  t.is(push.timestamp, receivedAt);
  t.is(push.details.after, head);
  t.is(push.details.commits, 2);
  t.is(push.details.ref, 'refs/heads/main');
});

test('a push with an access key records the connection as actor', async (t) => {
  let keyId = '';
  const { project, dir, content } = await clonedProject('key push', async (p) => {
    const res = await server.api('POST', '/connections', { token: p.token, body: { project_id: p.projectId, kind: 'api', name: 'pusher' } });
    keyId = res.body.data.connection.id;
    return res.body.data.key;
  });
  write(dir, 'notes/b.md', '# B by key\n');
  await git.ok(['commit', '-qam', 'by key'], { cwd: dir });
  await git.ok(['push', 'origin', 'main'], { cwd: dir });
  const v = content.listVersions(project.projectId, { path: 'notes/b.md' }).versions[0]!;
  t.is(v.actorType, 'agent');
  t.is(v.actorId, keyId);
  t.is(v.author, 'agent:pusher', 'the author text is the key that pushed');
  t.is(v.commitAuthor, 'git-tester@example.com', 'the author the commit names is kept beside it');
  const push = content.auditLogs(project.projectId, { path: '' }).find((e) => e.action === 'push');
  t.like(push, { actorType: 'agent', actorId: keyId, author: 'agent:pusher' });
});

test('renaming a file or a folder with git keeps the node ids', async (t) => {
  const { project, dir, content } = await clonedProject('rename');
  const a = content.getByPath(project.projectId, 'notes/a.md');
  const folder = content.getByPath(project.projectId, 'notes');
  await git.ok(['mv', 'notes/a.md', 'notes/renamed.md'], { cwd: dir });
  await git.ok(['commit', '-qm', 'rename a file'], { cwd: dir });
  await git.ok(['mv', 'notes', 'journal'], { cwd: dir });
  await git.ok(['commit', '-qm', 'rename the folder'], { cwd: dir });
  await git.ok(['push', 'origin', 'main'], { cwd: dir });
  const moved = content.getByPath(project.projectId, 'journal/renamed.md');
  t.is(moved.id, a.id);
  t.is(content.getByPath(project.projectId, 'journal').id, folder.id);
  t.is(content.findByPath(project.projectId, 'notes/a.md'), null);
  const ops = content.listVersions(project.projectId, { id: a.id }).versions.map((v) => v.operation);
  t.true(ops.includes('move'));
});

test('moving a file into .trash with git is allowed and keeps its id', async (t) => {
  const { project, dir, content } = await clonedProject('trash move');
  const b = content.getByPath(project.projectId, 'notes/b.md');
  mkdirSync(join(dir, '.trash'), { recursive: true });
  await git.ok(['mv', 'notes/b.md', `.trash/${b.id}_b.md`], { cwd: dir });
  await git.ok(['commit', '-qm', 'trash b'], { cwd: dir });
  const r = await git.run(['push', 'origin', 'main'], { cwd: dir });
  t.is(r.code, 0, r.stderr);
  const after = content.getById(project.projectId, b.id);
  t.is(after.state, 'trashed');
});

test('a large push arrives chunked and streamed, and is accepted under the size limit', async (t) => {
  const { project, dir, content } = await clonedProject('large');
  const big = randomBytes(LIMIT - 1024);
  write(dir, 'big.bin', big);
  await git.ok(['add', 'big.bin'], { cwd: dir });
  await git.ok(['commit', '-qm', 'big file'], { cwd: dir });
  const r = await git.run(['push', 'origin', 'main'], { cwd: dir, env: { GIT_TRACE_CURL: '1', GIT_TRACE_CURL_NO_DATA: '1' } });
  t.is(r.code, 0, r.stderr.slice(-2000));
  t.regex(r.stderr, /Transfer-Encoding: chunked/);
  t.true((await content.readContent(project.projectId, { path: 'big.bin' })).bytes.equals(big));
});

/** Pushes a prepared clone, expects a refusal showing `reason`, and checks nothing changed. */
async function expectRejected(t: import('ava').ExecutionContext, projectId: string, dir: string, args: string[], reason: RegExp) {
  const before = await projectState(server, git, projectId);
  const r = await git.run(['push', ...args], { cwd: dir });
  t.not(r.code, 0);
  t.regex(r.stderr, reason);
  t.deepEqual(await projectState(server, git, projectId), before);
}

test('pushing another branch or a tag is refused', async (t) => {
  const { project, dir } = await clonedProject('other ref');
  write(dir, 'x.md', 'x');
  await git.ok(['add', 'x.md'], { cwd: dir });
  await git.ok(['commit', '-qm', 'x'], { cwd: dir });
  await expectRejected(t, project.projectId, dir, ['origin', 'main:refs/heads/feature'], /remote: cns: only refs\/heads\/main \(or refs\/for\/main, merged by the service\) can be pushed; refs\/heads\/feature was refused/);
  await git.ok(['tag', 'v1'], { cwd: dir });
  await expectRejected(t, project.projectId, dir, ['origin', 'v1'], /only refs\/heads\/main \(or refs\/for\/main, merged by the service\) can be pushed; refs\/tags\/v1/);
  await expectRejected(t, project.projectId, dir, ['origin', ':main'], /deleting main is not allowed/);
});

test('a non-fast-forward push is refused, even forced', async (t) => {
  const { project, dir, content } = await clonedProject('non ff');
  await content.write(project.projectId, actor, { path: 'notes/a.md', type: 'markdown', content: 'changed by the API' });
  write(dir, 'notes/a.md', 'changed by git');
  await git.ok(['commit', '-qam', 'diverge'], { cwd: dir });
  await expectRejected(t, project.projectId, dir, ['origin', 'main'], /rejected.*\(fetch first\)/);
  await expectRejected(t, project.projectId, dir, ['--force', 'origin', 'main'], /remote: cns: non-fast-forward update of main refused/);
});

test('paths the API would refuse are refused: .git, control characters, .cnskeep with content, .trash additions', async (t) => {
  const { project, dir } = await clonedProject('bad paths');
  const blob = (await git.ok(['hash-object', '-w', '--stdin'], { cwd: dir, input: 'x\n' })).trim();
  const inner = (await git.ok(['mktree'], { cwd: dir, input: `100644 blob ${blob}\tconfig\n` })).trim();
  const commitWith = async (entries: string) => {
    const base = (await git.ok(['ls-tree', 'HEAD'], { cwd: dir })).trim();
    const tree = (await git.ok(['mktree'], { cwd: dir, input: `${base}\n${entries}\n` })).trim();
    return (await git.ok(['commit-tree', tree, '-p', 'HEAD', '-m', 'bad'], { cwd: dir })).trim();
  };
  const dotGit = await commitWith(`040000 tree ${inner}\t.git`);
  await expectRejected(t, project.projectId, dir, ['origin', `${dotGit}:refs/heads/main`], /remote: cns: [0-9a-f]{12}: \.git\/config: the path may not contain \.git/);
  const upper = await commitWith(`040000 tree ${inner}\tsub.GIT`);
  const upperOk = await git.run(['push', 'origin', `${upper}:refs/heads/main`], { cwd: dir });
  t.is(upperOk.code, 0, 'sub.GIT is an ordinary name');
  await git.ok(['fetch', 'origin'], { cwd: dir });
  await git.ok(['reset', '-q', '--hard', 'origin/main'], { cwd: dir });
  const control = await commitWith(`100644 blob ${blob}\tbad\u0001name.md`);
  await expectRejected(t, project.projectId, dir, ['origin', `${control}:refs/heads/main`], /control characters/);
  const keep = await commitWith(`100644 blob ${blob}\t.cnskeep`);
  await expectRejected(t, project.projectId, dir, ['origin', `${keep}:refs/heads/main`], /\.cnskeep is reserved for empty folders/);
  const link = await commitWith(`120000 blob ${blob}\tlink`);
  await expectRejected(t, project.projectId, dir, ['origin', `${link}:refs/heads/main`], /symbolic links are not supported/);
  write(dir, '.trash/sneaky.md', 'not a move');
  await git.ok(['add', '-A'], { cwd: dir });
  await git.ok(['commit', '-qm', 'add to trash'], { cwd: dir });
  await expectRejected(t, project.projectId, dir, ['origin', 'main'], /\.trash changes only by moving nodes/);
});

test('commits carrying cns trailers (Cns-Actor, Cns-Node, Cns-From) are refused: they would forge versions', async (t) => {
  const { project, dir, content } = await clonedProject('forged trailers');
  const victim = content.getByPath(project.projectId, 'notes/a.md');
  write(dir, 'notes/a.md', 'forged');
  await git.ok(['add', '-A'], { cwd: dir });
  await git.ok(['commit', '-qm', `innocent\n\nCns-Actor: user usr_someone_else someone@example.com\nCns-Node: ${victim.id} 9 markdown update - 6 - notes/a.md`], { cwd: dir });
  await expectRejected(t, project.projectId, dir, ['origin', 'main'], /remote: cns: [0-9a-f]{12}: the commit message has a "Cns-Actor:" line; Cns-Actor, Cns-Node and Cns-From lines are written by the service only/);
  // Any of the three keys, in any case, anywhere in the message; only the new commits are checked.
  await git.ok(['commit', '-q', '--amend', '-m', 'moved\n\ncns-from: nod_x notes/b.md'], { cwd: dir });
  await expectRejected(t, project.projectId, dir, ['origin', 'main'], /"cns-from:" line/);
  await git.ok(['commit', '-q', '--amend', '-m', 'Reworded: mentions Cns-Node: in the middle of a line'], { cwd: dir });
  const r = await git.run(['push', 'origin', 'main'], { cwd: dir });
  t.is(r.code, 0, r.stderr);
  t.is((await content.readValue(project.projectId, { path: 'notes/a.md' })).value, 'forged');
});

test('a file over the size limit is refused', async (t) => {
  const { project, dir } = await clonedProject('oversize');
  write(dir, 'huge.bin', randomBytes(LIMIT + 1));
  await git.ok(['add', 'huge.bin'], { cwd: dir });
  await git.ok(['commit', '-qm', 'too big'], { cwd: dir });
  await expectRejected(t, project.projectId, dir, ['origin', 'main'], new RegExp(`huge\\.bin: ${LIMIT + 1} bytes is larger than the limit of ${LIMIT} bytes`));
});

test('a read-only key can clone but not push; git shows why', async (t) => {
  const { project, dir } = await clonedProject('read key', (p) => newKey(server, p, { name: 'reader', mode: 'read' }));
  write(dir, 'notes/a.md', 'attempt');
  await git.ok(['commit', '-qam', 'attempt'], { cwd: dir });
  await expectRejected(t, project.projectId, dir, ['origin', 'main'], /remote: This access key is read-only\.[\s\S]*403/);
});

test('a viewer cannot push', async (t) => {
  const { project, dir } = await clonedProject('viewer');
  const viewer = await server.createUser('viewer@example.com');
  const added = await server.api('POST', `/projects/${project.projectId}/members`, { token: project.token, body: { user_id: viewer.id, role: 'viewer' } });
  t.is(added.status, 201, JSON.stringify(added.body));
  write(dir, 'notes/a.md', 'attempt');
  await git.ok(['commit', '-qam', 'attempt'], { cwd: dir });
  await git.ok(['remote', 'set-url', 'origin', remoteUrl(server, project.projectId, viewer.token)], { cwd: dir });
  await expectRejected(t, project.projectId, dir, ['origin', 'main'], /remote: Your role \(viewer\) on this project does not allow content:write/);
});
