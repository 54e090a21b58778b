import test from 'ava';
import { API_PREFIX, apiRoutes } from '../../src/app/routes.ts';
import { openApiPath, routerRoutes } from '../../src/http/routes/openapi.ts';
import { assertDocumented } from '../helpers/openapi.ts';
import { createKey, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;
let pid: string;
test.before(async () => {
  server = await startTestServer();
  token = (await server.login()).token;
  pid = (await defaultProject(server, token)).projectId;
});
test.after.always(() => server.stop());

test('GET /api/v1/openapi.json is public and an OpenAPI 3.1 document', async (t) => {
  const res = await server.api('GET', '/openapi.json');
  t.is(res.status, 200);
  t.is(res.body.openapi, '3.1.0');
  t.is(res.body.servers[0].url, API_PREFIX);
  t.truthy(res.body.components.securitySchemes.bearer);
  t.truthy(res.body.components.securitySchemes.accessKey);
});

test('every mounted route is in the document', async (t) => {
  const doc = (await server.api('GET', '/openapi.json')).body;
  const source = apiRoutes(server.services);
  const mounted = source.routers.flatMap(routerRoutes).map((r) => ({ method: r.method, path: openApiPath(r.path) }));
  t.true(mounted.length > 80, `routers list their routes (${mounted.length})`);
  const missing = mounted.filter((r) => !doc.paths[r.path]?.[r.method]).map((r) => `${r.method.toUpperCase()} ${r.path}`);
  t.deepEqual(missing, []);
  t.truthy(doc.paths['/healthz']?.get, '/healthz, mounted outside the base path, is documented with its own server');
  t.is(doc.paths['/healthz'].servers[0].url, '/');
});

test('a declared route documents its parameters, body, permission and response', async (t) => {
  const doc = (await server.api('GET', '/openapi.json')).body;
  const list = doc.paths['/connections'].get;
  t.is(list['x-permission'], 'keys:manage');
  const projectId = list.parameters.find((p: { name: string }) => p.name === 'project_id');
  t.deepEqual([projectId.in, projectId.required], ['query', true]);
  const create = doc.paths['/connections'].post;
  t.deepEqual(create.requestBody.content['application/json'].schema.required.sort(), ['kind', 'name', 'project_id']);
  t.truthy(create.responses['201'], 'the declared success status');
  const data = create.responses['201'].content['application/json'].schema.properties.data;
  t.deepEqual(data.required.sort(), ['connection', 'key']);
  const regenerate = doc.paths['/connections/{id}/regenerate-key'].post;
  t.deepEqual(regenerate.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`), ['path:id']);
});

test('real answers of declared routes match their documented schemas', async (t) => {
  const created = await server.api('POST', '/connections/', { token, body: { project_id: pid, name: 'doc-check', kind: 'api' } });
  t.is(created.status, 201);
  assertDocumented(t, server.services, 'post', '/connections', created);
  const id = created.body.data.connection.id;
  assertDocumented(t, server.services, 'get', '/connections', await server.api('GET', `/connections/?project_id=${pid}`, { token }));
  assertDocumented(t, server.services, 'get', '/connections/{id}', await server.api('GET', `/connections/${id}`, { token }));
  assertDocumented(t, server.services, 'patch', '/connections/{id}', await server.api('PATCH', `/connections/${id}`, { token, body: { name: 'renamed' } }));
  assertDocumented(t, server.services, 'post', '/connections/{id}/regenerate-key', await server.api('POST', `/connections/${id}/regenerate-key`, { token }));
  assertDocumented(t, server.services, 'delete', '/connections/{id}', await server.api('DELETE', `/connections/${id}`, { token }));
  assertDocumented(t, server.services, 'get', '/healthz', await server.api('GET', '/healthz'));
});

test('declared routes still validate: a bad body is 422 naming the field, and the alias /access answers the same', async (t) => {
  const bad = await server.api('POST', '/connections/', { token, body: { project_id: pid, name: '', kind: 'api' } });
  t.is(bad.status, 422);
  t.deepEqual(bad.body.error.details.map((d: { field: string }) => d.field), ['name']);
  const { id } = await createKey(server, token, pid, { name: 'alias' });
  const viaAlias = await server.api('GET', `/access/${id}`, { token });
  t.is(viaAlias.status, 200);
  t.is(viaAlias.body.data.name, 'alias');
});

test('GET /docs serves the API reference page and its assets from the installed package', async (t) => {
  const page = await fetch(`${server.url}/docs`);
  t.is(page.status, 200);
  t.regex(page.headers.get('content-type') ?? '', /text\/html/);
  const html = await page.text();
  t.regex(html, /data-spec-url="\/api\/v1\/openapi\.json"/);
  t.notRegex(html, /https?:\/\//, 'no CDN: every asset is local');
  const bundle = await fetch(`${server.url}/docs/swagger-ui-bundle.js`);
  t.is(bundle.status, 200);
  t.true((await bundle.arrayBuffer()).byteLength > 100_000);
  t.not((await fetch(`${server.url}/docs/package.json`)).status, 200, 'only the listed assets are served');
});
