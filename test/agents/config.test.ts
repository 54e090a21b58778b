import test from 'ava';
import { sql } from 'kysely';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metadataCount } from '../helpers/metadata.ts';
import { contentApi, createKey, createProject, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { addMember, createAgent, documented, fieldsOf, nodeAt } from './helpers.ts';

let server: TestServer;
let token: string;
let projectId: string;
let orgId: string;
let otherProject: string;
let check: ReturnType<typeof documented>;

test.before(async () => {
  server = await startTestServer();
  check = documented(server);
  ({ token } = await server.login());
  ({ projectId, orgId } = await defaultProject(server, token));
  const c = contentApi(server, token, projectId);
  await c('POST', '/write', { path: 'docs/guide.md', node_type: 'markdown', content: '# Guide' });
  await c('POST', '/write', { path: 'docs/data.json', node_type: 'json', content: { a: 1 } });
  await c('POST', '/mkdir', { path: 'archive' });
  await c('POST', '/mkdir', { path: 'scratch' });
  otherProject = await createProject(server, token, orgId, 'other');
  await contentApi(server, token, otherProject)('POST', '/mkdir', { path: 'elsewhere' });
});
test.after.always(async () => server?.stop());

const count = (table: string, agentId: string) => metadataCount(server, sql`SELECT COUNT(*) AS n FROM ${sql.table(table)} WHERE agent_id = ${agentId}`);

test('create answers the agent with its key once; it is a connection of kind agent, and reads never show the key or its hash', async (t) => {
  const res = await server.api('POST', '/agent-config/', {
    token,
    body: { name: 'Writer', project_id: projectId, system_prompt: 'You write.', model: 'openai:gpt-4.1', description: 'd', temperature: 0.5, max_tool_rounds: 7 },
  });
  t.is(res.status, 201, JSON.stringify(res.body));
  check(t, 'post', '/agent-config', res);
  const { agent, key } = res.body.data;
  t.like(agent, { name: 'Writer', project_id: projectId, system_prompt: 'You write.', model: 'openai:gpt-4.1', description: 'd', temperature: 0.5, max_tool_rounds: 7, status: 'active', is_default: false });
  t.deepEqual([agent.accesses, agent.bash_tools], [[], []], 'an agent reaches nothing until it is given accesses');
  t.regex(key, /^cns_\S{40,}$/);
  t.true(key.startsWith(agent.key_prefix));

  const conn = (await server.services.connections.find(agent.id))!;
  t.like(conn, { kind: 'agent', scope_path: '', mode: 'read_write', name: 'Writer' });
  t.false('node_id' in JSON.parse(conn.config));

  const read = await server.api('GET', `/agent-config/${agent.id}`, { token });
  check(t, 'get', '/agent-config/{agent_id}', read);
  const list = await server.api('GET', `/agent-config/?project_id=${projectId}`, { token });
  check(t, 'get', '/agent-config', list);
  t.true(list.body.data.agents.some((a: { id: string }) => a.id === agent.id));
  for (const r of [read, list]) {
    t.false(JSON.stringify(r.body).includes(key), 'the key is never shown again');
    t.false(JSON.stringify(r.body).includes(conn.key_hash), 'nor its hash');
  }
  // The key authenticates as the agent.
  const me = await server.api('GET', '/auth/me', { token: key });
  t.like(me.body.data, { kind: 'key', connection: { id: agent.id, kind: 'agent' } });
});

test('defaults: the server default model, 20 tool rounds of at most 20 tool calls each, no temperature', async (t) => {
  const { agent } = await createAgent(server, token, projectId, { name: 'plain' });
  t.like(agent, { model: 'openai:gpt-4.1-mini', max_tool_rounds: 20, max_tool_calls_per_round: 20, temperature: null, description: '' });
});

test('max_tool_calls_per_round: set on create and update, 1 to 100, shown with the agent', async (t) => {
  const res = await server.api('POST', '/agent-config/', { token, body: { name: 'capped', project_id: projectId, system_prompt: 'p', max_tool_calls_per_round: 3 } });
  t.is(res.status, 201, JSON.stringify(res.body));
  check(t, 'post', '/agent-config', res);
  t.is(res.body.data.agent.max_tool_calls_per_round, 3);
  const id = res.body.data.agent.id;
  const put = await server.api('PUT', `/agent-config/${id}`, { token, body: { max_tool_calls_per_round: 100 } });
  check(t, 'put', '/agent-config/{agent_id}', put);
  t.like(put.body.data, { max_tool_calls_per_round: 100, max_tool_rounds: 20 });
  for (const bad of [0, 101, 1.5]) {
    const r = await server.api('PUT', `/agent-config/${id}`, { token, body: { max_tool_calls_per_round: bad } });
    t.deepEqual(fieldsOf(r), ['max_tool_calls_per_round'], String(bad));
  }
  t.is((await server.api('GET', `/agent-config/${id}`, { token })).body.data.max_tool_calls_per_round, 100);
});

test('a model named without its provider is accepted and kept as provider:model (its family, else the default model\'s provider)', async (t) => {
  const cases: [string, string][] = [
    ['gpt-4.1-mini', 'openai:gpt-4.1-mini'],
    ['o4-mini', 'openai:o4-mini'],
    ['claude-sonnet-4-5', 'anthropic:claude-sonnet-4-5'],
    ['mistral-small', 'openai:mistral-small'],
    ['ollama:llama3.1:8b', 'ollama:llama3.1:8b'],
  ];
  for (const [model, stored] of cases) {
    const res = await server.api('POST', '/agent-config/', { token, body: { name: `bare ${model}`, project_id: projectId, system_prompt: 'p', model } });
    t.is(res.status, 201, `${model}: ${JSON.stringify(res.body)}`);
    t.is(res.body.data.agent.model, stored, model);
  }
  const { id } = await createAgent(server, token, projectId, { name: 'renamed-model' });
  const put = await server.api('PUT', `/agent-config/${id}`, { token, body: { model: 'claude-opus-4-1' } });
  t.is(put.status, 200, JSON.stringify(put.body));
  t.is(put.body.data.model, 'anthropic:claude-opus-4-1');
  // The family decides the provider's rules too: anthropic models take no temperature.
  const hot = await server.api('POST', '/agent-config/', { token, body: { name: 'hot', project_id: projectId, system_prompt: 'p', model: 'claude-sonnet-4-5', temperature: 0.5 } });
  t.deepEqual(fieldsOf(hot), ['temperature']);

  // Another server default: bare names of no known family go to its provider.
  const local = await startTestServer({}, { CNS_DEFAULT_MODEL: 'ollama:llama3.1' });
  t.teardown(() => local.stop());
  const { token: admin } = await local.login();
  const { projectId: pid } = await defaultProject(local, admin);
  t.is((await createAgent(local, admin, pid, { model: 'qwen3' })).agent.model, 'ollama:qwen3');
  t.is((await createAgent(local, admin, pid, { name: 'g', model: 'gpt-4.1' })).agent.model, 'openai:gpt-4.1');
});

test('bad input is 422 naming each field, and creates nothing', async (t) => {
  const named = async (name: string) => (await server.services.connections.listByProject(projectId, { kind: 'agent' }, { limit: 1000, offset: 0 })).items.filter((c) => c.name === name);
  const cases: [Record<string, unknown>, string[]][] = [
    [{ project_id: projectId }, ['name', 'system_prompt']],
    [{ name: 'x', project_id: projectId, system_prompt: 'p', model: 'gpt 4o' }, ['model']],
    [{ name: 'x', project_id: projectId, system_prompt: 'p', model: 'openai:' }, ['model']],
    [{ name: 'x', project_id: projectId, system_prompt: 'p', temperature: 2.5 }, ['temperature']],
    [{ name: 'x', project_id: projectId, system_prompt: 'p', model: 'anthropic:claude-sonnet-4-5', temperature: 0.5 }, ['temperature']],
    [{ name: 'x', project_id: projectId, system_prompt: 'p', max_tool_rounds: 0 }, ['max_tool_rounds']],
    [{ name: 'x', project_id: projectId, system_prompt: 'p', max_tool_rounds: 101 }, ['max_tool_rounds']],
    [{ name: 'x', project_id: projectId, system_prompt: 'p', max_tool_rounds: 2.5 }, ['max_tool_rounds']],
    [{ name: '  ', project_id: projectId, system_prompt: 'p' }, ['name']],
    [{ name: 'x', project_id: projectId, system_prompt: 'p', node_id: 'n' }, ['body']],
  ];
  for (const [body, fields] of cases) {
    const res = await server.api('POST', '/agent-config/', { token, body });
    t.is(res.status, 422, JSON.stringify(body));
    t.deepEqual(fieldsOf(res).sort(), fields, JSON.stringify(body));
  }
  t.deepEqual(await named('x'), [], 'no agent was created');

  const { id } = await createAgent(server, token, projectId, { name: 'stable' });
  const bad = await server.api('PUT', `/agent-config/${id}`, { token, body: { name: 'renamed', model: 'No Provider:x' } });
  t.is(bad.status, 422);
  t.deepEqual(fieldsOf(bad), ['model']);
  t.regex(bad.body.error.details[0].message, /provider/);
  t.is((await server.api('GET', `/agent-config/${id}`, { token })).body.data.name, 'stable', 'nothing changed');
  const revoke = await server.api('PUT', `/agent-config/${id}`, { token, body: { status: 'revoked' } });
  t.deepEqual(fieldsOf(revoke), ['status']);
});

test('update changes the settings; paused stops the key until active again; null temperature clears it', async (t) => {
  const { id, key } = await createAgent(server, token, projectId, { name: 'tuned', temperature: 1 });
  const put = await server.api('PUT', `/agent-config/${id}`, {
    token,
    body: { name: 'retuned', system_prompt: 'New prompt', model: 'ollama:llama3.1:8b', description: 'new', temperature: null, max_tool_rounds: 3 },
  });
  check(t, 'put', '/agent-config/{agent_id}', put);
  t.like(put.body.data, { name: 'retuned', system_prompt: 'New prompt', model: 'ollama:llama3.1:8b', description: 'new', temperature: null, max_tool_rounds: 3 });
  t.is((await server.services.connections.find(id))!.name, 'retuned', "the connection's name is the agent's (author agent:<name>)");

  t.is((await server.api('PUT', `/agent-config/${id}`, { token, body: { status: 'paused' } })).body.data.status, 'paused');
  t.is((await server.api('GET', `/agent-config/${id}`, { token: key })).status, 401);
  t.is((await server.api('PUT', `/agent-config/${id}`, { token, body: { status: 'active' } })).body.data.status, 'active');
  t.is((await server.api('GET', `/agent-config/${id}`, { token: key })).status, 200);
});

test('authorization: a viewer reads but does not change; an outsider gets 404; an agent key reads only itself', async (t) => {
  const viewer = await addMember(server, token, projectId, 'agent-viewer', 'viewer');
  const outsider = await server.createUser(`agent-outsider-${process.pid}@example.com`);
  const mine = await createAgent(server, token, projectId, { name: 'mine' });
  const theirs = await createAgent(server, token, projectId, { name: 'theirs' });
  const docs = nodeAt(server, projectId, 'docs');

  t.is((await server.api('GET', `/agent-config/${mine.id}`, { token: viewer.token })).status, 200);
  t.is((await server.api('GET', `/agent-config/?project_id=${projectId}`, { token: viewer.token })).status, 200);
  t.is((await server.api('GET', `/agent-config/${mine.id}/executions`, { token: viewer.token })).status, 200);
  const viewerWrites = [
    await server.api('POST', '/agent-config/', { token: viewer.token, body: { name: 'v', project_id: projectId, system_prompt: '' } }),
    await server.api('PUT', `/agent-config/${mine.id}`, { token: viewer.token, body: { name: 'v' } }),
    await server.api('DELETE', `/agent-config/${mine.id}`, { token: viewer.token }),
    await server.api('POST', `/agent-config/${mine.id}/accesses`, { token: viewer.token, body: { node_id: docs, mode: 'read' } }),
    await server.api('PUT', `/agent-config/${mine.id}/bash`, { token: viewer.token, body: { bash_tools: [] } }),
  ];
  t.deepEqual(viewerWrites.map((r) => r.status), [403, 403, 403, 403, 403]);

  const outsiderCalls = [
    await server.api('GET', `/agent-config/${mine.id}`, { token: outsider.token }),
    await server.api('GET', `/agent-config/?project_id=${projectId}`, { token: outsider.token }),
    await server.api('GET', `/agent-config/default?project_id=${projectId}`, { token: outsider.token }),
    await server.api('POST', '/agent-config/', { token: outsider.token, body: { name: 'o', project_id: projectId, system_prompt: '' } }),
    await server.api('DELETE', `/agent-config/${mine.id}`, { token: outsider.token }),
    await server.api('GET', `/agent-config/${mine.id}/executions`, { token: outsider.token }),
  ];
  t.deepEqual(outsiderCalls.map((r) => r.status), [404, 404, 404, 404, 404, 404]);

  const own = await server.api('GET', `/agent-config/${mine.id}`, { token: mine.key });
  t.is(own.status, 200);
  t.is(own.body.data.id, mine.id);
  t.is((await server.api('GET', `/agent-config/${theirs.id}`, { token: mine.key })).status, 404, 'another agent is not found');
  const listed = await server.api('GET', `/agent-config/?project_id=${projectId}`, { token: mine.key });
  t.deepEqual(listed.body.data.agents.map((a: { id: string }) => a.id), [mine.id]);
  t.is((await server.api('PUT', `/agent-config/${mine.id}`, { token: mine.key, body: { name: 'self' } })).status, 403, 'an agent does not change itself');
  t.is((await server.api('POST', `/agent-config/${mine.id}/accesses`, { token: mine.key, body: { node_id: null, mode: 'read_write' } })).status, 403);
  const { key: apiKey } = await createKey(server, token, projectId);
  t.is((await server.api('GET', `/agent-config/${mine.id}`, { token: apiKey })).status, 404, 'other keys do not read agents');
  t.is((await server.services.connections.find(mine.id))!.name, 'mine');
});

test('accesses: defaults by mode, write needs read_write, the node must be reachable, one access per node', async (t) => {
  const { id } = await createAgent(server, token, projectId, { name: 'reader' });
  const docs = nodeAt(server, projectId, 'docs');
  const guide = nodeAt(server, projectId, 'docs/guide.md');

  const read = await server.api('POST', `/agent-config/${id}/accesses`, { token, body: { node_id: docs, mode: 'read' } });
  t.is(read.status, 201, JSON.stringify(read.body));
  check(t, 'post', '/agent-config/{agent_id}/accesses', read);
  t.like(read.body.data, { agent_id: id, node_id: docs, path: 'docs', mode: 'read', tools: ['ls', 'cat', 'tree', 'search', 'grep', 'query_json', 'blame'] });
  const whole = await server.api('POST', `/agent-config/${id}/accesses`, { token, body: { node_id: null, mode: 'read_write' } });
  t.like(whole.body.data, { node_id: null, path: '', tools: ['ls', 'cat', 'tree', 'search', 'grep', 'write', 'query_json', 'blame'] });
  const file = await server.api('POST', `/agent-config/${id}/accesses`, { token, body: { node_id: guide, mode: 'read_write', tools: ['write', 'cat', 'cat'] } });
  t.deepEqual(file.body.data.tools, ['cat', 'write'], 'each tool once, in the canonical order');

  const writeOnRead = await server.api('POST', `/agent-config/${id}/accesses`, { token, body: { node_id: nodeAt(server, projectId, 'archive'), mode: 'read', tools: ['cat', 'write'] } });
  t.is(writeOnRead.status, 422);
  t.deepEqual(fieldsOf(writeOnRead), ['tools']);
  const unknownTool = await server.api('POST', `/agent-config/${id}/accesses`, { token, body: { node_id: null, mode: 'read', tools: ['rm'] } });
  t.deepEqual(fieldsOf(unknownTool), ['tools.0']);
  t.is((await server.api('POST', `/agent-config/${id}/accesses`, { token, body: { node_id: 'node_nope', mode: 'read' } })).status, 404);
  const elsewhere = nodeAt(server, otherProject, 'elsewhere');
  t.is((await server.api('POST', `/agent-config/${id}/accesses`, { token, body: { node_id: elsewhere, mode: 'read' } })).status, 404, 'a node of another project');
  const dup = await server.api('POST', `/agent-config/${id}/accesses`, { token, body: { node_id: docs, mode: 'read_write' } });
  t.is(dup.status, 409);
  t.is(dup.body.error.details.access_id, read.body.data.id);
  t.is(await count('agent_accesses', id), 3, 'refusals added nothing');

  // A mode change moves default tools to the new mode's; tools chosen by hand stay (and must fit).
  const up = await server.api('PUT', `/agent-config/${id}/accesses/${read.body.data.id}`, { token, body: { mode: 'read_write' } });
  check(t, 'put', '/agent-config/{agent_id}/accesses/{access_id}', up);
  t.deepEqual(up.body.data.tools, ['ls', 'cat', 'tree', 'search', 'grep', 'write', 'query_json', 'blame']);
  const down = await server.api('PUT', `/agent-config/${id}/accesses/${file.body.data.id}`, { token, body: { mode: 'read' } });
  t.is(down.status, 422);
  t.deepEqual(fieldsOf(down), ['tools']);
  const narrowed = await server.api('PUT', `/agent-config/${id}/accesses/${file.body.data.id}`, { token, body: { mode: 'read', tools: ['cat'] } });
  t.like(narrowed.body.data, { mode: 'read', tools: ['cat'] });
  const clash = await server.api('PUT', `/agent-config/${id}/accesses/${file.body.data.id}`, { token, body: { node_id: docs } });
  t.is(clash.status, 409);

  // The path follows the node; a trashed node's access shows null.
  await contentApi(server, token, projectId)('POST', '/mv', { old_path: 'docs/guide.md', new_path: 'docs/handbook.md' });
  const agent = (await server.api('GET', `/agent-config/${id}`, { token })).body.data;
  t.is(agent.accesses.find((a: { id: string }) => a.id === file.body.data.id).path, 'docs/handbook.md');
  await contentApi(server, token, projectId)('POST', '/rm', { path: 'docs/handbook.md' });
  t.is((await server.services.agents.accesses.located(id)).find((a) => a.id === file.body.data.id)!.path, null);

  const other = await createAgent(server, token, projectId, { name: 'other' });
  t.is((await server.api('DELETE', `/agent-config/${other.id}/accesses/${read.body.data.id}`, { token })).status, 404, "another agent's access is not found");
  const del = await server.api('DELETE', `/agent-config/${id}/accesses/${read.body.data.id}`, { token });
  check(t, 'delete', '/agent-config/{agent_id}/accesses/{access_id}', del);
  t.is(await count('agent_accesses', id), 2);
});

test('replacing all accesses is one transaction: every item checked first, a bad one named by index, nothing changed', async (t) => {
  const { id } = await createAgent(server, token, projectId, { name: 'bulk' });
  const docs = nodeAt(server, projectId, 'docs');
  const archive = nodeAt(server, projectId, 'archive');
  const scratch = nodeAt(server, projectId, 'scratch');
  const first = await server.api('PUT', `/agent-config/${id}/accesses`, { token, body: { accesses: [{ node_id: docs, mode: 'read' }, { node_id: archive, mode: 'read_write' }] } });
  check(t, 'put', '/agent-config/{agent_id}/accesses', first);
  const [docsAccess] = first.body.data.accesses;

  const snapshot = () => server.services.agents.accesses.located(id);
  const before = await snapshot();
  const bad = [
    [[{ node_id: scratch, mode: 'read' }, { node_id: docs, mode: 'read' }, { node_id: 'node_nope', mode: 'read' }], 'accesses.2.node_id'],
    [[{ node_id: scratch, mode: 'read' }, { node_id: docs, mode: 'read', tools: ['write'] }], 'accesses.1.tools'],
    [[{ node_id: scratch, mode: 'read' }, { node_id: scratch, mode: 'read_write' }], 'accesses.1.node_id'],
    [[{ node_id: scratch, mode: 'sometimes' }], 'accesses.0.mode'],
    [[{ node_id: nodeAt(server, otherProject, 'elsewhere'), mode: 'read' }], 'accesses.0.node_id'],
  ] as const;
  for (const [accesses, field] of bad) {
    const res = await server.api('PUT', `/agent-config/${id}/accesses`, { token, body: { accesses } });
    t.is(res.status, 422, field);
    t.deepEqual(fieldsOf(res), [field]);
  }
  t.deepEqual(await snapshot(), before, 'nothing changed');

  const second = await server.api('PUT', `/agent-config/${id}/accesses`, { token, body: { accesses: [{ node_id: scratch, mode: 'read' }, { node_id: docs, mode: 'read_write' }] } });
  t.is(second.status, 200);
  const [s0, s1] = second.body.data.accesses;
  t.like(s0, { node_id: scratch, path: 'scratch', mode: 'read' });
  t.like(s1, { id: docsAccess.id, node_id: docs, mode: 'read_write' }, 'an access to the same node keeps its id');
  t.deepEqual((await snapshot()).map((a) => a.node_id).sort(), [docs, scratch].sort(), 'the archive access is gone');
  const empty = await server.api('PUT', `/agent-config/${id}/accesses`, { token, body: { accesses: [] } });
  t.deepEqual(empty.body.data.accesses, []);
});

test('bash tools: a folder or the whole project, names unique per agent, limits checked, bulk replace atomic', async (t) => {
  const { id } = await createAgent(server, token, projectId, { name: 'shell' });
  const docs = nodeAt(server, projectId, 'docs');
  const added = await server.api('POST', `/agent-config/${id}/bash`, { token, body: { node_id: docs } });
  t.is(added.status, 201, JSON.stringify(added.body));
  check(t, 'post', '/agent-config/{agent_id}/bash', added);
  t.like(added.body.data, { name: 'bash', mode: 'read', node_id: docs, path: 'docs', limits: {} });
  const whole = await server.api('POST', `/agent-config/${id}/bash`, { token, body: { node_id: null, name: 'project_sh', mode: 'read_write', limits: { timeout_s: 60 } } });
  t.like(whole.body.data, { name: 'project_sh', path: '', limits: { timeout_s: 60 } });

  const clash = await server.api('POST', `/agent-config/${id}/bash`, { token, body: { node_id: null } });
  t.is(clash.status, 409);
  const badName = await server.api('POST', `/agent-config/${id}/bash`, { token, body: { node_id: null, name: '1-bad name' } });
  t.deepEqual(fieldsOf(badName), ['name']);
  const onFile = await server.api('POST', `/agent-config/${id}/bash`, { token, body: { node_id: nodeAt(server, projectId, 'docs/data.json'), name: 'f' } });
  t.is(onFile.status, 422);
  t.deepEqual(fieldsOf(onFile), ['node_id']);
  const badLimits = await server.api('POST', `/agent-config/${id}/bash`, { token, body: { node_id: null, name: 'l', limits: { timeout_s: 9999, color: 'red' } } });
  t.deepEqual(fieldsOf(badLimits).sort(), ['limits', 'limits.timeout_s']);
  t.is(await count('agent_bash_tools', id), 2);

  const rename = await server.api('PUT', `/agent-config/${id}/bash/${added.body.data.id}`, { token, body: { name: 'project_sh' } });
  t.is(rename.status, 409);
  const changed = await server.api('PUT', `/agent-config/${id}/bash/${added.body.data.id}`, { token, body: { name: 'docs_sh', limits: { memory_mb: 256 } } });
  check(t, 'put', '/agent-config/{agent_id}/bash/{bash_id}', changed);
  t.like(changed.body.data, { name: 'docs_sh', limits: { memory_mb: 256 }, node_id: docs });

  const before = await server.services.agents.bashTools.located(id);
  const bad = await server.api('PUT', `/agent-config/${id}/bash`, {
    token,
    body: { bash_tools: [{ node_id: null, name: 'a' }, { node_id: null, name: 'a' }, { node_id: nodeAt(server, projectId, 'docs/data.json'), name: 'c' }] },
  });
  t.is(bad.status, 422);
  t.deepEqual(fieldsOf(bad), ['bash_tools.2.node_id']);
  const dupNames = await server.api('PUT', `/agent-config/${id}/bash`, { token, body: { bash_tools: [{ node_id: null, name: 'a' }, { node_id: docs, name: 'a' }] } });
  t.deepEqual(fieldsOf(dupNames), ['bash_tools.1.name']);
  t.deepEqual(await server.services.agents.bashTools.located(id), before, 'nothing changed');

  const replaced = await server.api('PUT', `/agent-config/${id}/bash`, { token, body: { bash_tools: [{ node_id: docs, name: 'project_sh' }, { node_id: null }] } });
  check(t, 'put', '/agent-config/{agent_id}/bash', replaced);
  const [r0, r1] = replaced.body.data.bash_tools;
  t.like(r0, { id: whole.body.data.id, name: 'project_sh', node_id: docs, mode: 'read', limits: {} }, 'a name that stays keeps its id');
  t.like(r1, { name: 'bash', node_id: null });
  t.is(await count('agent_bash_tools', id), 2);
  const del = await server.api('DELETE', `/agent-config/${id}/bash/${r1.id}`, { token });
  check(t, 'delete', '/agent-config/{agent_id}/bash/{bash_id}', del);
  t.is(await count('agent_bash_tools', id), 1);
});

test('the default agent is created once under concurrent first calls, with one whole-project read_write access', async (t) => {
  const pid = await createProject(server, token, orgId, 'defaults');
  const viewer = await addMember(server, token, pid, 'default-viewer', 'viewer');
  const answers = await Promise.all(
    Array.from({ length: 5 }, (_, i) => server.api('GET', `/agent-config/default?project_id=${pid}`, { token: i % 2 ? viewer.token : token })),
  );
  for (const a of answers) t.is(a.status, 200, JSON.stringify(a.body));
  check(t, 'get', '/agent-config/default', answers[0]!);
  t.is(new Set(answers.map((a) => a.body.data.id)).size, 1, 'one agent for every caller');
  const agents = await server.services.connections.listByProject(pid, { kind: 'agent' }, { limit: 100, offset: 0 });
  t.is(agents.total, 1);
  const agent = answers[0]!.body.data;
  t.like(agent, { name: 'default', is_default: true, model: 'openai:gpt-4.1-mini', max_tool_rounds: 20, status: 'active' });
  t.regex(agent.system_prompt, /version/);
  t.is(agent.accesses.length, 1);
  t.like(agent.accesses[0], { node_id: null, path: '', mode: 'read_write', tools: ['ls', 'cat', 'tree', 'search', 'grep', 'write', 'query_json', 'blame'] });
  // Renaming it keeps it the default; deleting it lets the next call create a new one.
  await server.api('PUT', `/agent-config/${agent.id}`, { token, body: { name: 'assistant' } });
  t.is((await server.api('GET', `/agent-config/default?project_id=${pid}`, { token })).body.data.id, agent.id);
  await server.api('DELETE', `/agent-config/${agent.id}`, { token });
  const again = await server.api('GET', `/agent-config/default?project_id=${pid}`, { token });
  t.not(again.body.data.id, agent.id);
  t.true(again.body.data.is_default);
});

test('deleting an agent deletes its connection, key, accesses, bash tools, sessions, messages and executions', async (t) => {
  const { id, key } = await createAgent(server, token, projectId, { name: 'doomed' });
  await server.api('POST', `/agent-config/${id}/accesses`, { token, body: { node_id: null, mode: 'read' } });
  await server.api('POST', `/agent-config/${id}/bash`, { token, body: { node_id: null } });
  const session = (await server.api('POST', '/chat/sessions', { token, body: { agent_id: id } })).body.data;
  const { agents } = server.services;
  const exe = await agents.executions.start({ agentId: id, sessionId: session.id, model: 'openai:gpt-4.1-mini' });
  await agents.messages.append(session.id, [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello', toolCalls: [] }], exe);

  const del = await server.api('DELETE', `/agent-config/${id}`, { token });
  check(t, 'delete', '/agent-config/{agent_id}', del);
  t.is(await server.services.connections.find(id), undefined);
  for (const table of ['agent_accesses', 'agent_bash_tools', 'chat_sessions', 'agent_executions']) t.is(await count(table, id), 0, table);
  t.is(await metadataCount(server, sql`SELECT COUNT(*) AS n FROM chat_messages WHERE session_id = ${session.id}`), 0);
  t.is((await server.api('GET', `/agent-config/${id}`, { token })).status, 404);
  t.is((await server.api('GET', '/auth/me', { token: key })).status, 401, 'its key no longer works');
});

test('executions: newest first, paginated by cursor; an unknown cursor is 422', async (t) => {
  const { id, key } = await createAgent(server, token, projectId, { name: 'busy' });
  const { executions } = server.services.agents;
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const e = await executions.start({ agentId: id, sessionId: null, model: 'openai:gpt-4.1-mini' });
    ids.push(e);
    if (i < 4) {
      await executions.finish(e, {
        status: i === 3 ? 'failed' : 'succeeded',
        inputTokens: 10 * i,
        outputTokens: i,
        toolCalls: [{ name: 'cat', arguments: { path: 'a.md' }, ok: true, duration_ms: 3 }],
        versionsWritten: [{ path: 'a.md', version: i + 1 }],
        error: i === 3 ? { code: 'rate_limited', message: 'slow down' } : null,
      });
    }
  }
  t.false(await executions.finish(ids[0]!, { status: 'cancelled', inputTokens: 0, outputTokens: 0, toolCalls: [], versionsWritten: [] }), 'a finished execution stays finished');

  const seen: string[] = [];
  let before: string | null = null;
  let pages = 0;
  do {
    const res: Awaited<ReturnType<TestServer['api']>> = await server.api('GET', `/agent-config/${id}/executions?limit=2${before ? `&before=${before}` : ''}`, { token: pages % 2 ? key : token });
    check(t, 'get', '/agent-config/{agent_id}/executions', res);
    seen.push(...res.body.data.executions.map((e: { id: string }) => e.id));
    before = res.body.data.next;
    pages++;
  } while (before && pages < 10);
  t.is(pages, 3);
  t.deepEqual(seen, [...ids].reverse(), 'every execution once, newest first');
  const first = (await server.api('GET', `/agent-config/${id}/executions?limit=5`, { token })).body.data.executions;
  t.like(first[0], { id: ids[4], status: 'running', finished_at: null });
  t.like(first[1], { status: 'failed', error: { code: 'rate_limited', message: 'slow down' }, input_tokens: 30, output_tokens: 3 });
  t.deepEqual(first[2].tool_calls, [{ name: 'cat', arguments: { path: 'a.md' }, ok: true, duration_ms: 3 }]);
  t.deepEqual(first[2].versions_written, [{ path: 'a.md', version: 3 }]);

  const other = await createAgent(server, token, projectId, { name: 'idle' });
  const foreign = await server.api('GET', `/agent-config/${other.id}/executions?before=${ids[2]}`, { token });
  t.is(foreign.status, 422);
  t.deepEqual(fieldsOf(foreign), ['before']);
  t.deepEqual(fieldsOf(await server.api('GET', `/agent-config/${id}/executions?limit=0`, { token })), ['limit']);
});

test('executions left running by a stopped service are failed (interrupted) when it starts again', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-agents-restart-'));
  try {
    const first = await startTestServer({ dataDir });
    const tok = (await first.login()).token;
    const { projectId: pid } = await defaultProject(first, tok);
    const { id } = await createAgent(first, tok, pid, { name: 'crashy' });
    const running = await first.services.agents.executions.start({ agentId: id, sessionId: null, model: 'openai:gpt-4.1-mini' });
    const done = await first.services.agents.executions.start({ agentId: id, sessionId: null, model: 'openai:gpt-4.1-mini' });
    await first.services.agents.executions.finish(done, { status: 'succeeded', inputTokens: 1, outputTokens: 1, toolCalls: [], versionsWritten: [] });
    await first.stop();

    const second = await startTestServer({ dataDir });
    try {
      const res = await second.api('GET', `/agent-config/${id}/executions`, { token: (await second.login()).token });
      const byId = new Map(res.body.data.executions.map((e: { id: string }) => [e.id, e]));
      t.like(byId.get(running), { status: 'failed', error: { code: 'interrupted' } });
      t.truthy((byId.get(running) as { finished_at: string }).finished_at);
      t.like(byId.get(done), { status: 'succeeded', error: null });
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
