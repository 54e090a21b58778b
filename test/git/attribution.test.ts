import test from 'ava';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliUser } from '../cli/harness.ts';
import { ADMIN_EMAIL, startTestServer, type TestServer } from '../helpers/server.ts';
import { SseClient } from '../sync/sse.ts';
import { GitClient, newProject, remoteUrl } from './gitFixture.ts';

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

// The git client commits as `Git Tester <git-tester@example.com>` (gitFixture): what a commit
// claims, whoever pushes it. The administrator pushes.
const CLAIMED = 'git-tester@example.com';

test('a pushed version is by the authenticated pusher everywhere; the author the commit claims is beside it', async (t) => {
  const project = await newProject(server, 'attribution');
  const p = project.projectId;
  const adminId = (await server.login()).user.id;
  await server.api('POST', `/content/${p}/write`, { token: project.token, body: { path: 'notes.md', node_type: 'markdown', content: 'v1\n' } });
  const feed = await SseClient.open(`${server.url}/api/v1/events?project_id=${p}`, project.token);
  t.teardown(() => feed.close());
  const dir = git.dir('attribution');
  await git.ok(['clone', remoteUrl(server, p, project.token), dir]);
  writeFileSync(join(dir, 'notes.md'), 'v2 from git\n');
  await git.ok(['commit', '-qam', 'edit with git'], { cwd: dir });
  await git.ok(['push', 'origin', 'main'], { cwd: dir });

  const byPusher = { actor_type: 'user', actor_id: adminId, author: ADMIN_EMAIL };
  const versions = (await server.api('GET', `/content/${p}/versions?path=notes.md`, { token: project.token })).body.data;
  t.like(versions.versions[0], { ...byPusher, authored_by: CLAIMED, message: 'edit with git' });
  t.like(versions.versions[1], { ...byPusher, authored_by: null }, 'an API write names no other author');
  const byId = (await server.api('GET', `/nodes/${versions.id}/versions`, { token: project.token })).body.data;
  t.like(byId.versions[0], { ...byPusher, authored_by: CLAIMED });
  const commits = (await server.api('GET', `/content/${p}/versions`, { token: project.token })).body.data.commits;
  t.like(commits[0], { ...byPusher, authored_by: CLAIMED, message: 'edit with git' });
  const audit = (await server.api('GET', `/nodes/${versions.id}/audit-logs`, { token: project.token })).body.data.logs;
  t.like(audit[0], { action: 'update', ...byPusher, authored_by: CLAIMED });
  const changelog = (await server.api('GET', `/sync/changelog?project_id=${p}&cursor=1`, { token: project.token })).body.data;
  t.deepEqual(changelog.entries[0].actor, { type: 'user', id: adminId, author: ADMIN_EMAIL, authored_by: CLAIMED });
  const event = await feed.waitFor('the pushed commit on the feed', () => feed.changes.find((c) => c.data.message === 'edit with git'));
  t.deepEqual(event.data.actor, { type: 'user', id: adminId, author: ADMIN_EMAIL, authored_by: CLAIMED });

  const u = new CliUser({ CNS_SERVER: server.url, CNS_TOKEN: project.token });
  t.teardown(() => u.dispose());
  const log = await u.run(['log', 'notes.md', '-p', p]);
  t.is(log.code, 0, log.stderr);
  t.regex(log.stdout, new RegExp(`v2\\*\\s+\\S+ \\S+\\s+${ADMIN_EMAIL} \\(authored by ${CLAIMED}\\)\\s+update`));
  t.regex(log.stdout, new RegExp(`v1\\s+\\S+ \\S+\\s+${ADMIN_EMAIL}\\s+create`));

  // A rebuild from git alone (the notes) gives the same attribution.
  await server.services.content.reindexProject(p);
  const rebuilt = server.services.content.listVersions(p, { path: 'notes.md' }).versions[0]!;
  t.like(rebuilt, { actorType: 'user', actorId: adminId, author: ADMIN_EMAIL, commitAuthor: CLAIMED });
});

test('a push whose commits name the pusher shows no other author', async (t) => {
  const project = await newProject(server, 'self-authored');
  await server.api('POST', `/content/${project.projectId}/write`, { token: project.token, body: { path: 'a.md', node_type: 'markdown', content: 'a\n' } });
  const dir = git.dir('self-authored');
  await git.ok(['clone', remoteUrl(server, project.projectId, project.token), dir]);
  writeFileSync(join(dir, 'a.md'), 'b\n');
  await git.ok(['-c', `user.email=${ADMIN_EMAIL}`, 'commit', '-qam', 'mine'], { cwd: dir });
  await git.ok(['push', 'origin', 'main'], { cwd: dir });
  const v = (await server.api('GET', `/content/${project.projectId}/versions?path=a.md`, { token: project.token })).body.data.versions[0];
  t.like(v, { author: ADMIN_EMAIL, authored_by: null, message: 'mine' });
});
