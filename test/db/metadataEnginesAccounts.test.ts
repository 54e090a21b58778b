import test from 'ava';
import { sql } from 'kysely';
import pg from 'pg';
import { Authenticator } from '../../src/auth/authenticator.ts';
import { AccessTokens } from '../../src/auth/accessTokens.ts';
import type { Principal } from '../../src/auth/principal.ts';
import type { NodeInfo } from '../../src/content/types.ts';
import { AccessConnectionStore } from '../../src/domain/connections/accessConnectionStore.ts';
import { NodeBoundConnections } from '../../src/domain/connections/nodeBound.ts';
import { InvitationStore } from '../../src/domain/invitations/invitationStore.ts';
import { OrganizationStore } from '../../src/domain/organizations/organizationStore.ts';
import { OrgMembers } from '../../src/domain/organizations/orgMembers.ts';
import { ProjectMembers } from '../../src/domain/projects/projectMembers.ts';
import { ProjectStore } from '../../src/domain/projects/projectStore.ts';
import { UserInitializer } from '../../src/domain/users/userInitialization.ts';
import { UserStore } from '../../src/domain/users/userStore.ts';
import type { MetadataStore } from '../../src/db/metadata/metadataStore.ts';
import { ENGINES, metadataOn } from '../helpers/metadataEngines.ts';

// The auth domain's stores on both engines (issue 30): users, organizations, memberships,
// invitations, projects and connections (access keys), and the races their transactions settle.

/** Repositories are the content store's; these tests need only that they can be made. */
const repositories = { createProject: async () => undefined, deleteProject: async () => undefined };

function stores(metadata: MetadataStore) {
  const users = new UserStore(metadata);
  const organizations = new OrganizationStore(metadata);
  const projects = new ProjectStore(metadata, repositories);
  return {
    users,
    organizations,
    projects,
    orgMembers: new OrgMembers(metadata),
    projectMembers: new ProjectMembers(metadata),
    invitations: new InvitationStore(metadata),
    connections: new AccessConnectionStore(metadata),
    initializer: new UserInitializer(metadata, users, organizations, projects),
  };
}

