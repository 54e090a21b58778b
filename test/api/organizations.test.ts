import test from 'ava';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addOrgMember, createOrg, createProject, email } from './fixtures.ts';

let server: TestServer;
test.before(async () => {
  server = await startTestServer();
});
test.after.always(() => server.stop());

test('create, get, update and list organizations; the creator is owner', async (t) => {
  const owner = await server.createUser(email('owner'));
  const res = await server.api('POST', '/organizations/', { token: owner.token, body: { name: ' Acme ', description: 'd', extra: 1 } });
  t.is(res.status, 201);
  t.true(res.body.success);
  const org = res.body.data;
  t.like(org, { name: 'Acme', description: 'd', role: 'owner', is_default: false, created_by: owner.id });
  t.regex(org.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.false('extra' in org);

  const got = await server.api('GET', `/organizations/${org.id}`, { token: owner.token });
  t.is(got.status, 200);
  t.is(got.body.data.id, org.id);

  const updated = await server.api('PUT', `/organizations/${org.id}`, { token: owner.token, body: { description: 'new' } });
  t.is(updated.status, 200);
  t.like(updated.body.data, { name: 'Acme', description: 'new' });

  const list = await server.api('GET', '/organizations', { token: owner.token });
  t.is(list.status, 200);
  t.deepEqual(list.body.data.organizations.map((o: { id: string }) => o.id), [org.id]);
  t.is(list.body.data.total, 1);
});

test('organization lists paginate with limit/offset and a total', async (t) => {
  const u = await server.createUser(email('pager'));
  for (let i = 0; i < 5; i++) await createOrg(server, u.token, `O${i}`);
  const page = await server.api('GET', '/organizations?limit=2&offset=3', { token: u.token });
  t.is(page.status, 200);
  t.is(page.body.data.total, 5);
  t.is(page.body.data.limit, 2);
  t.is(page.body.data.offset, 3);
  t.deepEqual(page.body.data.organizations.map((o: { name: string }) => o.name), ['O3', 'O4']);
});

test('invalid input is 422 with details per field, never 500', async (t) => {
  const u = await server.createUser(email('invalid'));
  const cases: [string, string, unknown, string[]][] = [
    ['POST', '/organizations', {}, ['name']],
    ['POST', '/organizations', { name: 42, description: [] }, ['name', 'description']],
    ['POST', '/organizations', { name: '   ' }, ['name']],
    ['GET', '/organizations?limit=abc&offset=-1', undefined, ['limit', 'offset']],
    ['GET', '/organizations?limit=100000', undefined, ['limit']],
  ];
  for (const [method, path, body, fields] of cases) {
    const res = await server.api(method, path, { token: u.token, body });
    t.is(res.status, 422, `${method} ${path} ${JSON.stringify(body)}`);
    t.is(res.body.error.code, 'VALIDATION_ERROR');
    t.deepEqual([...new Set(res.body.error.details.map((d: { field: string }) => d.field))].sort(), fields.sort());
  }
  const orgId = await createOrg(server, u.token);
  const badRole = await server.api('PUT', `/organizations/${orgId}/members/${u.id}/role`, { token: u.token, body: { role: 'king' } });
  t.is(badRole.status, 422);
  t.is(badRole.body.error.details[0].field, 'role');
});

test('another organization is 404 to outsiders; a member lacking permission gets 403', async (t) => {
  const owner = await server.createUser(email('o'));
  const outsider = await server.createUser(email('x'));
  const viewer = await server.createUser(email('v'));
  const orgId = await createOrg(server, owner.token);
  await addOrgMember(server, orgId, viewer.id, 'viewer');
  for (const [method, path] of [
    ['GET', `/organizations/${orgId}`],
    ['PUT', `/organizations/${orgId}`],
    ['DELETE', `/organizations/${orgId}`],
    ['GET', `/organizations/${orgId}/members`],
    ['POST', `/organizations/${orgId}/leave`],
    ['GET', `/organizations/${orgId}/invitations`],
  ] as const) {
    const res = await server.api(method, path, { token: outsider.token, body: method === 'GET' ? undefined : {} });
    t.is(res.status, 404, `${method} ${path}`);
    t.is(res.body.error.code, 'NOT_FOUND');
  }
  const forbidden = await server.api('PUT', `/organizations/${orgId}`, { token: viewer.token, body: { name: 'x' } });
  t.is(forbidden.status, 403);
  t.is(forbidden.body.error.code, 'FORBIDDEN');
  const unknown = await server.api('GET', '/organizations/org_nope', { token: owner.token });
  t.is(unknown.status, 404);
});

test('deleting an organization with projects is 409 (its state conflicts); without projects it goes', async (t) => {
  const owner = await server.createUser(email('del'));
  const orgId = await createOrg(server, owner.token);
  const projectId = await createProject(server, owner.token, orgId);
  const refused = await server.api('DELETE', `/organizations/${orgId}`, { token: owner.token });
  t.is(refused.status, 409);
  t.is(refused.body.error.code, 'CONFLICT');
  t.is(refused.body.error.details.projects, 1);
  t.regex(refused.body.message, /project/);
  t.is((await server.api('DELETE', `/projects/${projectId}`, { token: owner.token })).status, 200);
  const deleted = await server.api('DELETE', `/organizations/${orgId}`, { token: owner.token });
  t.is(deleted.status, 200);
  t.is((await server.api('GET', `/organizations/${orgId}`, { token: owner.token })).status, 404);
});

test('members: list, change role, remove; removal also drops project roles in the organization', async (t) => {
  const owner = await server.createUser(email('mo'));
  const member = await server.createUser(email('mm'));
  const orgId = await createOrg(server, owner.token);
  const projectId = await createProject(server, owner.token, orgId);
  await addOrgMember(server, orgId, member.id, 'member');
  t.is((await server.api('POST', `/projects/${projectId}/members`, { token: owner.token, body: { user_id: member.id, role: 'admin' } })).status, 201);

  const list = await server.api('GET', `/organizations/${orgId}/members`, { token: member.token });
  t.is(list.status, 200);
  t.is(list.body.data.total, 2);
  t.deepEqual(list.body.data.members.map((m: { role: string }) => m.role).sort(), ['member', 'owner']);
  t.truthy(list.body.data.members[0].email);

  const changed = await server.api('PUT', `/organizations/${orgId}/members/${member.id}/role`, { token: owner.token, body: { role: 'viewer' } });
  t.is(changed.status, 200);
  t.like(changed.body.data, { user_id: member.id, role: 'viewer' });

  const removed = await server.api('DELETE', `/organizations/${orgId}/members/${member.id}`, { token: owner.token });
  t.is(removed.status, 200);
  t.is((await server.api('GET', `/projects/${projectId}`, { token: member.token })).status, 404);
  t.is((await server.api('DELETE', `/organizations/${orgId}/members/${member.id}`, { token: owner.token })).status, 404);
});

test('the last owner cannot leave, be demoted or be removed; with a second owner they can', async (t) => {
  const owner = await server.createUser(email('lo'));
  const other = await server.createUser(email('lo2'));
  const orgId = await createOrg(server, owner.token);
  const leave = await server.api('POST', `/organizations/${orgId}/leave`, { token: owner.token });
  t.is(leave.status, 409);
  t.regex(leave.body.message, /last owner/);
  const demote = await server.api('PUT', `/organizations/${orgId}/members/${owner.id}/role`, { token: owner.token, body: { role: 'admin' } });
  t.is(demote.status, 409);
  const remove = await server.api('DELETE', `/organizations/${orgId}/members/${owner.id}`, { token: owner.token });
  t.is(remove.status, 409);

  await addOrgMember(server, orgId, other.id, 'member');
  t.is((await server.api('PUT', `/organizations/${orgId}/members/${other.id}/role`, { token: owner.token, body: { role: 'owner' } })).status, 200);
  t.is((await server.api('POST', `/organizations/${orgId}/leave`, { token: owner.token })).status, 200);
  t.is((await server.api('GET', `/organizations/${orgId}`, { token: owner.token })).status, 404);
  const lastAgain = await server.api('POST', `/organizations/${orgId}/leave`, { token: other.token });
  t.is(lastAgain.status, 409);
});

test('admins manage members but cannot touch owners or make owners', async (t) => {
  const owner = await server.createUser(email('ao'));
  const admin = await server.createUser(email('aa'));
  const member = await server.createUser(email('am'));
  const orgId = await createOrg(server, owner.token);
  await addOrgMember(server, orgId, admin.id, 'admin');
  await addOrgMember(server, orgId, member.id, 'member');
  const promote = await server.api('PUT', `/organizations/${orgId}/members/${member.id}/role`, { token: admin.token, body: { role: 'owner' } });
  t.is(promote.status, 403);
  const demoteOwner = await server.api('PUT', `/organizations/${orgId}/members/${owner.id}/role`, { token: admin.token, body: { role: 'member' } });
  t.is(demoteOwner.status, 403);
  const removeOwner = await server.api('DELETE', `/organizations/${orgId}/members/${owner.id}`, { token: admin.token });
  t.is(removeOwner.status, 403);
  const inviteOwner = await server.api('POST', `/organizations/${orgId}/invite`, { token: admin.token, body: { email: email('io'), role: 'owner' } });
  t.is(inviteOwner.status, 403);
  const toViewer = await server.api('PUT', `/organizations/${orgId}/members/${member.id}/role`, { token: admin.token, body: { role: 'viewer' } });
  t.is(toViewer.status, 200);
  const memberTries = await server.api('DELETE', `/organizations/${orgId}/members/${admin.id}`, { token: member.token });
  t.is(memberTries.status, 403);
});

test('access keys cannot manage organizations', async (t) => {
  const owner = await server.createUser(email('ko'));
  const orgId = await createOrg(server, owner.token);
  const projectId = await createProject(server, owner.token, orgId);
  const res = await server.api('POST', '/connections', { token: owner.token, body: { project_id: projectId, name: 'k', kind: 'api' } });
  const key = res.body.data.key;
  t.is((await server.api('GET', `/organizations/${orgId}`, { token: key })).status, 403);
  t.is((await server.api('GET', '/organizations', { token: key })).status, 403);
  t.is((await server.api('POST', '/organizations', { token: key, body: { name: 'x' } })).status, 403);
});
