import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeServices, createServices, type Services } from '../../src/app/services.ts';
import type { Principal } from '../../src/auth/principal.ts';
import { loadSettings } from '../../src/config/settings.ts';
import type { NodeInfo, TrashItem } from '../../src/content/types.ts';
import type { OrgRole, ProjectRole } from '../../src/domain/roles.ts';
import { ContentAccess, type ContentAction } from '../../src/policies/contentAccess.ts';
import { createLogger } from '../../src/logging/logger.ts';

// The content-access policy on its own: real memberships and keys in a real database, no HTTP.
let dir: string;
let s: Services;
let access: ContentAccess;
let projectId: string;
let otherProjectId: string;
const principals = new Map<string, Principal>();

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cns-policy-'));
  s = createServices(loadSettings({}, { dataDir: dir, host: '127.0.0.1', port: 0 }), createLogger('silent'));
  access = new ContentAccess(s.authorizer);
  const owner = await s.users.create({ email: 'owner@example.com', password: 'password-123' });
  principals.set('org owner', { kind: 'user', id: owner.id, user: owner });
  const org = await s.organizations.create({ name: 'acme', createdBy: owner.id });
  projectId = (await s.projects.insert(s.metadata.db, { orgId: org.id, name: 'p', createdBy: owner.id })).id;
  otherProjectId = (await s.projects.insert(s.metadata.db, { orgId: org.id, name: 'q', createdBy: owner.id })).id;
  const project = (await s.projects.find(projectId))!;

  const orgRoles: OrgRole[] = ['admin', 'member', 'viewer'];
  for (const role of orgRoles) {
    const u = await s.users.create({ email: `org-${role}@example.com`, password: 'password-123' });
    // Members join an organization by accepting an invitation.
    const { token } = await s.invitations.create({ orgId: org.id, email: u.email, role, invitedBy: owner.id });
    await s.invitations.accept(token, u);
    principals.set(`org ${role}`, { kind: 'user', id: u.id, user: u });
  }
  const projectRoles: ProjectRole[] = ['admin', 'editor', 'viewer'];
  for (const role of projectRoles) {
    const u = await s.users.create({ email: `prj-${role}@example.com`, password: 'password-123' });
    await s.projectMembers.add(project, u.id, role);
    principals.set(`project ${role}`, { kind: 'user', id: u.id, user: u });
  }
  const stranger = await s.users.create({ email: 'stranger@example.com', password: 'password-123' });
  principals.set('stranger', { kind: 'user', id: stranger.id, user: stranger });

  const key = async (name: string, pid: string, mode: 'read' | 'read_write', scopePath?: string) => {
    const { connection } = await s.connections.createConnection({ projectId: pid, kind: 'api', name, mode, scopePath, createdBy: owner.id });
    principals.set(name, { kind: 'key', id: connection.id, connection });
  };
  await key('key read', projectId, 'read');
  await key('key read_write', projectId, 'read_write');
  await key('key read docs', projectId, 'read', 'docs');
  await key('key read_write docs', projectId, 'read_write', 'docs');
  await key('key of another project', otherProjectId, 'read_write');
  // An agent: its own key reaches no content; through an access it holds that access's subtree and mode.
  const { connection: agent } = await s.connections.createConnection({ projectId, kind: 'agent', name: 'helper', mode: 'read_write', createdBy: owner.id });
  principals.set('agent key', { kind: 'key', id: agent.id, connection: agent });
  principals.set('agent via read docs', { kind: 'key', id: agent.id, connection: { ...agent, scope_path: 'docs', mode: 'read' }, agentAccess: { id: 'acc1' } });
  principals.set('agent via read_write docs', { kind: 'key', id: agent.id, connection: { ...agent, scope_path: 'docs', mode: 'read_write' }, agentAccess: { id: 'acc2' } });
});
test.after.always(async () => {
  await closeServices(s);
  rmSync(dir, { recursive: true, force: true });
});

type Outcome = 'ok' | 403 | 404;
const paths = ['', 'docs', 'docs/a.md', 'other/b.md'] as const;

