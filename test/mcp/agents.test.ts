import test from 'ava';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { toolSchemas } from '../../src/tools/registry.ts';
import { addMember, createAgent, documented, fieldsOf, nodeAt, type CreatedAgent } from '../agents/helpers.ts';
import { contentApi, createKey, createProject, defaultProject, type ContentCall } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { call, connect, initializeMessage, rawPost } from './helpers.ts';

let server: TestServer;
let token: string;
let projectId: string;
let orgId: string;
let c: ContentCall;
let viewer: { token: string; id: string };
let editor: { token: string; id: string };
let outsider: { token: string; id: string };
let isDocumented: ReturnType<typeof documented>;

test.before(async () => {
  server = await startTestServer();
  ({ token } = await server.login());
  ({ projectId, orgId } = await defaultProject(server, token));
  c = contentApi(server, token, projectId);
  await c('POST', '/write', { path: 'docs/guide.md', node_type: 'markdown', content: '# Guide\n\nFeed the quokka.' });
  await c('POST', '/write', { path: 'docs/data.json', node_type: 'json', content: { port: 8080 } });
  await c('POST', '/write', { path: 'drafts/keep.md', node_type: 'markdown', content: 'keep' });
  await c('POST', '/write', { path: 'other/secret.md', node_type: 'markdown', content: 'launch codes' });
  viewer = await addMember(server, token, projectId, 'mcp-agent-viewer', 'viewer');
  editor = await addMember(server, token, projectId, 'mcp-agent-editor', 'editor');
  outsider = await server.createUser(`mcp-agent-outsider-${process.pid}@example.com`);
  isDocumented = documented(server);
});

test.after.always(async () => server?.stop());

const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
const serverUrl = (agentId: string) => `${server.url}/api/v1/mcp/a/${agentId}`;
/** The address records give (the configured base URL). */
const advertised = (agentId: string) => `${server.services.settings.baseUrl}/api/v1/mcp/a/${agentId}`;
const tools = (agentId: string, t = token) => server.api('GET', `/mcp/agents/${agentId}/tools`, { token: t });
const bind = (agentId: string, body: Record<string, unknown>, t = token) => server.api('POST', `/mcp/agents/${agentId}/tools`, { token: t, body });
const status = (agentId: string, t = token) => server.api('GET', `/mcp/agents/${agentId}/status`, { token: t });

