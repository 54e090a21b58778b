import test from 'ava';
import Koa from 'koa';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { closeServices, createServices, type Services } from '../../src/app/services.ts';
import type { Principal } from '../../src/auth/principal.ts';
import { loadSettings } from '../../src/config/settings.ts';
import { ok } from '../../src/http/envelope.ts';
import { errorHandler } from '../../src/http/middleware/errorHandler.ts';
import type { NodeInfo } from '../../src/content/types.ts';
import { route, type RouteDeclaration, type RouteGroup } from '../../src/http/routes/declaration.ts';
import { mountGroup, type RouteGuards } from '../../src/http/routes/mount.ts';
import { createLogger } from '../../src/logging/logger.ts';

// The mount's declared authorization (`authorize`): the real Authorizer over real memberships,
// behind a router built by mountGroup. Authentication is not under test: the caller is picked by
// name from a test header.
let dir: string;
let s: Services;
let server: Server;
let base: string;
let orgId: string;
let projectId: string;
const principals = new Map<string, Principal>();
/** Which handlers ran: a refused request must never reach its handler. */
const handled: string[] = [];

const id = z.string().min(1).max(20);
const group: RouteGroup = {
  prefix: '/t',
  tag: 'Test',
  routes: [
    route({
      method: 'get',
      path: '/orgs/:org_id',
      summary: 'An organization route needing org:update',
      permission: 'org:update',
      authorize: { org: ({ params }) => params.org_id },
      params: z.object({ org_id: id }),
      handle(ctx, { params, access: role }) {
        handled.push(params.org_id);
        ok(ctx, { role });
      },
    }),
    route({
      method: 'get',
      path: '/items',
      summary: 'A project route needing content:write on the project named in the query',
      permission: 'content:write',
      authorize: { project: ({ query }) => query.project_id },
      query: z.object({ project_id: id }),
      handle(ctx, { access }) {
        handled.push(access.project.id);
        ok(ctx, { project_id: access.project.id, role: access.role, scope: access.scope });
      },
    }),
    route({
      method: 'get',
      path: '/connections/:id',
      summary: 'A record in a project: the check is made on its project',
      permission: 'keys:manage',
      authorize: { resource: ({ params }) => s.connections.find(params.id), name: 'Connection' },
      params: z.object({ id }),
      handle(ctx, { access }) {
        handled.push(access.record.id);
        ok(ctx, { id: access.record.id, project_id: access.project.id });
      },
    }),
    route({
      method: 'get',
      path: '/content/:project_id',
      summary: 'The content door on a project, with the path the request touches',
      permission: 'content:read',
      authorize: { content: ({ params }) => params.project_id, paths: ({ query }) => [query.path] },
      params: z.object({ project_id: id }),
      query: z.object({ path: z.string().optional() }),
      handle(ctx, { access }) {
        handled.push(access.projectId);
        ok(ctx, { project_id: access.projectId, scope: access.scope, actor: access.actor.type });
      },
    }),
    route({
      method: 'get',
      path: '/nodes/:node_id',
      summary: 'The content door on a node id',
      permission: 'content:write',
      authorize: { node: ({ params }) => params.node_id, project: ({ query }) => query.project_id },
      params: z.object({ node_id: id }),
      query: z.object({ project_id: id.optional() }),
      handle(ctx, { access }) {
        handled.push(access.node.id);
        ok(ctx, { path: access.node.path, scope: access.grant.scope });
      },
    }),
    route({
      method: 'get',
      path: '/me',
      summary: 'A signed-in user, not a key',
      authorize: { user: 'the caller reads their own record' },
      handle(ctx, { access }) {
        handled.push(access.id);
        ok(ctx, { email: access.user.email });
      },
    }),
  ],
};

