import test from 'ava';
import { hostname } from 'node:os';
import { createKey, createOrg, createProject, email } from './fixtures.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

// GET /cluster outside a cluster: this service alone, for its administrators only.

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after.always(() => server?.stop());

test('an administrator sees this service as the one node, up', async (t) => {
  const admin = await server.login();
  const res = await server.api('GET', '/cluster', { token: admin.token });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.like(res.body, { success: true, code: 0 });
  const { node, cluster, nodes } = res.body.data;
  t.is(node, null);
  t.false(cluster);
  t.is(nodes.length, 1);
  t.like(nodes[0], { id: hostname() || 'local', url: server.services.settings.baseUrl, state: 'up', heartbeat_age_ms: 0, version: '0.1.0', projects: { primary: server.services.content.listProjects().length, copies: server.services.content.listProjects().length } });
  t.regex(nodes[0].started_at, /^\d{4}-\d\d-\d\dT/);
  t.is((await server.api('GET', '/healthz')).body.data.node, null, '/healthz names no node outside a cluster');
});

test('a user who is not an administrator, an access key and an anonymous caller are refused', async (t) => {
  const admin = await server.login();
  const user = await server.createUser(email('member'));
  const refused = await server.api('GET', '/cluster', { token: user.token });
  t.is(refused.status, 403);
  t.like(refused.body, { success: false, code: 'FORBIDDEN', data: null, message: 'This operation needs an administrator of the service.' });
  const projectId = await createProject(server, admin.token, await createOrg(server, admin.token));
  const key = await createKey(server, admin.token, projectId);
  const byKey = await server.api('GET', '/cluster', { token: key.key });
  t.is(byKey.status, 403);
  t.is(byKey.body.code, 'FORBIDDEN');
  const anonymous = await server.api('GET', '/cluster');
  t.is(anonymous.status, 401);
  t.is(anonymous.body.code, 'UNAUTHORIZED');
});

test('the check reads users.is_admin at each request: a user made administrator is let in', async (t) => {
  const user = await server.createUser(email('promoted'));
  t.is((await server.api('GET', '/cluster', { token: user.token })).status, 403);
  await server.services.metadata.db.updateTable('users').set({ is_admin: 1 }).where('id', '=', user.id).execute();
  const res = await server.api('GET', '/cluster', { token: user.token });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.false(res.body.data.cluster);
});

test('outside a cluster, a move or a drain is refused (409) for an administrator, 403 for anyone else, and a bad body is 422', async (t) => {
  const admin = await server.login();
  const projectId = await createProject(server, admin.token, await createOrg(server, admin.token));
  const moved = await server.api('POST', '/cluster/moves', { token: admin.token, body: { project_id: projectId, to: 'node-2' } });
  t.is(moved.status, 409, JSON.stringify(moved.body));
  t.like(moved.body, { success: false, code: 'CONFLICT' });
  t.regex(moved.body.message, /not a node of a cluster/);
  t.is((await server.api('POST', '/cluster/nodes/node-2/drain', { token: admin.token })).status, 409);
  t.is((await server.api('POST', '/cluster/moves', { token: admin.token, body: { project_id: projectId } })).status, 422);
  const user = await server.createUser(email('not-mover'));
  t.is((await server.api('POST', '/cluster/moves', { token: user.token, body: { project_id: projectId, to: 'node-2' } })).status, 403);
});
