import test from 'ava';
import { contentApi, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { leavesNoHostMounts } from '../helpers/hostMounts.ts';

leavesNoHostMounts(test);

// Without bubblewrap the service runs commands in just-bash (a simulated bash, in-process) and says so.
let server: TestServer;

test.after.always(async () => server?.stop());

test('CNS_SANDBOX=just-bash: the runtime is named, commands read and write the folder, changes come back as one version', async (t) => {
  server = await startTestServer({}, { CNS_SANDBOX: 'just-bash' });
  const { token } = await server.login();
  const { projectId } = await defaultProject(server, token);
  const c = contentApi(server, token, projectId);
  await c('POST', '/write', { path: 'w/a.md', node_type: 'markdown', content: 'alpha\nbeta\n' });
  await c('POST', '/write', { path: 'w/d.json', node_type: 'json', content: { n: 1 } });
  const node = server.services.content.findByPath(projectId, 'w')!.id;
  const created = await server.api('POST', '/sandbox-endpoints/', { token, body: { name: 'jb', project_id: projectId, node_id: node } });
  t.is(created.status, 201);
  t.is(created.body.data.sandbox_endpoint.runtime, 'just-bash');
  t.regex(created.body.data.sandbox_endpoint.runtime_description, /just-bash/);
  const { key } = created.body.data;
  const id = created.body.data.sandbox_endpoint.id;
  const exec = (command: string, extra: Record<string, unknown> = {}) => server.api('POST', `/sandbox-endpoints/${id}/exec`, { token: key, body: { command, ...extra } });

  const ls = await exec('ls; grep -c a a.md; jq .n d.json');
  t.is(ls.status, 200, JSON.stringify(ls.body));
  t.is(ls.body.data.runtime, 'just-bash');
  t.is(ls.body.data.stdout, 'a.md\nd.json\n2\n1\n');

  const before = server.services.content.projectVersion(projectId);
  const w = await exec("sed -i 's/beta/BETA/' a.md && echo '# n' > n.md && rm d.json");
  t.is(w.status, 200, JSON.stringify(w.body));
  t.is(w.body.data.version, before + 1);
  t.deepEqual(w.body.data.changes.map((x: { path: string; action: string }) => `${x.action} ${x.path}`), ['modified w/a.md', 'deleted w/d.json', 'created w/n.md']);
  t.is((await c('GET', '/cat?path=w/a.md')).body.data.content, 'alpha\nBETA\n');

  const loop = await exec('while true; do :; done', { timeout_s: 1 });
  t.is(loop.status, 200);
  t.true(loop.body.data.timed_out);
  t.is(server.services.content.projectVersion(projectId), before + 1);
});
