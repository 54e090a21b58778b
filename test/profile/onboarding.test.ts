import test from 'ava';
import { assertDocumented } from '../helpers/openapi.ts';
import { contentApi, createKey, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after.always(async () => server?.stop());

type Step = { id: string; done: boolean; label: string; done_at: string | null };
const status = async (token: string) => {
  const res = await server.api('GET', '/profile/onboarding/status', { token });
  return res;
};
const steps = (data: { steps: Step[] }) => Object.fromEntries(data.steps.map((s) => [s.id, s.done]));

test('the steps follow real state: project, content, key, connection; completed when all are done', async (t) => {
  const u = await server.createUser('onboarding-steps@example.com');
  const fresh = await status(u.token);
  assertDocumented(t, server.services, 'get', '/profile/onboarding/status', fresh);
  t.like(fresh.body.data, { initialized: false, completed: false, completed_explicitly: false, completed_at: null });
  t.deepEqual(steps(fresh.body.data), { project_created: false, content_added: false, key_or_agent_created: false, connected: false });
  t.true(fresh.body.data.steps.every((s: Step) => s.label.length > 0 && s.done_at === null));

  const { projectId } = await defaultProject(server, u.token);
  const afterProject = (await status(u.token)).body.data;
  t.like(afterProject, { initialized: true, completed: false });
  t.deepEqual(steps(afterProject), { project_created: true, content_added: false, key_or_agent_created: false, connected: false });
  const project = (await server.api('GET', `/projects/${projectId}`, { token: u.token })).body.data;
  t.is(afterProject.steps[0].done_at, project.created_at);

  t.is((await contentApi(server, u.token, projectId)('POST', '/write', { path: 'docs/a.md', node_type: 'markdown', content: 'hi' })).status, 201);
  t.true(steps((await status(u.token)).body.data).content_added);

  await createKey(server, u.token, projectId, { name: 'first key' });
  t.deepEqual(steps((await status(u.token)).body.data), { project_created: true, content_added: true, key_or_agent_created: true, connected: false });

  const docsId = server.services.content.findByPath(projectId, 'docs')!.id;
  const mcp = await server.api('POST', '/mcp-endpoints', { token: u.token, body: { name: 'docs', project_id: projectId, node_id: docsId } });
  t.is(mcp.status, 201, JSON.stringify(mcp.body));
  const done = (await status(u.token)).body.data;
  t.true(done.steps.every((s: Step) => s.done && s.done_at !== null));
  t.like(done, { completed: true, completed_explicitly: false });
  t.is(done.completed_at, done.steps.map((s: Step) => s.done_at!).sort().at(-1), 'completed when the last step was done');

  // Reset only clears an explicit completion: the steps are still done.
  const reset = await server.api('POST', '/profile/onboarding/reset', { token: u.token });
  t.like(reset.body.data, { completed: true, completed_explicitly: false });
});

test('complete and reset are explicit and stored per user; the steps count the projects a user reaches', async (t) => {
  const owner = await server.createUser('onboarding-owner@example.com');
  const { projectId } = await defaultProject(server, owner.token);
  await contentApi(server, owner.token, projectId)('POST', '/write', { path: 'x.md', node_type: 'markdown', content: 'x' });

  const member = await server.createUser('onboarding-member@example.com');
  t.is((await server.api('POST', `/projects/${projectId}/members`, { token: owner.token, body: { user_id: member.id, role: 'editor' } })).status, 201);
  const asMember = (await status(member.token)).body.data;
  t.deepEqual(steps(asMember), { project_created: false, content_added: true, key_or_agent_created: false, connected: false }, 'a project membership is not an organization of their own');

  const completed = await server.api('POST', '/profile/onboarding/complete', { token: member.token });
  assertDocumented(t, server.services, 'post', '/profile/onboarding/complete', completed);
  t.like(completed.body.data, { completed: true, completed_explicitly: true });
  t.regex(completed.body.data.completed_at, /Z$/);
  const again = await server.api('POST', '/profile/onboarding/complete', { token: member.token });
  t.is(again.body.data.completed_at, completed.body.data.completed_at, 'completing twice keeps the first time');
  t.false((await status(owner.token)).body.data.completed, "another user's state is their own");

  const reset = await server.api('POST', '/profile/onboarding/reset', { token: member.token });
  assertDocumented(t, server.services, 'post', '/profile/onboarding/reset', reset);
  t.like(reset.body.data, { completed: false, completed_explicitly: false, completed_at: null });
  t.like((await status(member.token)).body.data, { completed: false });
});

test('access keys get 403 and anonymous callers 401', async (t) => {
  const u = await server.createUser('onboarding-keys@example.com');
  const { projectId } = await defaultProject(server, u.token);
  const { key } = await createKey(server, u.token, projectId);
  for (const [method, path] of [['GET', '/profile/onboarding/status'], ['POST', '/profile/onboarding/complete'], ['POST', '/profile/onboarding/reset']] as const) {
    t.is((await server.api(method, path, { token: key })).status, 403, path);
    t.is((await server.api(method, path)).status, 401, path);
  }
  t.false((await status(u.token)).body.data.completed_explicitly, 'a refused key changed nothing');
});
