import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { assertDocumented } from '../helpers/openapi.ts';
import { contentApi, createKey, createProject, defaultProject, type ContentCall } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;
let projectId: string;
let orgId: string;
let c: ContentCall;
let docsId: string;

test.before(async () => {
  server = await startTestServer();
  ({ token } = await server.login());
  ({ projectId, orgId } = await defaultProject(server, token));
  c = contentApi(server, token, projectId);
  await c('POST', '/write', { path: 'docs/guide.md', node_type: 'markdown', content: '# Guide' });
  await c('POST', '/write', { path: 'docs/data.json', node_type: 'json', content: { a: 1 } });
  await c('POST', '/mkdir', { path: 'archive' });
  docsId = server.services.content.findByPath(projectId, 'docs')!.id;
});

test.after.always(async () => server?.stop());

const check = (t: import('ava').ExecutionContext, method: string, path: string, res: Awaited<ReturnType<TestServer['api']>>) =>
  assertDocumented(t, server.services, method, path, res);

async function queryJsonTool(pid: string, nodeId: string, name = 'lookup') {
  const r = await server.api('POST', '/tools', { token, body: { project_id: pid, node_id: nodeId, name, type: 'query_json' } });
  if (r.status !== 201) throw new Error(`tool create: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data.id as string;
}

test('create answers the key once, with a client configuration holding it; reads show a placeholder instead', async (t) => {
  const res = await server.api('POST', '/mcp-endpoints', { token, body: { name: 'Team docs', project_id: projectId, node_id: docsId } });
  t.is(res.status, 201, JSON.stringify(res.body));
  check(t, 'post', '/mcp-endpoints', res);
  const { mcp_endpoint: e, key, client_config } = res.body.data;
  t.like(e, { name: 'Team docs', project_id: projectId, node_id: docsId, path: 'docs', mode: 'read', status: 'active', transport: 'streamable-http', tool_ids: [] });
  t.is(e.server_url, `${server.services.settings.baseUrl}/api/v1/mcp/e/${e.id}`);
  t.regex(key, /^cns_\S{40,}$/);
  t.true(key.startsWith(e.key_prefix));
  t.deepEqual(client_config, { mcpServers: { 'team-docs': { type: 'http', url: e.server_url, headers: { Authorization: `Bearer ${key}` } } } });
  t.deepEqual(e.client_config.mcpServers['team-docs'].headers, { Authorization: 'Bearer <MCP endpoint key>' });
  t.is(e.clients.vscode.config.servers['team-docs'].url, e.server_url);
  t.regex(e.clients.claude_code.command, /^claude mcp add --transport http team-docs http:\/\/\S+ --header "Authorization: Bearer <MCP endpoint key>"$/);
  t.deepEqual(e.clients.claude_desktop.config.mcpServers['team-docs'].args.slice(0, 3), ['-y', 'mcp-remote', e.server_url]);
  // The block works as pasted: an SDK client configured from it alone connects and reads.
  const pasted = client_config.mcpServers['team-docs'];
  const client = new Client({ name: 'pasted', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(pasted.url), { requestInit: { headers: pasted.headers } }));
  t.true((await client.listTools()).tools.some((x) => x.name === 'cat'));
  await client.close();

  const read = await server.api('GET', `/mcp-endpoints/${e.id}`, { token });
  check(t, 'get', '/mcp-endpoints/{endpoint_id}', read);
  const list = await server.api('GET', `/mcp-endpoints?project_id=${projectId}`, { token });
  check(t, 'get', '/mcp-endpoints', list);
  const byNode = await server.api('GET', `/mcp-endpoints/by-node/${docsId}`, { token });
  check(t, 'get', '/mcp-endpoints/by-node/{node_id}', byNode);
  t.true(list.body.data.mcp_endpoints.some((x: { id: string }) => x.id === e.id));
  t.true(byNode.body.data.mcp_endpoints.some((x: { id: string }) => x.id === e.id));
  for (const r of [read, list, byNode]) t.false(JSON.stringify(r.body).includes(key), 'the key is never shown again');
  // It is a connection of kind mcp scoped to the folder, like every key.
  const conns = await server.api('GET', `/connections/?project_id=${projectId}&kind=mcp`, { token });
  t.like(conns.body.data.connections.find((x: { id: string }) => x.id === e.id), { kind: 'mcp', scope_path: 'docs', mode: 'read' });
});

test('an endpoint is read-only unless the request asks for read_write: no write tool is offered, and its key cannot write', async (t) => {
  const made = await server.api('POST', '/mcp-endpoints', { token, body: { name: 'least privilege', project_id: projectId, node_id: docsId } });
  t.is(made.status, 201, JSON.stringify(made.body));
  const { mcp_endpoint: e, key } = made.body.data;
  t.is(e.mode, 'read');
  const client = new Client({ name: 'default-mode', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(e.server_url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } }));
  const names = (await client.listTools()).tools.map((x) => x.name);
  await client.close();
  t.true(names.includes('cat'));
  for (const writer of ['write', 'mkdir', 'mv', 'rm', 'rollback']) t.false(names.includes(writer), writer);
  t.is((await server.api('POST', `/content/${projectId}/write`, { token: key, body: { path: 'docs/nope.md', node_type: 'markdown', content: 'x' } })).status, 403);

  const writable = await server.api('POST', '/mcp-endpoints', { token, body: { name: 'asked to write', project_id: projectId, node_id: docsId, mode: 'read_write' } });
  t.is(writable.body.data.mcp_endpoint.mode, 'read_write');
  // The OpenAPI document says so.
  const doc = (await server.api('GET', '/openapi.json')).body;
  const mode = doc.paths['/mcp-endpoints'].post.requestBody.content['application/json'].schema.properties.mode;
  t.regex(mode.description, /^read \(the default\)/);
});

test('update (name, mode, folder, bound tools, status), regenerate-key and delete', async (t) => {
  const toolId = await queryJsonTool(projectId, server.services.content.findByPath(projectId, 'docs/data.json')!.id);
  const created = await server.api('POST', '/mcp-endpoints', { token, body: { name: 'crud', project_id: projectId, node_id: docsId, mode: 'read', tool_ids: [toolId, toolId] } });
  const e = created.body.data.mcp_endpoint;
  t.deepEqual(e.tool_ids, [toolId], 'a tool bound twice counts once');
  t.deepEqual(e.tools, [{ id: toolId, name: 'lookup', type: 'query_json' }]);
  const archiveId = server.services.content.findByPath(projectId, 'archive')!.id;
  const put = await server.api('PUT', `/mcp-endpoints/${e.id}`, { token, body: { name: 'renamed', mode: 'read_write', node_id: archiveId, tool_ids: [] } });
  check(t, 'put', '/mcp-endpoints/{endpoint_id}', put);
  t.like(put.body.data, { name: 'renamed', mode: 'read_write', node_id: archiveId, path: 'archive', tool_ids: [], tools: [] });
  const paused = await server.api('PUT', `/mcp-endpoints/${e.id}`, { token, body: { status: 'paused' } });
  t.is(paused.body.data.status, 'paused');
  t.is(paused.body.data.path, 'archive', 'other fields are kept');

  const regen = await server.api('POST', `/mcp-endpoints/${e.id}/regenerate-key`, { token });
  check(t, 'post', '/mcp-endpoints/{endpoint_id}/regenerate-key', regen);
  t.not(regen.body.data.key, created.body.data.key);
  t.is(regen.body.data.client_config.mcpServers.renamed.headers.Authorization, `Bearer ${regen.body.data.key}`);

  const del = await server.api('DELETE', `/mcp-endpoints/${e.id}`, { token });
  check(t, 'delete', '/mcp-endpoints/{endpoint_id}', del);
  t.is((await server.api('GET', `/mcp-endpoints/${e.id}`, { token })).status, 404);
  t.is((await server.api('DELETE', `/mcp-endpoints/${e.id}`, { token })).status, 404);
});

test('bad input is 422 naming the field: empty name, a file as the folder, tools of another project or unknown, a bad mode, unknown fields', async (t) => {
  const refusal = async (body: Record<string, unknown>) => {
    const r = await server.api('POST', '/mcp-endpoints', { token, body: { name: 'x', project_id: projectId, node_id: docsId, ...body } });
    t.is(r.status, 422, JSON.stringify(r.body));
    return r.body.error.details as { field: string; message: string }[];
  };
  const fields = async (body: Record<string, unknown>) => (await refusal(body)).map((d) => d.field);
  t.deepEqual(await fields({ name: ' ' }), ['name']);
  t.deepEqual(await fields({ node_id: server.services.content.findByPath(projectId, 'docs/guide.md')!.id }), ['node_id']);
  t.deepEqual(await fields({ mode: 'write' }), ['mode']);
  // A scope of its own would contradict the folder: an unknown field is refused, named.
  t.regex((await refusal({ scope_path: 'docs' }))[0]!.message, /scope_path/);
  t.deepEqual(await fields({ tool_ids: ['tool_doesnotexist'] }), ['tool_ids.0']);
  const other = await createProject(server, token, orgId, 'mcp-other');
  await contentApi(server, token, other)('POST', '/write', { path: 'x.json', node_type: 'json', content: {} });
  const foreign = await queryJsonTool(other, server.services.content.findByPath(other, 'x.json')!.id, 'foreign');
  const own = await queryJsonTool(projectId, docsId, 'own');
  t.deepEqual(await fields({ tool_ids: [own, foreign] }), ['tool_ids.1']);
  const e = (await server.api('POST', '/mcp-endpoints', { token, body: { name: 'ok', project_id: projectId, node_id: docsId } })).body.data.mcp_endpoint;
  const put = await server.api('PUT', `/mcp-endpoints/${e.id}`, { token, body: { tool_ids: [foreign] } });
  t.is(put.status, 422);
  t.deepEqual(put.body.error.details.map((d: { field: string }) => d.field), ['tool_ids.0']);
  t.deepEqual((await server.api('GET', `/mcp-endpoints/${e.id}`, { token })).body.data.tool_ids, [], 'nothing changed');
  // A node of another project than the one named is "not found".
  const otherNode = server.services.content.findByPath(other, 'x.json')!.id;
  t.is((await server.api('POST', '/mcp-endpoints', { token, body: { name: 'x', project_id: projectId, node_id: otherNode } })).status, 404);
});

test('managing endpoints needs keys:manage: a viewer gets 403, a stranger 404, an access key 403', async (t) => {
  const viewer = await server.createUser(`mcp-viewer-${process.pid}@example.com`);
  await server.api('POST', `/projects/${projectId}/members`, { token, body: { user_id: viewer.id, role: 'viewer' } });
  const stranger = await server.createUser(`mcp-stranger-${process.pid}@example.com`);
  const e = (await server.api('POST', '/mcp-endpoints', { token, body: { name: 'perm', project_id: projectId, node_id: docsId } })).body.data.mcp_endpoint;
  const body = { name: 'n', project_id: projectId, node_id: docsId };
  t.is((await server.api('POST', '/mcp-endpoints', { token: viewer.token, body })).status, 403);
  t.is((await server.api('GET', `/mcp-endpoints/${e.id}`, { token: viewer.token })).status, 403);
  t.is((await server.api('GET', `/mcp-endpoints?project_id=${projectId}`, { token: stranger.token })).status, 404);
  t.is((await server.api('GET', `/mcp-endpoints/${e.id}`, { token: stranger.token })).status, 404);
  t.is((await server.api('DELETE', `/mcp-endpoints/${e.id}`, { token: stranger.token })).status, 404);
  const { key } = await createKey(server, token, projectId);
  t.is((await server.api('POST', `/mcp-endpoints/${e.id}/regenerate-key`, { token: key })).status, 403);
  t.is((await server.api('GET', `/mcp-endpoints/${e.id}`, { token })).status, 200, 'still there');
});

test('the OpenAPI document describes the REST routes and the MCP server routes', async (t) => {
  const doc = (await server.api('GET', '/openapi.json')).body;
  for (const m of ['get', 'post']) t.truthy(doc.paths['/mcp-endpoints'][m]);
  for (const m of ['get', 'put', 'delete']) t.truthy(doc.paths['/mcp-endpoints/{endpoint_id}'][m]);
  t.truthy(doc.paths['/mcp-endpoints/by-node/{node_id}'].get);
  t.truthy(doc.paths['/mcp-endpoints/{endpoint_id}/regenerate-key'].post);
  const server_ = doc.paths['/mcp/e/{endpoint_id}'];
  for (const m of ['get', 'post', 'delete']) {
    t.truthy(server_[m]['responses']['200'].content['text/event-stream'], `${m} is documented as a stream`);
    t.is(server_[m]['x-permission'], 'content:read');
  }
  t.is(doc.paths['/mcp-endpoints'].post['x-permission'], 'keys:manage');
});