const nodes = new Map<string, NodeInfo>();

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cns-mount-'));
  s = createServices(loadSettings({}, { dataDir: dir, host: '127.0.0.1', port: 0 }), createLogger('silent'));
  const user = async (name: string) => {
    const u = await s.users.create({ email: `${name}@example.com`, password: 'password-123' });
    principals.set(name, { kind: 'user', id: u.id, user: u });
    return u;
  };
  const owner = await user('owner');
  const org = await s.organizations.create({ name: 'acme', createdBy: owner.id });
  orgId = org.id;
  const viewer = await user('viewer');
  const { token } = await s.invitations.create({ orgId, email: viewer.email, role: 'viewer', invitedBy: owner.id });
  await s.invitations.accept(token, viewer);
  await user('stranger');
  projectId = (await s.projects.insert(s.metadata.db, { orgId, name: 'p', createdBy: owner.id })).id;
  const otherId = (await s.projects.insert(s.metadata.db, { orgId, name: 'q', createdBy: owner.id })).id;
  const key = async (name: string, pid: string, mode: 'read' | 'read_write', scopePath?: string) => {
    const { connection } = await s.connections.createConnection({ projectId: pid, kind: 'api', name, mode, scopePath, createdBy: owner.id });
    principals.set(name, { kind: 'key', id: connection.id, connection });
  };
  await key('read key', projectId, 'read');
  await key('docs key', projectId, 'read_write', 'docs');
  await key('other key', otherId, 'read_write');
  for (const [nodeId, path] of [['nod_docs', 'docs/a.md'], ['nod_root', 'b.md']] as const) {
    nodes.set(nodeId, { id: nodeId, projectId, path, state: 'active' } as NodeInfo);
  }

  const app = new Koa();
  app.silent = true;
  const router = mountGroup(group, guards());
  app
    .use(errorHandler(createLogger('silent')))
    .use(async (ctx, next) => {
      ctx.state.principal = principals.get(ctx.get('x-test-caller'));
      await next();
    })
    .use(router.routes());
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/t`;
});
test.after.always(async () => {
  await new Promise((resolve) => server.close(resolve));
  await closeServices(s);
  rmSync(dir, { recursive: true, force: true });
});

function guards(): RouteGuards {
  return { authorizer: s.authorizer, access: s.access, findNode: (nodeId) => nodes.get(nodeId) ?? null };
}

async function call(caller: string, path: string): Promise<{ status: number; code: unknown; data: Record<string, unknown> | null }> {
  const res = await fetch(base + path, { headers: { 'x-test-caller': caller } });
  const body = (await res.json()) as { code: unknown; data: Record<string, unknown> | null };
  return { status: res.status, code: body.code, data: body.data };
}

test.serial('org route: the declared permission is checked on the declared organization before the handler', async (t) => {
  handled.length = 0;
  const owner = await call('owner', `/orgs/${orgId}`);
  t.is(owner.status, 200);
  t.deepEqual(owner.data, { role: 'owner' }, 'the handler receives the role the check found');

  const refused = [
    ['stranger', `/orgs/${orgId}`, 404, 'NOT_FOUND'], // no relation: the organization is not revealed
    ['owner', '/orgs/org_unknown', 404, 'NOT_FOUND'],
    ['viewer', `/orgs/${orgId}`, 403, 'FORBIDDEN'], // a member whose role is too small
    ['read key', `/orgs/${orgId}`, 403, 'FORBIDDEN'], // keys never manage organizations
  ] as const;
  for (const [caller, path, status, code] of refused) {
    const r = await call(caller, path);
    t.is(r.status, status, `${caller} ${path}`);
    t.is(r.code, code, `${caller} ${path}`);
  }
  t.deepEqual(handled, [orgId], 'only the allowed request reached the handler');
});

test.serial('project route: the project comes from the validated query; keys are held to their project and mode', async (t) => {
  handled.length = 0;
  const owner = await call('owner', `/items?project_id=${projectId}`);
  t.is(owner.status, 200);
  t.deepEqual(owner.data, { project_id: projectId, role: 'admin', scope: '' });
  const docsKey = await call('docs key', `/items?project_id=${projectId}`);
  t.deepEqual(docsKey.data, { project_id: projectId, role: null, scope: 'docs' }, "a key's access carries its scope");

  const refused = [
    ['stranger', 404, 'NOT_FOUND'],
    ['other key', 404, 'NOT_FOUND'], // a key of another project does not see this one
    ['read key', 403, 'FORBIDDEN'], // its own project, but read-only
    ['viewer', 403, 'FORBIDDEN'], // org viewer: project:read but not content:write
  ] as const;
  for (const [caller, status, code] of refused) {
    const r = await call(caller, `/items?project_id=${projectId}`);
    t.is(r.status, status, caller);
    t.is(r.code, code, caller);
  }
  t.deepEqual(handled, [projectId, projectId]);
});

test.serial('input is validated before authorization: a stranger with bad input gets 422, not 404', async (t) => {
  handled.length = 0;
  const missing = await call('stranger', '/items');
  t.is(missing.status, 422);
  t.is(missing.code, 'VALIDATION_ERROR');
  const tooLong = await call('stranger', `/orgs/${'x'.repeat(21)}`);
  t.is(tooLong.status, 422);
  t.is(tooLong.code, 'VALIDATION_ERROR');
  t.deepEqual(handled, []);
});

test.serial('resource route: the record is loaded and the check made on its project; an unseen record is "not found" by its own name', async (t) => {
  handled.length = 0;
  const ownKey = (await s.connections.createConnection({ projectId, kind: 'api', name: 'k', mode: 'read', createdBy: null })).connection.id;
  const owner = await call('owner', `/connections/${ownKey}`);
  t.is(owner.status, 200);
  t.deepEqual(owner.data, { id: ownKey, project_id: projectId });
  for (const [caller, path, status, message] of [
    ['stranger', `/connections/${ownKey}`, 404, 'Connection not found.'],
    ['owner', '/connections/con_unknown', 404, 'Connection not found.'],
    ['viewer', `/connections/${ownKey}`, 403, undefined],
    ['read key', `/connections/${ownKey}`, 403, undefined],
  ] as const) {
    const res = await fetch(base + path, { headers: { 'x-test-caller': caller } });
    const body = (await res.json()) as { message: string };
    t.is(res.status, status, `${caller} ${path}`);
    if (message) t.is(body.message, message);
  }
  t.deepEqual(handled, [ownKey]);
});

test.serial('content route: the grant comes from the content door; a path outside a key\'s scope is 403', async (t) => {
  handled.length = 0;
  t.deepEqual((await call('docs key', `/content/${projectId}?path=docs/a.md`)).data, { project_id: projectId, scope: 'docs', actor: 'agent' });
  t.deepEqual((await call('viewer', `/content/${projectId}`)).data, { project_id: projectId, scope: '', actor: 'user' });
  t.is((await call('docs key', `/content/${projectId}?path=b.md`)).status, 403);
  t.is((await call('stranger', `/content/${projectId}?path=docs/a.md`)).status, 404);
  t.is((await call('other key', `/content/${projectId}`)).status, 404);
  t.deepEqual(handled, [projectId, projectId]);
});

test.serial('node route: unknown ids, unseen nodes and nodes of another project than named are all "Node not found."', async (t) => {
  handled.length = 0;
  t.deepEqual((await call('owner', '/nodes/nod_docs')).data, { path: 'docs/a.md', scope: '' });
  t.deepEqual((await call('docs key', `/nodes/nod_docs?project_id=${projectId}`)).data, { path: 'docs/a.md', scope: 'docs' }, 'a read_write key, in its scope, in the project named');
  for (const [caller, path, status] of [
    ['stranger', '/nodes/nod_docs', 404],
    ['owner', '/nodes/nod_nope', 404],
    ['owner', '/nodes/nod_docs?project_id=prj_other', 404],
    ['docs key', '/nodes/nod_root', 403],
    ['read key', '/nodes/nod_docs', 403],
    ['viewer', '/nodes/nod_docs', 403],
  ] as const) {
    t.is((await call(caller, path)).status, status, `${caller} ${path}`);
  }
  t.deepEqual(handled, ['nod_docs', 'nod_docs']);
});

test.serial('user route: keys are refused', async (t) => {
  handled.length = 0;
  t.deepEqual((await call('owner', '/me')).data, { email: 'owner@example.com' });
  t.is((await call('read key', '/me')).status, 403);
  t.is(handled.length, 1);
});

test('a declaration that does not say its check, or names the wrong permission for it, fails at start-up', (t) => {
  const mount = (r: RouteDeclaration) => mountGroup({ prefix: '/x', tag: 'X', routes: [r] }, guards());
  const org = group.routes[0]!;
  t.throws(() => mount({ ...org, authorize: undefined as never }), { message: /GET \/x\/orgs\/:org_id declares no authorize/ });
  t.throws(() => mount({ ...org, permission: undefined }), { message: /declares a org check without a permission/ });
  t.throws(() => mount({ ...group.routes[3]!, permission: 'keys:manage' as never }), { message: /the content door checks content:read or content:write, not keys:manage/ });
  t.throws(() => mount({ ...group.routes[5]!, permission: 'org:read' as never }), { message: /declares a permission its user check does not apply/ });
});
