import test from 'ava';
import { createKey, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;
let pid: string;
test.before(async () => {
  server = await startTestServer();
  token = (await server.login()).token;
  pid = (await defaultProject(server, token)).projectId;
});
test.after.always(() => server?.stop());

const write = (path: string, content: string, message?: string) =>
  server.api('POST', `/content/${pid}/write`, { token, body: { path, node_type: 'markdown', content, ...(message ? { message } : {}) } });

test('a scoped key sees only its subtree in the dashboard: counts, last change, connections and syncs', async (t) => {
  await write('team/a.md', 'a', 'team note');
  await write('team/sub/b.md', 'b');
  await write('teammates/x.md', 'a sibling whose name starts like the scope');
  await write('secret/plan.md', 'hidden', 'secret acquisition plan');
  const trashed = await write('team/old.md', 'old');
  await server.api('DELETE', `/nodes/${trashed.body.data.id}`, { token });
  const outside = await server.api('POST', '/sync/bootstrap', { token, body: { project_id: pid, provider: 'folder', config: { path: 'secret' } } });
  t.is(outside.status, 201, JSON.stringify(outside.body));
  await write('secret/last.md', 'the last commit is outside the scope', 'secret last words');

  const key = await createKey(server, token, pid, { scope_path: 'team', mode: 'read' });
  const full = (await server.api('GET', `/projects/${pid}/dashboard`, { token })).body.data;
  const res = await server.api('GET', `/projects/${pid}/dashboard`, { token: key.key });
  t.is(res.status, 200);
  const dash = res.body.data;
  t.is(dash.nodes.markdown, 2, 'team/a.md and team/sub/b.md');
  t.is(dash.nodes.folder, 2, 'team and team/sub');
  t.is(dash.trash.count, 1);
  t.true(dash.commits >= 3 && dash.commits < full.commits, `${dash.commits} of ${full.commits}`);
  t.not(dash.last_change.commit_id, full.last_change.commit_id);
  t.is(dash.sync.syncs, 0);
  t.deepEqual(dash.connections, { active: 1 }, 'only the key itself lies inside the scope');
  const text = JSON.stringify(dash);
  const syncId: string = outside.body.data.sync.sync_id ?? outside.body.data.sync.id;
  t.truthy(syncId);
  for (const leak of ['secret', 'teammates', syncId]) t.false(text.includes(leak), leak);
  // The whole-project view is unchanged.
  t.true(full.nodes.markdown >= 5);
  t.is(full.last_change.message, 'secret last words');
  t.is(full.sync.syncs, 1);
});