/**
 * The matrix: for each principal, the outcome of read and write on each path of `paths`.
 * Users reach the whole project with their role; keys their scope with their mode; outsiders
 * get 404 (the project's existence is not revealed).
 */
const matrix: Record<string, Record<ContentAction, Outcome[]>> = {
  'org owner': { 'content:read': ['ok', 'ok', 'ok', 'ok'], 'content:write': ['ok', 'ok', 'ok', 'ok'] },
  'org admin': { 'content:read': ['ok', 'ok', 'ok', 'ok'], 'content:write': ['ok', 'ok', 'ok', 'ok'] },
  'org member': { 'content:read': ['ok', 'ok', 'ok', 'ok'], 'content:write': ['ok', 'ok', 'ok', 'ok'] },
  'org viewer': { 'content:read': ['ok', 'ok', 'ok', 'ok'], 'content:write': [403, 403, 403, 403] },
  'project admin': { 'content:read': ['ok', 'ok', 'ok', 'ok'], 'content:write': ['ok', 'ok', 'ok', 'ok'] },
  'project editor': { 'content:read': ['ok', 'ok', 'ok', 'ok'], 'content:write': ['ok', 'ok', 'ok', 'ok'] },
  'project viewer': { 'content:read': ['ok', 'ok', 'ok', 'ok'], 'content:write': [403, 403, 403, 403] },
  stranger: { 'content:read': [404, 404, 404, 404], 'content:write': [404, 404, 404, 404] },
  'key read': { 'content:read': ['ok', 'ok', 'ok', 'ok'], 'content:write': [403, 403, 403, 403] },
  'key read_write': { 'content:read': ['ok', 'ok', 'ok', 'ok'], 'content:write': ['ok', 'ok', 'ok', 'ok'] },
  'key read docs': { 'content:read': [403, 'ok', 'ok', 403], 'content:write': [403, 403, 403, 403] },
  'key read_write docs': { 'content:read': [403, 'ok', 'ok', 403], 'content:write': [403, 'ok', 'ok', 403] },
  'key of another project': { 'content:read': [404, 404, 404, 404], 'content:write': [404, 404, 404, 404] },
  'agent key': { 'content:read': [403, 403, 403, 403], 'content:write': [403, 403, 403, 403] },
  'agent via read docs': { 'content:read': [403, 'ok', 'ok', 403], 'content:write': [403, 403, 403, 403] },
  'agent via read_write docs': { 'content:read': [403, 'ok', 'ok', 403], 'content:write': [403, 'ok', 'ok', 403] },
};

async function outcome(fn: () => unknown): Promise<Outcome> {
  try {
    await fn();
    return 'ok';
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'NOT_FOUND') return 404;
    if (code === 'FORBIDDEN') return 403;
    throw e;
  }
}

for (const [who, actions] of Object.entries(matrix)) {
  test(`matrix: ${who}`, async (t) => {
    const principal = principals.get(who)!;
    for (const [action, expected] of Object.entries(actions) as [ContentAction, Outcome[]][]) {
      const actual = await Promise.all(paths.map((p) => outcome(() => access.grantPaths(principal, projectId, action, [p]))));
      t.deepEqual(actual, expected, `${who} ${action} on ${paths.map((p) => `"${p}"`).join(', ')}`);
    }
  });
}

test('the message for a path outside the scope is the one message, naming the scope', async (t) => {
  const e = await t.throwsAsync(() => access.grantPaths(principals.get('key read docs')!, projectId, 'content:read', ['other/b.md']));
  t.is(e?.message, 'This access key is limited to "docs".');
});

const node = (over: Partial<NodeInfo>): NodeInfo => ({
  id: 'n1', projectId, path: 'docs/a.md', name: 'a.md', parentId: null, type: 'markdown', contentHash: null, size: 0, mimeType: null,
  state: 'active', version: 1, childrenCount: null, createdAt: '', updatedAt: '', originalPath: null, deletedAt: null, deletedBy: null, ...over,
});

