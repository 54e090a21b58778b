import test from 'ava';
import { asAppError } from '../../src/http/errors.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { everyStoredString } from '../helpers/storedStrings.ts';
import { addOrgMember, createKey, createOrg, createProject, email } from './fixtures.ts';

let server: TestServer;
let owner: { id: string; token: string };
let orgId: string;
let projectId: string;
test.before(async () => {
  server = await startTestServer();
  owner = await server.createUser(email('owner'));
  orgId = await createOrg(server, owner.token);
  projectId = await createProject(server, owner.token, orgId);
});
test.after.always(() => server.stop());

test('creating an api connection answers the record and the key once; only a hash is stored', async (t) => {
  const res = await server.api('POST', '/connections/', {
    token: owner.token,
    body: { project_id: projectId, name: 'CI', kind: 'api', scope_path: '/docs/guides/', mode: 'read' },
  });
  t.is(res.status, 201);
  const { connection, key } = res.body.data;
  t.regex(key, /^cns_[A-Za-z0-9_-]{43}$/);
  t.like(connection, { project_id: projectId, kind: 'api', name: 'CI', scope_path: 'docs/guides', mode: 'read', status: 'active', created_by: owner.id, last_used_at: null });
  t.is(connection.key_prefix, key.slice(0, connection.key_prefix.length));
  t.false('key_hash' in connection);
  t.false('key' in connection);
  t.false((await everyStoredString(server)).some((v) => v.includes(key)), 'the key is not stored');

  const got = await server.api('GET', `/connections/${connection.id}`, { token: owner.token });
  t.is(got.status, 200);
  t.false(JSON.stringify(got.body).includes(key));
  const list = await server.api('GET', `/connections?project_id=${projectId}`, { token: owner.token });
  t.false(JSON.stringify(list.body).includes(key));

  const me = await server.api('GET', '/auth/me', { token: key });
  t.is(me.status, 200);
  t.is(me.body.data.connection.id, connection.id);
  // The use is stamped off the request path: it lands shortly after the answer.
  const deadline = Date.now() + 10_000;
  let lastUsed: string | null = null;
  while (!lastUsed && Date.now() < deadline) {
    lastUsed = (await server.api('GET', `/connections/${connection.id}`, { token: owner.token })).body.data.last_used_at;
    if (!lastUsed) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.truthy(lastUsed);
});

test('the same routes answer under /access', async (t) => {
  const res = await server.api('POST', '/access', { token: owner.token, body: { project_id: projectId, name: 'via access', kind: 'api' } });
  t.is(res.status, 201);
  const id = res.body.data.connection.id;
  t.is(res.body.data.connection.mode, 'read_write');
  t.is(res.body.data.connection.scope_path, '');
  t.is((await server.api('GET', `/access/${id}`, { token: owner.token })).body.data.id, id);
  t.is((await server.api('GET', `/connections/${id}`, { token: owner.token })).body.data.id, id);
  t.is((await server.api('PATCH', `/access/${id}`, { token: owner.token, body: { name: 'renamed' } })).body.data.name, 'renamed');
  t.is((await server.api('POST', `/access/${id}/regenerate-key`, { token: owner.token })).status, 200);
  t.is((await server.api('DELETE', `/access/${id}`, { token: owner.token })).status, 200);
  t.is((await server.api('GET', `/connections/${id}`, { token: owner.token })).status, 404);
});

test('listing by project paginates; project_id is required', async (t) => {
  const org = await createOrg(server, owner.token);
  const project = await createProject(server, owner.token, org);
  for (let i = 0; i < 3; i++) await createKey(server, owner.token, project, { name: `k${i}` });
  const page = await server.api('GET', `/connections/?project_id=${project}&limit=2&offset=1`, { token: owner.token });
  t.is(page.status, 200);
  t.is(page.body.data.total, 3);
  t.deepEqual(page.body.data.connections.map((c: { name: string }) => c.name), ['k1', 'k2']);
  const missing = await server.api('GET', '/connections', { token: owner.token });
  t.is(missing.status, 422);
  t.is(missing.body.error.details[0].field, 'project_id');
});

test('invalid bodies are 422 with the offending fields; scope paths must be clean', async (t) => {
  const cases: [unknown, string][] = [
    [{ project_id: projectId, name: 'x', kind: 'mcp' }, 'kind'],
    [{ project_id: projectId, name: 'x' }, 'kind'],
    [{ project_id: projectId, name: 'x', kind: 'api', mode: 'write' }, 'mode'],
    [{ project_id: projectId, kind: 'api' }, 'name'],
    [{ project_id: projectId, name: 'x', kind: 'api', scope_path: 'a/../b' }, 'scope_path'],
    [{ project_id: projectId, name: 'x', kind: 'api', scope_path: 'a//b' }, 'scope_path'],
    [{ project_id: projectId, name: 'x', kind: 'api', scope_path: './a' }, 'scope_path'],
    [{ project_id: projectId, name: 'x', kind: 'api', scope_path: 5 }, 'scope_path'],
  ];
  for (const [body, field] of cases) {
    const res = await server.api('POST', '/connections', { token: owner.token, body });
    t.is(res.status, 422, JSON.stringify(body));
    t.true(res.body.error.details.some((d: { field: string }) => d.field === field), JSON.stringify(res.body.error.details));
  }
  const { id } = await createKey(server, owner.token, projectId);
  const patch = await server.api('PATCH', `/connections/${id}`, { token: owner.token, body: { status: 'deleted', scope_path: '../x' } });
  t.is(patch.status, 422);
  const bad = await server.api('PATCH', `/connections/${id}`, { token: owner.token, body: { scope_path: '../x' } });
  t.is(bad.status, 422);
  t.is(bad.body.error.details[0].field, 'scope_path');
  t.is((await server.services.connections.find(id))!.scope_path, '', 'nothing changed');
});

test('regenerating the key answers a new one and the old one stops working at once', async (t) => {
  const { id, key } = await createKey(server, owner.token, projectId);
  t.is((await server.api('GET', `/projects/${projectId}`, { token: key })).status, 200);
  const res = await server.api('POST', `/connections/${id}/regenerate-key`, { token: owner.token });
  t.is(res.status, 200);
  const fresh = res.body.data.key;
  t.not(fresh, key);
  t.is(res.body.data.connection.id, id);
  t.is(res.body.data.connection.key_prefix, fresh.slice(0, res.body.data.connection.key_prefix.length));
  const old = await server.api('GET', `/projects/${projectId}`, { token: key });
  t.is(old.status, 401);
  t.is(old.body.error.code, 'UNAUTHORIZED');
  t.is((await server.api('GET', `/projects/${projectId}`, { token: fresh })).status, 200);
});

test('paused and revoked keys are rejected with 401; paused can resume, revoked is final', async (t) => {
  const { id, key } = await createKey(server, owner.token, projectId);
  const paused = await server.api('PATCH', `/connections/${id}`, { token: owner.token, body: { status: 'paused' } });
  t.is(paused.body.data.status, 'paused');
  t.is((await server.api('GET', `/projects/${projectId}`, { token: key })).status, 401);
  await server.api('PATCH', `/connections/${id}`, { token: owner.token, body: { status: 'active' } });
  t.is((await server.api('GET', `/projects/${projectId}`, { token: key })).status, 200);

  await server.api('PATCH', `/connections/${id}`, { token: owner.token, body: { status: 'revoked' } });
  t.is((await server.api('GET', `/projects/${projectId}`, { token: key })).status, 401);
  t.is((await server.api('PATCH', `/connections/${id}`, { token: owner.token, body: { status: 'active' } })).status, 409);
  t.is((await server.api('POST', `/connections/${id}/regenerate-key`, { token: owner.token })).status, 409);

  const deleted = await createKey(server, owner.token, projectId);
  await server.api('DELETE', `/connections/${deleted.id}`, { token: owner.token });
  t.is((await server.api('GET', `/projects/${projectId}`, { token: deleted.key })).status, 401);
});

test('a key reaches only its project, a read key cannot write, and the scope is enforced', async (t) => {
  const other = await createProject(server, owner.token, orgId, 'other');
  const read = await createKey(server, owner.token, projectId, { mode: 'read', scope_path: 'docs' });
  const write = await createKey(server, owner.token, projectId, { mode: 'read_write', scope_path: 'docs' });

  t.is((await server.api('GET', `/projects/${projectId}`, { token: read.key })).body.data.role, null);
  t.is((await server.api('GET', `/projects/${other}`, { token: read.key })).status, 404);
  const listed = await server.api('GET', '/projects', { token: read.key });
  t.deepEqual(listed.body.data.projects.map((p: { id: string }) => p.id), [projectId]);
  t.is((await server.api('PUT', `/projects/${projectId}`, { token: write.key, body: { name: 'x' } })).status, 403);
  t.is((await server.api('POST', '/connections', { token: write.key, body: { project_id: projectId, name: 'k', kind: 'api' } })).status, 403);
  t.is((await server.api('GET', `/connections/${read.id}`, { token: write.key })).status, 403);

  // What content routes ask the Authorizer: mode and scope.
  const check = async (key: string, action: 'content:read' | 'content:write', path: string) => {
    const principal = (await server.services.authenticator.authenticate(key))!;
    try {
      await server.services.authorizer.requireProject(principal, projectId, action, path);
      return 200;
    } catch (err) {
      return asAppError(err)!.status;
    }
  };
  t.is(await check(read.key, 'content:read', 'docs/a.md'), 200);
  t.is(await check(read.key, 'content:write', 'docs/a.md'), 403);
  t.is(await check(write.key, 'content:write', 'docs/a.md'), 200);
  t.is(await check(write.key, 'content:write', '/docs'), 200);
  t.is(await check(write.key, 'content:read', 'private/a.md'), 403);
  t.is(await check(write.key, 'content:write', 'docsx/a.md'), 403);
});

test('over the content API a read key cannot write and a key stays inside its scope', async (t) => {
  const read = await createKey(server, owner.token, projectId, { mode: 'read', scope_path: 'docs' });
  const write = await createKey(server, owner.token, projectId, { mode: 'read_write', scope_path: 'docs' });
  const put = (key: string, path: string) =>
    server.api('POST', `/content/${projectId}/write`, { token: key, body: { path, content: 'hello', node_type: 'markdown' } });
  t.is((await put(write.key, 'docs/in.md')).status, 201);
  t.is((await put(read.key, 'docs/in.md')).status, 403);
  t.is((await put(write.key, 'elsewhere.md')).status, 403);
  t.is((await server.api('GET', `/content/${projectId}/cat?path=docs/in.md`, { token: read.key })).status, 200);
});

test('managing connections needs keys:manage: members 403, outsiders 404', async (t) => {
  const member = await server.createUser(email('member'));
  const outsider = await server.createUser(email('outsider'));
  await addOrgMember(server, orgId, member.id, 'member');
  const { id } = await createKey(server, owner.token, projectId);
  const body = { project_id: projectId, name: 'n', kind: 'api' };
  t.is((await server.api('POST', '/connections', { token: member.token, body })).status, 403);
  t.is((await server.api('GET', `/connections/${id}`, { token: member.token })).status, 403);
  t.is((await server.api('POST', '/connections', { token: outsider.token, body })).status, 404);
  for (const [method, path] of [
    ['GET', `/connections/${id}`],
    ['PATCH', `/connections/${id}`],
    ['DELETE', `/connections/${id}`],
    ['POST', `/connections/${id}/regenerate-key`],
    ['GET', `/connections?project_id=${projectId}`],
  ] as const) {
    const res = await server.api(method, path, { token: outsider.token, body: method === 'GET' ? undefined : {} });
    t.is(res.status, 404, `${method} ${path}`);
  }
});

test('createConnection serves other kinds too, with their config', async (t) => {
  const { connection, key } = await server.services.connections.createConnection({
    projectId,
    kind: 'mcp',
    name: 'agent endpoint',
    scopePath: 'notes/',
    mode: 'read',
    createdBy: owner.id,
    config: { tools: ['ls'] },
  });
  t.true(key.startsWith('cns_'));
  t.like(connection, { kind: 'mcp', scope_path: 'notes', mode: 'read' });
  t.deepEqual(JSON.parse((await server.services.connections.find(connection.id))!.config), { tools: ['ls'] });
  await t.throwsAsync(() => server.services.connections.createConnection({ projectId, kind: 'sync', name: 'x', scopePath: 'a/../b', createdBy: null }), {
    message: /\.\./,
  });
});
