import test from 'ava';
import { createKey } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { newProject } from '../git/gitFixture.ts';

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after.always(() => server?.stop());

test('for a scoped key, a node that moved out of its scope is `moved_out` at its last path inside, never path ""', async (t) => {
  const p = await newProject(server, 'moving out');
  const c = (route: string, body: unknown) => server.api('POST', `/content/${p.projectId}${route}`, { token: p.token, body });
  await c('/write', { path: 'team/a.md', content: 'a', node_type: 'markdown' });
  await c('/write', { path: 'elsewhere/b.md', content: 'b', node_type: 'markdown' });
  await c('/mv', { old_path: 'team/a.md', new_path: 'secret/a.md' });
  await c('/mv', { old_path: 'elsewhere/b.md', new_path: 'team/b.md' });
  const { key } = await createKey(server, p.token, p.projectId, { scope_path: 'team', mode: 'read' });
  const log = await server.api('GET', `/sync/changelog?project_id=${p.projectId}&cursor=0`, { token: key });
  t.is(log.status, 200);
  const entries = log.body.data.entries as { path: string; old_path: string | null; action: string }[];
  t.false(entries.some((e) => e.path === ''), JSON.stringify(entries));
  t.false(JSON.stringify(entries).includes('secret'), 'where it went is not shown');
  t.false(JSON.stringify(entries).includes('elsewhere'), 'where it came from is not shown');
  const out = entries.find((e) => e.action === 'moved_out');
  t.truthy(out);
  t.is(out!.path, 'team/a.md');
  const inn = entries.find((e) => e.path === 'team/b.md');
  t.is(inn!.old_path, null);
});