/** A tool of the project over REST (201 expected). */
async function createTool(body: Record<string, unknown>): Promise<{ id: string; name: string }> {
  const res = await server.api('POST', '/tools/', { token, body });
  if (res.status !== 201) throw new Error(`tool create: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** An agent with a cat tool on docs bound as `read` and a write tool on drafts bound as `save`. */
async function agentWithTools(name: string): Promise<{ agent: CreatedAgent; cat: { id: string }; write: { id: string } }> {
  const agent = await createAgent(server, token, projectId, { name, model: 'openai:gpt-test' });
  const cat = await createTool({ name: `${name} cat`, node_id: nodeAt(server, projectId, 'docs'), type: 'cat' });
  const write = await createTool({ name: `${name} write`, node_id: nodeAt(server, projectId, 'drafts'), type: 'write' });
  for (const [tool, bound] of [[cat, 'read'], [write, 'save']] as const) {
    const r = await bind(agent.id, { tool_id: tool.id, name: bound });
    if (r.status !== 201) throw new Error(`bind: ${r.status} ${JSON.stringify(r.body)}`);
  }
  return { agent, cat, write };
}

test('bind, list, update and unbind: names default to the tool\'s, are checked (422) and unique per agent (409)', async (t) => {
  const agent = await createAgent(server, token, projectId, { name: 'Binder', model: 'openai:gpt-test' });
  const cat = await createTool({ name: 'docs reader!', description: 'Reads the docs', node_id: nodeAt(server, projectId, 'docs'), type: 'cat' });
  const write = await createTool({ name: 'scribe', node_id: nodeAt(server, projectId, 'drafts'), type: 'write' });

  const first = await bind(agent.id, { tool_id: cat.id });
  t.is(first.status, 201, JSON.stringify(first.body));
  isDocumented(t, 'post', '/mcp/agents/{agent_id}/tools', first);
  t.like(first.body.data, {
    agent_id: agent.id,
    tool_id: cat.id,
    name: 'docs_reader',
    description: 'Reads the docs',
    custom: { name: null, description: null },
    tool: { id: cat.id, type: 'cat', path: 'docs' },
    writes: false,
  });
  t.is((await bind(agent.id, { tool_id: cat.id, name: 'again' })).status, 409, 'a tool is bound once');
  const taken = await bind(agent.id, { tool_id: write.id, name: 'docs_reader' });
  t.is(taken.status, 409, 'the name is the cat binding\'s (its default)');
  t.regex(taken.body.message, /already offers a tool named "docs_reader"/);
  const bad = await bind(agent.id, { tool_id: write.id, name: '9 lives' });
  t.is(bad.status, 422);
  t.deepEqual(fieldsOf(bad), ['name']);
  t.deepEqual(fieldsOf(await bind(agent.id, { name: 'x' })), ['tool_id']);
  t.is((await bind(agent.id, { tool_id: 'tool_nope' })).status, 404);
  const otherProject = await createProject(server, token, orgId, 'agent-tools-other');
  const foreign = (await server.api('POST', '/tools/', { token, body: { name: 'foreign', project_id: otherProject, type: 'ls' } })).body.data;
  t.is((await bind(agent.id, { tool_id: foreign.id })).status, 404, "a tool of another project is not the agent's to bind");

  const second = await bind(agent.id, { tool_id: write.id, name: 'save', description: 'Saves a draft' });
  t.is(second.status, 201);
  t.like(second.body.data, { name: 'save', description: 'Saves a draft', custom: { name: 'save', description: 'Saves a draft' }, writes: true });

  const list = await tools(agent.id);
  t.is(list.status, 200);
  isDocumented(t, 'get', '/mcp/agents/{agent_id}/tools', list);
  t.deepEqual(list.body.data.tools.map((b: { name: string }) => b.name), ['docs_reader', 'save']);
  t.is(list.body.data.server_url, advertised(agent.id));

  const renamed = await server.api('PUT', `/mcp/agents/${agent.id}/tools/${cat.id}`, { token, body: { name: 'read', description: 'Read a doc' } });
  t.is(renamed.status, 200);
  isDocumented(t, 'put', '/mcp/agents/{agent_id}/tools/{tool_id}', renamed);
  t.like(renamed.body.data, { name: 'read', description: 'Read a doc', custom: { name: 'read', description: 'Read a doc' } });
  t.is((await server.api('PUT', `/mcp/agents/${agent.id}/tools/${cat.id}`, { token, body: { name: 'save' } })).status, 409);
  const reset = await server.api('PUT', `/mcp/agents/${agent.id}/tools/${cat.id}`, { token, body: { name: null, description: null } });
  t.like(reset.body.data, { name: 'docs_reader', description: 'Reads the docs', custom: { name: null, description: null } });
  t.deepEqual(fieldsOf(await server.api('PUT', `/mcp/agents/${agent.id}/tools/${cat.id}`, { token, body: { name: '' } })), ['name']);
  t.is((await server.api('PUT', `/mcp/agents/${agent.id}/tools/${cat.id}`, { token, body: { mode: 'read' } })).status, 422, 'an unknown field is refused');

  const removed = await server.api('DELETE', `/mcp/agents/${agent.id}/tools/${cat.id}`, { token });
  t.is(removed.status, 200);
  isDocumented(t, 'delete', '/mcp/agents/{agent_id}/tools/{tool_id}', removed);
  t.is((await server.api('DELETE', `/mcp/agents/${agent.id}/tools/${cat.id}`, { token })).status, 404);
  t.is((await server.api('PUT', `/mcp/agents/${agent.id}/tools/${cat.id}`, { token, body: { name: 'x' } })).status, 404);
  t.deepEqual((await tools(agent.id)).body.data.tools.map((b: { name: string }) => b.name), ['save']);
  t.is((await server.api('GET', `/tools/${cat.id}`, { token })).status, 200, 'unbinding leaves the tool');
});

test('who may: readers list and read the status, only keys:manage binds; outsiders and other keys get 404', async (t) => {
  const { agent, cat } = await agentWithTools('Guarded');
  const other = await createTool({ name: 'guarded ls', node_id: nodeAt(server, projectId, 'docs'), type: 'ls' });
  t.is((await tools(agent.id, viewer.token)).status, 200, 'a viewer reads the bindings');
  t.is((await status(agent.id, viewer.token)).status, 200);
  t.is((await tools(agent.id, agent.key)).status, 200, "the agent's own key reads its bindings");
  t.is((await bind(agent.id, { tool_id: other.id }, viewer.token)).status, 403, 'a viewer cannot bind');
  t.is((await bind(agent.id, { tool_id: other.id }, editor.token)).status, 403, 'an editor cannot either (keys:manage)');
  t.is((await server.api('DELETE', `/mcp/agents/${agent.id}/tools/${cat.id}`, { token: viewer.token })).status, 403);
  t.is((await server.api('POST', `/mcp/agents/${agent.id}/regenerate-key`, { token: viewer.token })).status, 403);
  for (const [what, credential] of [
    ['an outsider', outsider.token],
    ['an api key of the project', (await createKey(server, token, projectId)).key],
  ] as const) {
    t.is((await tools(agent.id, credential)).status, 404, what);
    t.is((await status(agent.id, credential)).status, 404, what);
    t.is((await bind(agent.id, { tool_id: other.id }, credential)).status, 404, what);
    t.is((await server.api('POST', `/mcp/agents/${agent.id}/regenerate-key`, { token: credential })).status, 404, what);
  }
  t.is((await tools('con_nope')).status, 404);
  t.deepEqual((await tools(agent.id)).body.data.tools.map((b: { name: string }) => b.name), ['read', 'save'], 'nothing changed');
});

test("the agent's MCP server lists exactly its bound tools, under their binding names, with the types' input schemas", async (t) => {
  const { agent, cat } = await agentWithTools('Lister');
  await server.api('PUT', `/mcp/agents/${agent.id}/tools/${cat.id}`, { token, body: { description: 'Read one page of the docs' } });
  const s = await connect(serverUrl(agent.id), agent.key);
  t.teardown(() => s.close());
  t.regex(s.client.getInstructions() ?? '', /tools bound to the agent "Lister"/);
  t.regex(s.client.getInstructions() ?? '', /`read` \(cat\): beneath "docs"/);
  t.falsy(s.client.getServerCapabilities()?.resources, 'no resources: only the bound tools');
  const { tools: listed } = await s.client.listTools();
  t.deepEqual(listed.map((x) => x.name), ['read', 'save']);
  const read = listed.find((x) => x.name === 'read')!;
  t.is(read.description, 'Read one page of the docs');
  const expected = structuredClone(toolSchemas('cat').input) as Record<string, unknown>;
  delete expected.$schema;
  t.deepEqual(read.inputSchema, expected);
  t.is(read.annotations?.readOnlyHint, true);
  t.is(listed.find((x) => x.name === 'save')!.annotations?.readOnlyHint, false);

  const ls = await createTool({ name: 'lister ls', node_id: nodeAt(server, projectId, 'docs'), type: 'ls' });
  await bind(agent.id, { tool_id: ls.id, name: 'browse' });
  t.deepEqual((await s.client.listTools()).tools.map((x) => x.name), ['read', 'save', 'browse'], 'a new binding shows at the next request');
  const unknown = await t.throwsAsync(s.client.callTool({ name: 'cat', arguments: {} }));
  t.regex(unknown!.message, /Tool cat not found/, 'no built-in tools');
});

test('a bound cat reads, a bound write writes as the agent; a path outside the tool\'s node is a tool error and changes nothing', async (t) => {
  const { agent } = await agentWithTools('Scribe');
  const s = await connect(serverUrl(agent.id), agent.key);
  t.teardown(() => s.close());
  const read = await call(s.client, 'read', { path: 'guide.md' });
  t.false(read.isError, read.text);
  t.like(read.data, { path: 'docs/guide.md', type: 'markdown', content: '# Guide\n\nFeed the quokka.' });

  const written = await call(s.client, 'save', { path: 'scribe.md', content: 'drafted' });
  t.false(written.isError, written.text);
  t.like(written.data, { path: 'drafts/scribe.md', version: 1 });
  const versions = (await c('GET', `/versions?path=${encodeURIComponent('drafts/scribe.md')}`)).body.data.versions;
  t.like(versions[0], { actor_type: 'agent', actor_id: agent.id, author: 'agent:Scribe', message: 'write drafts/scribe.md (agent "Scribe" via MCP)' });
  t.like((await call(s.client, 'save', { path: 'scribe.md', content: 'again', message: 'second pass' })).data, { version: 2 });
  t.like((await c('GET', `/versions?path=${encodeURIComponent('drafts/scribe.md')}`)).body.data.versions[0], { author: 'agent:Scribe', message: 'second pass' });

  const before = server.services.content.findByPath(projectId, 'other/secret.md')!.version;
  for (const [tool, args] of [
    ['read', { path: '../other/secret.md' }],
    ['save', { path: '../other/secret.md', content: 'overwritten' }],
    ['save', { path: '../docs/guide.md', content: 'overwritten' }],
  ] as const) {
    const r = await call(s.client, tool, args);
    t.true(r.isError, `${tool} ${JSON.stringify(args)}: ${r.text}`);
    t.regex(r.text, /^(VALIDATION_ERROR|FORBIDDEN): /);
  }
  t.is(server.services.content.findByPath(projectId, 'other/secret.md')!.version, before);
  t.is((await c('GET', '/cat?path=docs/guide.md')).body.data.content, '# Guide\n\nFeed the quokka.');
  const invalid = await call(s.client, 'read', { path: 42 });
  t.true(invalid.isError);
  t.regex(invalid.text, /arguments\.path/);
});

test('users: a reader is offered only the reading tools and refused a write; a writer writes as the agent; outsiders 404', async (t) => {
  const { agent } = await agentWithTools('Shared');
  const asViewer = await connect(serverUrl(agent.id), viewer.token);
  t.teardown(() => asViewer.close());
  t.deepEqual((await asViewer.client.listTools()).tools.map((x) => x.name), ['read']);
  t.false((await call(asViewer.client, 'read', { path: 'data.json' })).isError);
  const refused = await call(asViewer.client, 'save', { path: 'viewer.md', content: 'x' });
  t.true(refused.isError);
  t.regex(refused.text, /^FORBIDDEN: .*not available to you/);
  t.is(server.services.content.findByPath(projectId, 'drafts/viewer.md'), null);

  const asEditor = await connect(serverUrl(agent.id), editor.token);
  t.teardown(() => asEditor.close());
  t.deepEqual((await asEditor.client.listTools()).tools.map((x) => x.name), ['read', 'save']);
  t.false((await call(asEditor.client, 'save', { path: 'editor.md', content: 'x' })).isError);
  t.like((await c('GET', '/versions?path=drafts/editor.md')).body.data.versions[0], { actor_type: 'agent', author: 'agent:Shared' });

  t.is((await rawPost(serverUrl(agent.id), bearer(outsider.token), initializeMessage)).status, 404);
});

test('the gate: a wrong key or another key is 401 before any MCP processing; a paused agent 403, a deleted one 404', async (t) => {
  const { agent } = await agentWithTools('Gated');
  const other = await createAgent(server, token, projectId, { name: 'Other', model: 'openai:gpt-test' });
  const notJsonRpc = { hello: 'world' };
  for (const [what, headers] of [
    ['no credential', {}],
    ['a wrong key', bearer('cns_' + 'x'.repeat(43))],
    ["another agent's key", bearer(other.key)],
    ['an api key of the project', bearer((await createKey(server, token, projectId)).key)],
  ] as const) {
    const r = await rawPost(serverUrl(agent.id), headers, notJsonRpc);
    t.is(r.status, 401, `${what}: ${r.text}`);
  }
  t.is((await rawPost(serverUrl(agent.id), bearer(agent.key), initializeMessage)).status, 200);

  const paused = await server.api('PUT', `/agent-config/${agent.id}`, { token, body: { status: 'paused' } });
  t.is(paused.status, 200);
  t.is((await rawPost(serverUrl(agent.id), bearer(agent.key), initializeMessage)).status, 403);
  t.is((await rawPost(serverUrl(agent.id), bearer(token), initializeMessage)).status, 403);
  t.like((await status(agent.id)).body.data, { active: false });
  await server.api('PUT', `/agent-config/${agent.id}`, { token, body: { status: 'active' } });

  const s = await connect(serverUrl(agent.id), agent.key);
  t.teardown(() => s.close());
  t.is((await server.api('DELETE', `/agent-config/${agent.id}`, { token })).status, 200);
  t.is((await rawPost(serverUrl(agent.id), bearer(agent.key), initializeMessage)).status, 404);
  t.is((await rawPost(serverUrl(agent.id), bearer(token), initializeMessage)).status, 404);
  const err = await t.throwsAsync(s.client.listTools(), { instanceOf: StreamableHTTPError });
  t.is((err as StreamableHTTPError).code, 404, 'an open session of a deleted agent is refused at the gate');
  t.is((await tools(agent.id)).status, 404);
  t.is((await status(agent.id)).status, 404);
});

test('status counts the calls and errors of the last 24 hours and the last call', async (t) => {
  const { agent } = await agentWithTools('Counted');
  const fresh = await status(agent.id);
  t.is(fresh.status, 200);
  isDocumented(t, 'get', '/mcp/agents/{agent_id}/status', fresh);
  t.deepEqual(fresh.body.data, { agent_id: agent.id, active: true, tool_count: 2, calls_24h: 0, errors_24h: 0, last_call_at: null });
  const s = await connect(serverUrl(agent.id), agent.key);
  t.teardown(() => s.close());
  t.false((await call(s.client, 'read', { path: 'guide.md' })).isError);
  t.false((await call(s.client, 'read', { path: 'data.json' })).isError);
  t.true((await call(s.client, 'read', { path: 'missing.md' })).isError);
  const after = (await status(agent.id, viewer.token)).body.data;
  t.like(after, { tool_count: 2, calls_24h: 3, errors_24h: 1 });
  t.true(Date.now() - Date.parse(after.last_call_at) < 60_000);
});

test('regenerate-key: the new key is shown once and works, the old one is 401 at once (its sessions too)', async (t) => {
  const { agent } = await agentWithTools('Rekeyed');
  const s = await connect(serverUrl(agent.id), agent.key);
  t.teardown(() => s.close());
  t.false((await call(s.client, 'read', { path: 'guide.md' })).isError);
  const regen = await server.api('POST', `/mcp/agents/${agent.id}/regenerate-key`, { token });
  t.is(regen.status, 200, JSON.stringify(regen.body));
  isDocumented(t, 'post', '/mcp/agents/{agent_id}/regenerate-key', regen);
  const { key, server_url, client_config } = regen.body.data;
  t.not(key, agent.key);
  t.is(server_url, advertised(agent.id));
  t.is((Object.values(client_config.mcpServers)[0] as { headers: { Authorization: string } }).headers.Authorization, `Bearer ${key}`);
  t.is((await rawPost(serverUrl(agent.id), bearer(agent.key), initializeMessage)).status, 401);
  const err = await t.throwsAsync(s.client.callTool({ name: 'read', arguments: { path: 'guide.md' } }), { instanceOf: StreamableHTTPError });
  t.is((err as StreamableHTTPError).code, 401);
  const renewed = await connect(serverUrl(agent.id), key);
  t.teardown(() => renewed.close());
  t.false((await call(renewed.client, 'read', { path: 'guide.md' })).isError);
  t.is((await tools(agent.id, key)).status, 200, 'the new key is the agent\'s everywhere');
});

test('deleting a tool removes its binding; a tool whose node is gone is not offered', async (t) => {
  const { agent, cat, write } = await agentWithTools('Pruned');
  const s = await connect(serverUrl(agent.id), agent.key);
  t.teardown(() => s.close());
  t.is((await server.api('DELETE', `/tools/${cat.id}`, { token })).status, 200);
  t.deepEqual((await tools(agent.id)).body.data.tools.map((b: { tool_id: string }) => b.tool_id), [write.id]);
  t.deepEqual((await s.client.listTools()).tools.map((x) => x.name), ['save']);
  t.like((await status(agent.id)).body.data, { tool_count: 1 });

  await c('POST', '/write', { path: 'gone/x.md', node_type: 'markdown', content: 'x' });
  const gone = await createTool({ name: 'gone cat', node_id: nodeAt(server, projectId, 'gone'), type: 'cat' });
  t.is((await bind(agent.id, { tool_id: gone.id, name: 'vanishing' })).status, 201);
  t.true((await s.client.listTools()).tools.some((x) => x.name === 'vanishing'));
  t.is((await c('POST', '/rm', { path: 'gone' })).status, 200);
  t.like((await tools(agent.id)).body.data.tools.find((b: { tool_id: string }) => b.tool_id === gone.id), { tool: { path: null } });
  t.deepEqual((await s.client.listTools()).tools.map((x) => x.name), ['save']);
  const r = await call(s.client, 'vanishing', { path: 'x.md' });
  t.true(r.isError);
  t.regex(r.text, /^NOT_FOUND: The node of the tool "vanishing" no longer exists/);
});