for (const engine of ENGINES) {
  test(`${engine}: emails compare without case; a taken one is refused`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const { users } = stores(metadata);
    const ann = await users.create({ email: 'Ann@Example.com', password: 'password-123' });
    t.is((await users.findByEmail('ann@example.COM'))?.id, ann.id);
    await t.throwsAsync(users.create({ email: 'ANN@example.com', password: 'password-123' }), { message: /already exists/ });
    // Two at once: the unique index decides, and the loser gets the same answer.
    const both = await Promise.allSettled([users.create({ email: 'bob@example.com', password: 'password-123' }), users.create({ email: 'Bob@example.com', password: 'password-123' })]);
    t.is(both.filter((r) => r.status === 'fulfilled').length, 1);
    t.regex(String((both.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason), /already exists/);
    t.is(await users.count(), 3, 'usr_1 of the fixture, Ann and Bob');
  });

  test(`${engine}: concurrent first initializations make one organization and project`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const s = stores(metadata);
    const user = await s.users.create({ email: 'init@example.com', password: 'password-123' });
    const results = await Promise.all([s.initializer.initialize(user), s.initializer.initialize(user), s.initializer.initialize(user)]);
    t.is(results.filter((r) => r.created).length, 1);
    const ids = new Set(results.map((r) => r.organization?.id));
    t.is(ids.size, 1, 'every caller reports the same organization');
    t.is((await s.organizations.listForUser(user.id, { limit: 10, offset: 0 })).total, 1);
    t.truthy((await s.users.findById(user.id))?.initialized_at);
    t.is((await s.initializer.defaultsOf(user.id)).project?.id, results[0]!.project?.id);
  });

  test(`${engine}: an invitation is accepted once, by its address; the member sees the organization's projects`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const s = stores(metadata);
    const owner = await s.users.create({ email: 'owner@example.com', password: 'password-123' });
    const guest = await s.users.create({ email: 'guest@example.com', password: 'password-123' });
    const org = await s.organizations.create({ name: 'acme', createdBy: owner.id });
    const project = await s.projects.create({ orgId: org.id, name: 'p', createdBy: owner.id });
    const { token } = await s.invitations.create({ orgId: org.id, email: 'GUEST@example.com', role: 'member', invitedBy: owner.id });
    await t.throwsAsync(s.invitations.accept(token, owner), { message: /another address/ });
    const accepts = await Promise.allSettled([s.invitations.accept(token, guest), s.invitations.accept(token, guest)]);
    t.is(accepts.filter((r) => r.status === 'fulfilled').length, 1);
    t.is(await s.orgMembers.roleOf(org.id, guest.id), 'member');
    await t.throwsAsync(s.invitations.create({ orgId: org.id, email: 'guest@example.com', role: 'viewer', invitedBy: owner.id }), { message: /already a member/ });
    t.like(await s.projectMembers.projectAndRole(project.id, guest.id), { project: { id: project.id }, role: 'editor' });
    t.is((await s.projects.listVisible(guest.id, undefined, { limit: 10, offset: 0 })).total, 1);
    t.is((await s.projectMembers.list(project, { limit: 10, offset: 0 })).total, 2);
  });

  test(`${engine}: two owners leaving at once: one leaves, the last one stays`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const s = stores(metadata);
    const a = await s.users.create({ email: 'a1@example.com', password: 'password-123' });
    const b = await s.users.create({ email: 'b1@example.com', password: 'password-123' });
    const org = await s.organizations.create({ name: 'two owners', createdBy: a.id });
    const { token } = await s.invitations.create({ orgId: org.id, email: b.email, role: 'owner', invitedBy: a.id });
    await s.invitations.accept(token, b);
    const left = await Promise.allSettled([s.orgMembers.remove(org.id, a.id, 'leave'), s.orgMembers.remove(org.id, b.id, 'leave')]);
    t.is(left.filter((r) => r.status === 'fulfilled').length, 1, 'exactly one owner left');
    t.regex(String((left.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason), /last owner/);
    t.is((await s.orgMembers.list(org.id, { limit: 10, offset: 0 })).items.filter((m) => m.role === 'owner').length, 1);
  });

  test(`${engine}: an explicit project role is added once, changed, and removed; an inherited one stays`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const s = stores(metadata);
    const owner = await s.users.create({ email: 'o2@example.com', password: 'password-123' });
    const outsider = await s.users.create({ email: 'x2@example.com', password: 'password-123' });
    const org = await s.organizations.create({ name: 'o', createdBy: owner.id });
    const project = await s.projects.create({ orgId: org.id, name: 'p', createdBy: owner.id });
    t.like(await s.projectMembers.add(project, outsider.id, 'viewer'), { role: 'viewer', project_role: 'viewer', org_role: null });
    await t.throwsAsync(s.projectMembers.add(project, outsider.id, 'editor'), { message: /already has a role/ });
    t.like(await s.projectMembers.setRole(project, outsider.id, 'editor'), { role: 'editor' });
    t.is(await s.projectMembers.effectiveRole(project, outsider.id), 'editor');
    await s.projectMembers.remove(project, outsider.id);
    t.is(await s.projectMembers.effectiveRole(project, outsider.id), null);
    await t.throwsAsync(s.projectMembers.remove(project, owner.id), { message: /comes from the organization/ });
  });

  test(`${engine}: a rename and a new description at once both stay, for an organization and a project`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const s = stores(metadata);
    const owner = await s.users.create({ email: 'r@example.com', password: 'password-123' });
    const org = await s.organizations.create({ name: 'o', createdBy: owner.id });
    const project = await s.projects.create({ orgId: org.id, name: 'p', createdBy: owner.id });
    await Promise.all([s.organizations.update(org.id, { name: 'o2' }), s.organizations.update(org.id, { description: 'd' })]);
    t.like(await s.organizations.find(org.id), { name: 'o2', description: 'd' });
    const [renamed] = await Promise.all([s.projects.update(project.id, { name: 'p2' }), s.projects.update(project.id, { description: 'e' })]);
    t.is(renamed.name, 'p2');
    t.like(await s.projects.find(project.id), { name: 'p2', description: 'e' });
    await t.throwsAsync(s.projects.update('prj_none', { name: 'x' }), { message: /not found/ });
  });

  test(`${engine}: a key authenticates until it is revoked or regenerated; a revoked key stays dead`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const s = stores(metadata);
    const auth = new Authenticator(metadata, s.users, new AccessTokens(Buffer.alloc(32, 7), 900));
    const { connection, key } = await s.connections.createConnection({ projectId: 'prj_1', kind: 'mcp', name: 'k', createdBy: null, config: { node_id: 'nod_1' } });
    t.like(await auth.authenticate(key), { kind: 'key', id: connection.id });
    t.deepEqual((await s.connections.listByNode('mcp', 'nod_1')).map((c) => c.id), [connection.id], 'the bound folder is a column');
    const renewed = await s.connections.regenerateKey(connection.id);
    t.is(await auth.authenticate(key), null, 'the old key stops at once');
    t.like(await auth.authenticate(renewed.key), { kind: 'key', id: connection.id });
    // A revocation and a rename at once: the rename does not bring the key back.
    await Promise.all([s.connections.update(connection.id, { status: 'revoked' }), s.connections.update(connection.id, { name: 'renamed' })]);
    t.like(await s.connections.find(connection.id), { status: 'revoked', name: 'renamed' });
    t.is(await auth.authenticate(renewed.key), null);
    await t.throwsAsync(s.connections.update(connection.id, { status: 'active' }), { message: /cannot be reactivated/ });
    await t.throwsAsync(s.connections.regenerateKey(connection.id), { message: /cannot get a new key/ });
    t.deepEqual(await s.connections.countByStatus('prj_1'), { revoked: 1 });
  });

  test(`${engine}: a node-bound connection's new folder and new settings at once both stay (its config is merged as stored)`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const s = stores(metadata);
    const folder = (id: string) => ({ id, projectId: 'prj_1', path: `p/${id}`, type: 'folder', state: 'active' }) as NodeInfo;
    const bound = new NodeBoundConnections({ connections: s.connections, content: { findById: folder }, access: { node: () => undefined } }, 'sandbox', ['a', 'sandbox endpoint']);
    const user = { kind: 'user', id: 'usr_1' } as unknown as Principal;
    const { connection } = await bound.create(user, { projectId: 'prj_1', nodeId: 'nod_a', name: 's', config: () => ({ limits: {}, image: 'x' }) });
    // Both from the connection as read before either.
    await Promise.all([
      bound.update(user, connection, { nodeId: 'nod_b' }),
      bound.update(user, connection, {}, (config) => ({ ...config, limits: { timeout_s: 5 } })),
      bound.update(user, connection, { name: 'renamed' }, (config) => ({ ...config, image: 'y' })),
    ]);
    const stored = (await s.connections.find(connection.id))!;
    t.like(stored, { name: 'renamed', node_id: 'nod_b', scope_path: 'p/nod_b' });
    t.deepEqual(JSON.parse(stored.config), { node_id: 'nod_b', limits: { timeout_s: 5 }, image: 'y' });
    // A plain config still replaces the whole.
    t.like(await s.connections.update(connection.id, { config: { node_id: 'nod_c' } }), { node_id: 'nod_c', config: '{"node_id":"nod_c"}' });
  });

  test(`${engine}: a key's use is stamped at most once a minute, and does not count as a change`, async (t) => {
    const { metadata, close } = await metadataOn(engine);
    t.teardown(close);
    const s = stores(metadata);
    const auth = new Authenticator(metadata, s.users, new AccessTokens(Buffer.alloc(32, 7), 900));
    const { connection, key } = await s.connections.createConnection({ projectId: 'prj_1', kind: 'api', name: 'k', createdBy: null });
    await auth.authenticate(key);
    const deadline = Date.now() + 5000;
    let stamped: string | null = null;
    while (!stamped && Date.now() < deadline) stamped = (await s.connections.find(connection.id))?.last_used_at ?? null;
    t.truthy(stamped, 'the stamp is written off the request path');
    await auth.authenticate(key);
    t.is((await s.connections.find(connection.id))?.last_used_at, stamped, 'not again within the minute');
    t.pass();
  });
}

