import test from 'ava';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { GitClient, newProject, remoteUrl } from './gitFixture.ts';

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
  await content.write(project.projectId, apiActor, { path: 'doc.md', type: 'markdown', content: 'v1\n' });
  const dir = git.dir(name.replace(/\W+/g, '-'));
  await git.ok(['clone', remoteUrl(server, project.projectId, project.token), dir]);
  writeFileSync(join(dir, 'pushed.md'), 'from git\n');
  await git.ok(['add', 'pushed.md'], { cwd: dir });
  await git.ok(['commit', '-qm', 'pushed with git'], { cwd: dir });
  return { project, content, dir, gitdir: join(server.dataDir, `${project.projectId}.git`) };
}

const log = (dir: string, ref: string) => git.ok(['log', '--format=%s', ref], { cwd: dir }).then((s) => s.trim().split('\n'));

test.serial('an API write while a push is in quarantine wins; the push is refused whole and succeeds again on top', async (t) => {
  const { project, content, dir, gitdir } = await setUp('race quarantine');
  const auth = server.services.authenticator;
  const original = auth.authenticate.bind(auth);
  let raced = false;
  // The hook asks the service while the pushed objects are still in quarantine: write then.
  auth.authenticate = async (token) => {
    const inQuarantine = readdirSync(join(gitdir, 'objects')).some((n) => n.startsWith('tmp_objdir-incoming-'));
    if (inQuarantine && !raced) {
      raced = true;
      await content.write(project.projectId, apiActor, { path: 'doc.md', type: 'markdown', content: 'v2 by the API\n' });
    }
    return original(token);
  };
  t.teardown(() => {
    auth.authenticate = original;
  });

  const r = await git.run(['push', 'origin', 'main'], { cwd: dir });
  t.true(raced);
  t.not(r.code, 0);
  t.regex(r.stderr, /failed to update ref|cannot lock ref/);
  t.is(content.findByPath(project.projectId, 'pushed.md'), null, 'nothing of the push was applied');
  t.is((await content.readValue(project.projectId, { path: 'doc.md' })).value, 'v2 by the API\n');
  t.is(content.projectVersion(project.projectId), 2);
  const pushes = () => content.auditLogs(project.projectId, { path: '' }).filter((e) => e.action === ('push' as never)).length;
  t.is(pushes(), 0, 'a push that did not land is not recorded');

  await git.ok(['pull', '-q', '--rebase', 'origin', 'main'], { cwd: dir });
  await git.ok(['push', 'origin', 'main'], { cwd: dir });
  t.is(pushes(), 1);
  t.is((await content.readValue(project.projectId, { path: 'pushed.md' })).value, 'from git\n');
  t.is((await content.readValue(project.projectId, { path: 'doc.md' })).value, 'v2 by the API\n');
  t.deepEqual((await log(dir, 'HEAD')).slice(0, 2), ['pushed with git', 'write doc.md']);
  t.is(content.projectVersion(project.projectId), 3);
});

test.serial('an API write after the push moved main but before it is indexed lands on top of the pushed commits', async (t) => {
  const { project, content, dir } = await setUp('race indexing');
  const original = content.reconcile.bind(content);
  let raced = false;
  content.reconcile = async (projectId, options) => {
    if (projectId === project.projectId && !raced) {
      raced = true;
      await content.write(project.projectId, apiActor, { path: 'doc.md', type: 'markdown', content: 'v2 by the API\n' });
    }
    return original(projectId, options);
  };
  t.teardown(() => {
    content.reconcile = original;
  });

  const r = await git.run(['push', 'origin', 'main'], { cwd: dir });
  t.is(r.code, 0, r.stderr);
  t.true(raced);
  await git.ok(['fetch', '-q', 'origin'], { cwd: dir });
  t.deepEqual((await log(dir, 'origin/main')).slice(0, 2).map((s) => s.split('\n')[0]), ['write doc.md', 'pushed with git']);
  t.is((await content.readValue(project.projectId, { path: 'pushed.md' })).value, 'from git\n');
  t.is((await content.readValue(project.projectId, { path: 'doc.md' })).value, 'v2 by the API\n');
  t.is(content.projectVersion(project.projectId), 3);
  const pushedVersion = content.listVersions(project.projectId, { path: 'pushed.md' }).versions[0]!;
  t.is(pushedVersion.message, 'pushed with git');
  // The API write indexed the pushed commit first: it is still the pusher's, not the commit author's.
  const adminId = (await server.login()).user.id;
  t.like(pushedVersion, { actorType: 'user', actorId: adminId, author: 'admin@example.com', commitAuthor: 'git-tester@example.com' });
  t.like(content.listVersions(project.projectId, { path: 'doc.md' }).versions[0]!, { actorType: 'agent', actorId: apiActor.id });
  const pushes = content.auditLogs(project.projectId, { path: '' }).filter((e) => e.action === 'push');
  t.is(pushes.length, 1);
  t.like(pushes[0]!, { actorId: adminId, details: { commits: 1 } });
});
