import test from 'ava';
import { asAppError } from '../../src/http/errors.ts';
import type { ProjectAction } from '../../src/policies/permissions.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addOrgMember, createKey, createOrg, createProject, email } from './fixtures.ts';

/**
 * Every role against every organization and project action, written out independently of
 * src/policies/permissions.ts so that a change there must be matched here on purpose.
 */
const roles = ['org:owner', 'org:admin', 'org:member', 'org:viewer', 'prj:admin', 'prj:editor', 'prj:viewer', 'outsider', 'key:read', 'key:read_write'] as const;
type Role = (typeof roles)[number];
const orgRoleOf = { 'org:owner': 'owner', 'org:admin': 'admin', 'org:member': 'member', 'org:viewer': 'viewer' } as const;
const projectRoleOf = { 'prj:admin': 'admin', 'prj:editor': 'editor', 'prj:viewer': 'viewer' } as const;

// Expected statuses, in the order of `roles`.
const row = (...s: number[]) => Object.fromEntries(roles.map((r, i) => [r, s[i]])) as Record<Role, number>;
const projectAdminOnly = row(200, 200, 403, 403, 200, 403, 403, 404, 403, 403);
const expected = {
  'project:read': row(200, 200, 200, 200, 200, 200, 200, 404, 200, 200),
  'project:update': projectAdminOnly,
  'project:delete': projectAdminOnly,
  'members:manage': projectAdminOnly,
  'keys:manage': projectAdminOnly,
  'content:read': row(200, 200, 200, 200, 200, 200, 200, 404, 200, 200),
  'content:write': row(200, 200, 200, 403, 200, 200, 403, 404, 403, 200),
  'org:read': row(200, 200, 200, 200, 404, 404, 404, 404, 403, 403),
  'org:update': row(200, 200, 403, 403, 404, 404, 404, 404, 403, 403),
  'org:members:manage': row(200, 200, 403, 403, 404, 404, 404, 404, 403, 403),
  'org:invite': row(201, 201, 403, 403, 404, 404, 404, 404, 403, 403),
  'project:create': row(201, 201, 201, 403, 404, 404, 404, 404, 403, 403),
  'org:delete': row(200, 403, 403, 403, 404, 404, 404, 404, 403, 403),
};

let server: TestServer;
let orgId: string;
let projectId: string;
const users = {} as Record<Role, { id: string; token: string }>;
let projectTarget: string;
let orgTarget: string;

/** Gives the project-only users their roles on a project and returns every role's credential for it. */
async function credentialsFor(project: string): Promise<Record<Role, string>> {
  const owner = users['org:owner'].token;
  for (const [r, role] of Object.entries(projectRoleOf)) {
    const res = await server.api('POST', `/projects/${project}/members`, { token: owner, body: { user_id: users[r as Role].id, role } });
    if (res.status !== 201) throw new Error(`add ${r}: ${res.status}`);
  }
  const tokens = Object.fromEntries(roles.filter((r) => !r.startsWith('key:')).map((r) => [r, users[r].token])) as Record<Role, string>;
  tokens['key:read'] = (await createKey(server, owner, project, { mode: 'read' })).key;
  tokens['key:read_write'] = (await createKey(server, owner, project, { mode: 'read_write' })).key;
  return tokens;
}

let tokens: Record<Role, string>;

test.before(async () => {
  server = await startTestServer();
  for (const r of roles) if (!r.startsWith('key:')) users[r] = await server.createUser(email(r.replace(':', '-')));
  orgId = await createOrg(server, users['org:owner'].token, 'Matrix');
  for (const [r, role] of Object.entries(orgRoleOf)) if (role !== 'owner') await addOrgMember(server, orgId, users[r as Role].id, role);
  projectId = await createProject(server, users['org:owner'].token, orgId, 'Matrix project');
  tokens = await credentialsFor(projectId);
  const pt = await server.createUser(email('project-target'));
  projectTarget = pt.id;
  await server.api('POST', `/projects/${projectId}/members`, { token: users['org:owner'].token, body: { user_id: pt.id, role: 'viewer' } });
  const ot = await server.createUser(email('org-target'));
  orgTarget = ot.id;
  await addOrgMember(server, orgId, ot.id, 'viewer');
});
test.after.always(() => server.stop());

type Call = (token: string, role: Role) => Promise<number>;
const call = (method: string, path: () => string, body?: () => unknown): Call => async (token) =>
  (await server.api(method, path(), { token, body: body?.() })).status;

/** The content rows have no routes in this area yet: they go through the Authorizer, as content routes do. */
const authorizerCall = (action: ProjectAction): Call => async (token) => {
  const principal = await server.services.authenticator.authenticate(token);
  if (!principal) return 401;
  try {
    await server.services.authorizer.requireProject(principal, projectId, action);
    return 200;
  } catch (err) {
    return asAppError(err)?.status ?? 500;
  }
};

const calls: Record<keyof typeof expected, Call> = {
  'project:read': call('GET', () => `/projects/${projectId}`),
  'project:update': call('PUT', () => `/projects/${projectId}`, () => ({ description: 'changed' })),
  'members:manage': call('PUT', () => `/projects/${projectId}/members/${projectTarget}/role`, () => ({ role: 'viewer' })),
  'keys:manage': call('GET', () => `/connections?project_id=${projectId}`),
  'content:read': authorizerCall('content:read'),
  'content:write': authorizerCall('content:write'),
  'org:read': call('GET', () => `/organizations/${orgId}`),
  'org:update': call('PUT', () => `/organizations/${orgId}`, () => ({ description: 'changed' })),
  'org:members:manage': call('PUT', () => `/organizations/${orgId}/members/${orgTarget}/role`, () => ({ role: 'viewer' })),
  'org:invite': call('POST', () => `/organizations/${orgId}/invite`, () => ({ email: email('invitee'), role: 'viewer' })),
  'project:create': call('POST', () => '/projects', () => ({ name: 'made', org_id: orgId })),
  // Destructive actions run against a fresh project or organization per role.
  'project:delete': async (_token, role) => {
    const fresh = await createProject(server, users['org:owner'].token, orgId, `doomed by ${role}`);
    const status = (await server.api('DELETE', `/projects/${fresh}`, { token: (await credentialsFor(fresh))[role] })).status;
    const stillThere = (await server.api('GET', `/projects/${fresh}`, { token: users['org:owner'].token })).status === 200;
    if (stillThere === (status === 200)) throw new Error(`project delete by ${role}: ${status} but still there = ${stillThere}`);
    return status;
  },
  'org:delete': async (_token, role) => {
    const fresh = await createOrg(server, users['org:owner'].token, `doomed by ${role}`);
    for (const [r, orgRole] of Object.entries(orgRoleOf)) if (orgRole !== 'owner') await addOrgMember(server, fresh, users[r as Role].id, orgRole);
    const status = (await server.api('DELETE', `/organizations/${fresh}`, { token: tokens[role] })).status;
    const stillThere = (await server.api('GET', `/organizations/${fresh}`, { token: users['org:owner'].token })).status === 200;
    if (stillThere === (status === 200)) throw new Error(`org delete by ${role}: ${status} but still there = ${stillThere}`);
    return status;
  },
};

for (const action of Object.keys(expected) as (keyof typeof expected)[]) {
  test(`permission matrix: ${action}`, async (t) => {
    const actual = {} as Record<Role, number>;
    for (const role of roles) actual[role] = await calls[action](tokens[role], role);
    t.deepEqual(actual, expected[action]);
  });
}
