import test from 'ava';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addOrgMember, createKey, createOrg, createProject, email } from './fixtures.ts';

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after.always(() => server.stop());

const repoOf = (projectId: string) => join(server.dataDir, `${projectId}.git`);

test('create, get, update, delete a project; its repository is created and removed with it', async (t) => {
  const owner = await server.createUser(email('po'));
  const orgId = await createOrg(server, owner.token);
  const res = await server.api('POST', '/projects/', { token: owner.token, body: { name: 'Docs', description: 'all docs', org_id: orgId } });
  t.is(res.status, 201);
  const project = res.body.data;
  t.like(project, { name: 'Docs', description: 'all docs', org_id: orgId, role: 'admin', created_by: owner.id });
  t.true(existsSync(join(repoOf(project.id), 'HEAD')));

  const got = await server.api('GET', `/projects/${project.id}`, { token: owner.token });
  t.is(got.status, 200);
  t.is(got.body.data.id, project.id);
  const updated = await server.api('PUT', `/projects/${project.id}`, { token: owner.token, body: { name: 'Handbook' } });
  t.like(updated.body.data, { name: 'Handbook', description: 'all docs' });

  const key = await createKey(server, owner.token, project.id);
  const deleted = await server.api('DELETE', `/projects/${project.id}`, { token: owner.token });
  t.is(deleted.status, 200);
  t.false(existsSync(repoOf(project.id)));
  t.is((await server.api('GET', `/projects/${project.id}`, { token: owner.token })).status, 404);
  t.is((await server.api('GET', `/projects/${project.id}`, { token: key.key })).status, 401, 'its keys are gone with it');
});

test('listing: by org_id or everything visible, paginated, each with the caller’s role', async (t) => {
  const owner = await server.createUser(email('lo'));
  const guest = await server.createUser(email('lg'));
  const orgA = await createOrg(server, owner.token, 'A');
  const orgB = await createOrg(server, owner.token, 'B');
  const a1 = await createProject(server, owner.token, orgA, 'a1');
  await createProject(server, owner.token, orgA, 'a2');
  const b1 = await createProject(server, owner.token, orgB, 'b1');

  const all = await server.api('GET', '/projects', { token: owner.token });
  t.is(all.body.data.total, 3);
  const byOrg = await server.api('GET', `/projects?org_id=${orgA}&limit=1&offset=1`, { token: owner.token });
  t.is(byOrg.status, 200);
  t.is(byOrg.body.data.total, 2);
  t.deepEqual(byOrg.body.data.projects.map((p: { name: string }) => p.name), ['a2']);

  // A project-only member sees just that project, with their explicit role.
  await server.api('POST', `/projects/${b1}/members`, { token: owner.token, body: { email: guest.email, role: 'viewer' } });
  const guestList = await server.api('GET', '/projects', { token: guest.token });
  t.deepEqual(guestList.body.data.projects.map((p: { id: string; role: string }) => [p.id, p.role]), [[b1, 'viewer']]);
  t.is((await server.api('GET', `/projects?org_id=${orgA}`, { token: guest.token })).status, 404);
  t.is((await server.api('GET', `/projects/${a1}`, { token: guest.token })).status, 404);

  const bad = await server.api('GET', '/projects?limit=0', { token: owner.token });
  t.is(bad.status, 422);
  t.is(bad.body.error.details[0].field, 'limit');
});

test('creating needs project:create in the organization and valid input', async (t) => {
  const owner = await server.createUser(email('co'));
  const viewer = await server.createUser(email('cv'));
  const outsider = await server.createUser(email('cx'));
  const orgId = await createOrg(server, owner.token);
  await addOrgMember(server, orgId, viewer.id, 'viewer');
  t.is((await server.api('POST', '/projects', { token: viewer.token, body: { name: 'p', org_id: orgId } })).status, 403);
  t.is((await server.api('POST', '/projects', { token: outsider.token, body: { name: 'p', org_id: orgId } })).status, 404);
  const missing = await server.api('POST', '/projects', { token: owner.token, body: { description: 7 } });
  t.is(missing.status, 422);
  t.deepEqual(missing.body.error.details.map((d: { field: string }) => d.field).sort(), ['description', 'name', 'org_id']);
});

test('members: list (inherited and explicit), add by id or email, change role, remove', async (t) => {
  const owner = await server.createUser(email('mo'));
  const orgMember = await server.createUser(email('mm'));
  const outside = await server.createUser(email('mx'));
  const orgId = await createOrg(server, owner.token);
  await addOrgMember(server, orgId, orgMember.id, 'member');
  const projectId = await createProject(server, owner.token, orgId);

  const added = await server.api('POST', `/projects/${projectId}/members`, { token: owner.token, body: { user_id: outside.id, role: 'editor' } });
  t.is(added.status, 201);
  t.like(added.body.data, { user_id: outside.id, role: 'editor', project_role: 'editor', org_role: null });
  t.is((await server.api('POST', `/projects/${projectId}/members`, { token: owner.token, body: { user_id: outside.id, role: 'viewer' } })).status, 409);

  const list = await server.api('GET', `/projects/${projectId}/members`, { token: outside.token });
  t.is(list.status, 200);
  t.is(list.body.data.total, 3);
  const roles = Object.fromEntries(list.body.data.members.map((m: { user_id: string; role: string }) => [m.user_id, m.role]));
  t.deepEqual(roles, { [owner.id]: 'admin', [orgMember.id]: 'editor', [outside.id]: 'editor' });

  const raised = await server.api('PUT', `/projects/${projectId}/members/${orgMember.id}/role`, { token: owner.token, body: { role: 'admin' } });
  t.is(raised.status, 200);
  t.like(raised.body.data, { role: 'admin', project_role: 'admin', org_role: 'member' });
  t.is((await server.api('GET', `/projects/${projectId}`, { token: orgMember.token })).body.data.role, 'admin');

  t.is((await server.api('DELETE', `/projects/${projectId}/members/${outside.id}`, { token: owner.token })).status, 200);
  t.is((await server.api('GET', `/projects/${projectId}`, { token: outside.token })).status, 404);
  const inherited = await server.api('DELETE', `/projects/${projectId}/members/${owner.id}`, { token: owner.token });
  t.is(inherited.status, 409);
  t.is((await server.api('DELETE', `/projects/${projectId}/members/usr_nobody`, { token: owner.token })).status, 404);

  const noUser = await server.api('POST', `/projects/${projectId}/members`, { token: owner.token, body: { email: 'ghost@example.com', role: 'viewer' } });
  t.is(noUser.status, 422);
  t.is(noUser.body.error.details[0].field, 'email');
  const neither = await server.api('POST', `/projects/${projectId}/members`, { token: owner.token, body: { role: 'viewer' } });
  t.is(neither.status, 422);
});
