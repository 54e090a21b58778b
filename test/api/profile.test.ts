import test from 'ava';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { email } from './fixtures.ts';

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after.always(() => server.stop());

test('initialize creates a default organization with a first project once; later calls return the same', async (t) => {
  const u = await server.createUser(email('init'));
  const first = await server.api('POST', '/auth/initialize', { token: u.token });
  t.is(first.status, 200);
  const { organization, project, user, created } = first.body.data;
  t.true(created);
  t.true(user.initialized);
  t.like(organization, { is_default: true, role: 'owner', created_by: u.id });
  t.like(project, { org_id: organization.id, role: 'admin' });
  t.true(existsSync(join(server.dataDir, `${project.id}.git`, 'HEAD')));

  const again = await server.api('POST', '/auth/initialize', { token: u.token, body: {} });
  t.is(again.status, 200);
  t.false(again.body.data.created);
  t.deepEqual(again.body.data.organization, organization);
  t.deepEqual(again.body.data.project, project);
  const orgs = await server.api('GET', '/organizations', { token: u.token });
  t.is(orgs.body.data.total, 1);
  const projects = await server.api('GET', '/projects', { token: u.token });
  t.is(projects.body.data.total, 1);
});

test('concurrent first calls create a single organization', async (t) => {
  const u = await server.createUser(email('race'));
  const results = await Promise.all(Array.from({ length: 5 }, () => server.api('POST', '/auth/initialize', { token: u.token })));
  t.true(results.every((r) => r.status === 200));
  t.is(results.filter((r) => r.body.data.created).length, 1);
  t.is(new Set(results.map((r) => r.body.data.organization.id)).size, 1);
  t.is((await server.api('GET', '/organizations', { token: u.token })).body.data.total, 1);
});

test('profile/me shows the user and their defaults; keys cannot use profile routes', async (t) => {
  const u = await server.createUser(email('me'));
  const before = await server.api('GET', '/profile/me', { token: u.token });
  t.is(before.status, 200);
  t.like(before.body.data, { id: u.id, email: u.email, initialized: false, default_organization_id: null, default_project_id: null });
  t.false('password_hash' in before.body.data);
  const init = (await server.api('POST', '/auth/initialize', { token: u.token })).body.data;
  const after = await server.api('GET', '/profile/me', { token: u.token });
  t.like(after.body.data, { initialized: true, default_organization_id: init.organization.id, default_project_id: init.project.id });

  const key = await server.api('POST', '/connections', { token: u.token, body: { project_id: init.project.id, name: 'k', kind: 'api' } });
  t.is((await server.api('GET', '/profile/me', { token: key.body.data.key })).status, 403);
  t.is((await server.api('POST', '/auth/initialize', { token: key.body.data.key })).status, 403);
  t.is((await server.api('GET', '/profile/me')).status, 401);
});

test('onboarding: status, complete, reset', async (t) => {
  const u = await server.createUser(email('onb'));
  const status = await server.api('GET', '/profile/onboarding/status', { token: u.token });
  t.is(status.status, 200);
  t.like(status.body.data, { completed: false, completed_at: null, initialized: false });
  const done = await server.api('POST', '/profile/onboarding/complete', { token: u.token });
  t.is(done.body.data.completed, true);
  t.regex(done.body.data.completed_at, /Z$/);
  t.true((await server.api('GET', '/profile/onboarding/status', { token: u.token })).body.data.completed);
  const reset = await server.api('POST', '/profile/onboarding/reset', { token: u.token });
  t.like(reset.body.data, { completed: false, completed_at: null });
});