test('nodes: unknown, of another project, or of a project the caller cannot see are all "not found"; outside the scope is 403', async (t) => {
  const scoped = principals.get('key read docs')!;
  t.is(await outcome(() => access.node(scoped, null, 'content:read')), 404);
  t.is(await outcome(() => access.node(scoped, node({ projectId: otherProjectId }), 'content:read')), 404);
  t.is(await outcome(() => access.node(principals.get('stranger')!, node({}), 'content:read')), 404);
  t.is(await outcome(() => access.node(principals.get('org owner')!, node({}), 'content:read', otherProjectId)), 404, 'named the wrong project');
  t.is(await outcome(() => access.node(scoped, node({}), 'content:read')), 'ok');
  t.is(await outcome(() => access.node(scoped, node({ path: 'other/b.md' }), 'content:read')), 403);
  t.is(await outcome(() => access.node(scoped, node({}), 'content:write')), 403, 'read-only key');
});

test('a trashed node counts at the path it was deleted from; one of unknown origin only for unscoped grants', async (t) => {
  const scoped = await access.grant(principals.get('key read docs')!, projectId, 'content:read');
  const whole = await access.grant(principals.get('key read')!, projectId, 'content:read');
  t.true(access.mayNode(scoped, node({ state: 'trashed', path: '.trash/n1_a.md', originalPath: 'docs/a.md' })));
  t.false(access.mayNode(scoped, node({ state: 'trashed', path: '.trash/n1_b.md', originalPath: 'other/b.md' })));
  t.false(access.mayNode(scoped, node({ state: 'trashed', path: '.trash/n1_a.md/x.md', originalPath: null })));
  t.true(access.mayNode(whole, node({ state: 'trashed', path: '.trash/n1_a.md/x.md', originalPath: null })));
});

test('listings: a folder above the scope shows only the way down; beside it, 403', async (t) => {
  const g = await access.grant(principals.get('key read_write docs')!, projectId, 'content:read');
  const root = [{ path: 'docs' }, { path: 'other' }, { path: 'readme.md' }];
  t.deepEqual(access.visibleChildren(g, '', root).map((c) => c.path), ['docs']);
  t.deepEqual(access.visibleChildren(g, 'docs', [{ path: 'docs/a.md' }]).map((c) => c.path), ['docs/a.md']);
  t.is(await outcome(() => access.visibleChildren(g, 'other', [{ path: 'other/b.md' }])), 403);
  const deep = await access.grant(principals.get('key read_write docs')!, projectId, 'content:read');
  t.is(access.listing(deep, ''), 'way-down');
  const whole = await access.grant(principals.get('org viewer')!, projectId, 'content:read');
  t.deepEqual(access.visibleChildren(whole, '', root).map((c) => c.path), ['docs', 'other', 'readme.md']);
});

test('trash: a scoped grant sees only items deleted from inside its scope', async (t) => {
  const item = (originalPath: string | null): TrashItem => ({ id: 'x', trashPath: '.trash/x', originalPath, name: 'x', type: 'markdown', deletedAt: null, deletedBy: null });
  const items = [item('docs/a.md'), item('other/b.md'), item(null)];
  const scoped = await access.grant(principals.get('key read docs')!, projectId, 'content:read');
  t.deepEqual(access.visibleTrash(scoped, items).map((i) => i.originalPath), ['docs/a.md']);
  const whole = await access.grant(principals.get('project viewer')!, projectId, 'content:read');
  t.is(access.visibleTrash(whole, items).length, 3);
});

test('whole-project operations need a whole-project grant', async (t) => {
  const scoped = await access.grant(principals.get('key read_write docs')!, projectId, 'content:write');
  t.is(await outcome(() => access.requireWholeProject(scoped, 'Rolling back the project')), 403);
  const whole = await access.grant(principals.get('key read_write')!, projectId, 'content:write');
  t.is(await outcome(() => access.requireWholeProject(whole, 'Rolling back the project')), 'ok');
});

test('a grant records the actor its writes carry', async (t) => {
  const g = await access.grant(principals.get('key read_write')!, projectId, 'content:write');
  t.deepEqual([g.actor.type, g.actor.author], ['agent', 'agent:key read_write']);
  const u = await access.grant(principals.get('project editor')!, projectId, 'content:write');
  t.deepEqual([u.actor.type, u.actor.author, u.role], ['user', 'prj-editor@example.com', 'editor']);
});