test("postgres: a key's use notifies no process: every cache stays (the trigger skips last_used_at)", async (t) => {
  const { metadata, url, close } = await metadataOn('postgres');
  t.teardown(close);
  const s = stores(metadata);
  const { key } = await s.connections.createConnection({ projectId: 'prj_1', kind: 'api', name: 'k', createdBy: null });
  // What other processes hear, from the channel itself.
  const listener = new pg.Client({ connectionString: url! });
  await listener.connect();
  t.teardown(() => listener.end());
  const heard: string[] = [];
  listener.on('notification', (n) => heard.push(n.payload ?? ''));
  await listener.query('LISTEN cns_metadata_changed');
  await new Authenticator(metadata, s.users, new AccessTokens(Buffer.alloc(32, 7), 900)).authenticate(key);
  const deadline = Date.now() + 5000;
  while (!(await s.connections.listByProject('prj_1', {}, { limit: 1, offset: 0 })).items[0]?.last_used_at && Date.now() < deadline);
  // A change committed after the stamp: its notification comes after any the stamp would have made.
  await sql`UPDATE users SET display_name = 'sentinel' WHERE id = 'usr_1'`.execute(metadata.db);
  while (!heard.includes('users') && Date.now() < deadline) await new Promise((r) => setImmediate(r));
  t.deepEqual(heard, ['users']);
});
