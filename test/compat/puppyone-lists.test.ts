import test from 'ava';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { submitFiles } from '../ingest/ingestClient.ts';
import { assertDocumented } from '../helpers/openapi.ts';
import { createKey, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

// PuppyOne's command lines read a list answer's entries as `items` (issue 32): every list they
// read carries them beside our own named field, the same entries in the same order.

let server: TestServer;
let token: string;
let pid: string;
let orgId: string;
const sqliteDir = mkdtempSync(join(tmpdir(), 'cns-compat-sqlite-'));

test.before(async () => {
  server = await startTestServer({}, { CNS_DB_SQLITE_DIR: sqliteDir, CNS_PUPPYONE_COMPAT: 'on' });
  token = (await server.login()).token;
  ({ projectId: pid, orgId } = await defaultProject(server, token));
});
test.after.always(async () => {
  await server.stop();
  rmSync(sqliteDir, { recursive: true, force: true });
});

const call = (method: string, path: string, body?: unknown, as = token) => server.api(method, path, { token: as, body });
type Res = Awaited<ReturnType<TestServer['api']>>;

/** The answer is documented, and `items` is exactly our own list (non-empty, so the check can fail). */
function itemsBeside(t: import('ava').ExecutionContext, method: string, path: string, res: Res, key: string) {
  assertDocumented(t, server.services, method, path, res);
  const own = res.body.data[key];
  t.true(Array.isArray(own) && own.length > 0, `${path}: ${key} is a non-empty list`);
  t.deepEqual(res.body.data.items, own, `${path}: items is ${key}`);
}

test('GET /nodes (a folder and the root) carries items beside nodes', async (t) => {
  const folder = (await call('POST', '/nodes/folder', { project_id: pid, name: 'listed' })).body.data;
  await call('POST', '/nodes/markdown', { project_id: pid, parent_id: folder.id, name: 'a.md', content: '# a' });
  await call('POST', '/nodes/json', { project_id: pid, parent_id: folder.id, name: 'b.json', content: { b: 1 } });
  const inside = await call('GET', `/nodes/?project_id=${pid}&parent_id=${folder.id}`);
  itemsBeside(t, 'get', '/nodes', inside, 'nodes');
  t.deepEqual(inside.body.data.items.map((n: { name: string }) => n.name).sort(), ['a.md', 'b.json']);
  const root = await call('GET', `/nodes/?project_id=${pid}`);
  itemsBeside(t, 'get', '/nodes', root, 'nodes');
  t.true(root.body.data.items.some((n: { id: string }) => n.id === folder.id));

  // A key scoped below the folder sees only the way down, in items as in nodes.
  const key = await createKey(server, token, pid, { scope_path: 'listed/a.md' });
  const scoped = await server.api('GET', `/nodes/?project_id=${pid}&parent_id=${folder.id}`, { headers: { 'x-access-key': key.key } });
  t.deepEqual(scoped.body.data.items.map((n: { name: string }) => n.name), ['a.md']);
  t.deepEqual(scoped.body.data.items, scoped.body.data.nodes);
});

test('node versions (id surface, collab twin, path surface) carry items beside versions', async (t) => {
  const md = (await call('POST', '/nodes/markdown', { project_id: pid, name: 'v.md', content: 'one' })).body.data;
  await call('PUT', `/nodes/${md.id}`, { content: 'two' });
  const byId = await call('GET', `/nodes/${md.id}/versions`);
  itemsBeside(t, 'get', '/nodes/{nodeId}/versions', byId, 'versions');
  t.deepEqual(byId.body.data.items.map((v: { version: number }) => v.version), [2, 1]);
  itemsBeside(t, 'get', '/collab/versions/{nodeId}', await call('GET', `/collab/versions/${md.id}`), 'versions');
  itemsBeside(t, 'get', '/content/{projectId}/versions', await call('GET', `/content/${pid}/versions?path=v.md`), 'versions');
});

test('audit logs (node and project) carry items beside logs', async (t) => {
  const md = (await call('POST', '/nodes/markdown', { project_id: pid, name: 'audited.md', content: 'x' })).body.data;
  await call('PUT', `/nodes/${md.id}`, { content: 'y' });
  const node = await call('GET', `/nodes/${md.id}/audit-logs`);
  itemsBeside(t, 'get', '/nodes/{ref}/audit-logs', node, 'logs');
  t.is(node.body.data.items.length, 2);
  itemsBeside(t, 'get', '/projects/{projectId}/audit-logs', await call('GET', `/projects/${pid}/audit-logs`), 'logs');
});

test('organizations, their members, projects and project members carry items', async (t) => {
  const orgs = await call('GET', '/organizations/');
  itemsBeside(t, 'get', '/organizations', orgs, 'organizations');
  t.true(orgs.body.data.items.some((o: { id: string }) => o.id === orgId));
  itemsBeside(t, 'get', '/organizations/{org_id}/members', await call('GET', `/organizations/${orgId}/members`), 'members');
  const projects = await call('GET', `/projects/?org_id=${orgId}`);
  itemsBeside(t, 'get', '/projects', projects, 'projects');
  t.true(projects.body.data.items.some((p: { id: string }) => p.id === pid));
  itemsBeside(t, 'get', '/projects/{project_id}/members', await call('GET', `/projects/${pid}/members`), 'members');

  // Paging applies to both alike.
  const page = await call('GET', `/organizations/${orgId}/members?limit=1&offset=5`);
  t.deepEqual(page.body.data.members, []);
  t.deepEqual(page.body.data.items, []);
});

test("the other listings of PuppyOne's command line (tables, tools, agents and their tools, MCP and sandbox endpoints, publishes, db, ingest) carry items", async (t) => {
  const table = await call('POST', '/tables/', { project_id: pid, name: 'Listed table' });
  t.is(table.status, 201, JSON.stringify(table.body));
  itemsBeside(t, 'get', '/tables', await call('GET', `/tables/?project_id=${pid}`), 'tables');
  itemsBeside(t, 'get', '/tables', await call('GET', `/tables/?org_id=${orgId}`), 'tables');

  const tool = await call('POST', '/tools/', { project_id: pid, name: 'listed-tool', type: 'query_json', node_id: table.body.data.node_id, config: { pointer: '' } });
  t.is(tool.status, 201, JSON.stringify(tool.body));
  itemsBeside(t, 'get', '/tools', await call('GET', `/tools/?project_id=${pid}`), 'tools');
  itemsBeside(t, 'get', '/tools/by-node/{node_id}', await call('GET', `/tools/by-node/${table.body.data.node_id}`), 'tools');

  // PuppyOne's `agent create` sends its type: chat is what every agent here is; another type is refused.
  const scheduled = await call('POST', '/agent-config/', { project_id: pid, name: 'scheduled', system_prompt: 'x', type: 'schedule' });
  t.is(scheduled.status, 422);
  t.is(scheduled.body.error.details[0].field, 'type');
  const agent = await call('POST', '/agent-config/', { project_id: pid, name: 'listed-agent', system_prompt: 'Be brief.', type: 'chat', model: null });
  t.is(agent.status, 201, JSON.stringify(agent.body));
  itemsBeside(t, 'get', '/agent-config', await call('GET', `/agent-config/?project_id=${pid}`), 'agents');

  const bound = await call('POST', `/mcp/agents/${agent.body.data.agent.id}/tools`, { tool_id: tool.body.data.id });
  t.is(bound.status, 201, JSON.stringify(bound.body));
  itemsBeside(t, 'get', '/mcp/agents/{agent_id}/tools', await call('GET', `/mcp/agents/${agent.body.data.agent.id}/tools`), 'tools');

  const folder = (await call('POST', '/nodes/folder', { project_id: pid, name: 'endpoints' })).body.data;
  for (const [prefix, key] of [['/mcp-endpoints', 'mcp_endpoints'], ['/sandbox-endpoints', 'sandbox_endpoints']] as const) {
    const made = await call('POST', `${prefix}/`, { project_id: pid, node_id: folder.id, name: `listed ${key}` });
    t.is(made.status, 201, JSON.stringify(made.body));
    itemsBeside(t, 'get', prefix, await call('GET', `${prefix}/?project_id=${pid}`), key);
    itemsBeside(t, 'get', `${prefix}/by-node/{node_id}`, await call('GET', `${prefix}/by-node/${folder.id}`), key);
  }

  const publish = await call('POST', '/publishes/', { project_id: pid, node_id: table.body.data.node_id });
  t.is(publish.status, 201, JSON.stringify(publish.body));
  itemsBeside(t, 'get', '/publishes', await call('GET', `/publishes/?project_id=${pid}`), 'publishes');

  const db = new Database(join(sqliteDir, 'listed.db'));
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)');
  db.close();
  const conn = await call('POST', '/db-connector/connections/', { project_id: pid, name: 'listed-db', engine: 'sqlite', file: 'listed.db' });
  t.is(conn.status, 201, JSON.stringify(conn.body));
  itemsBeside(t, 'get', '/db-connector/connections', await call('GET', `/db-connector/connections/?project_id=${pid}`), 'connections');

  const submitted = await submitFiles(server, token, { project_id: pid }, [{ name: 'listed.md', content: '# listed', type: 'text/markdown' }]);
  t.is(submitted.status, 202, JSON.stringify(submitted.body));
  itemsBeside(t, 'get', '/ingest/tasks', await call('GET', `/ingest/tasks?project_id=${pid}`), 'tasks');
});

test('without CNS_PUPPYONE_COMPAT the duplicates are not sent: lists, trees, the trash, versions and node content carry ours only', async (t) => {
  const lean = await startTestServer();
  t.teardown(() => lean.stop());
  const tk = (await lean.login()).token;
  const { projectId } = await defaultProject(lean, tk);
  const w = (body: Record<string, unknown>) => lean.api('POST', `/content/${projectId}/write`, { token: tk, body });
  await w({ path: 'a/doc.md', node_type: 'markdown', content: 'one' });
  await w({ path: 'a/doc.md', node_type: 'markdown', content: 'two' });
  await w({ path: 'a/data.json', node_type: 'json', content: { k: 1 } });
  await lean.api('POST', `/content/${projectId}/rm`, { token: tk, body: { path: 'a/data.json' } });
  const get = async (path: string) => (await lean.api('GET', path, { token: tk })).body.data;
  const versions = await get(`/content/${projectId}/versions?path=a/doc.md`);
  t.is(versions.versions.length, 2);
  t.false('items' in versions || 'commits' in versions);
  const tree = await get(`/content/${projectId}/tree`);
  t.truthy(tree.children);
  t.false('entries' in tree);
  const trash = await get(`/content/${projectId}/trash`);
  t.is(trash.items.length, 1, "the trash's own list is items");
  t.false('entries' in trash);
  const nodeId = (await get(`/content/${projectId}/stat?path=a/doc.md`)).id;
  const node = await get(`/nodes/${nodeId}?project_id=${projectId}`);
  t.is(node.content, 'two');
  t.false('preview_md' in node);
  const orgs = await get('/organizations/');
  t.true(orgs.organizations.length > 0);
  t.false('items' in orgs);
});

test("what PuppyOne's command line prints beside a list: an organization's member count, a member's created_at, a new agent's id", async (t) => {
  const orgs = await call('GET', '/organizations/');
  assertDocumented(t, server.services, 'get', '/organizations', orgs);
  const mine = orgs.body.data.organizations.find((o: { id: string }) => o.id === orgId);
  t.is(mine.member_count, 1);
  const members = await call('GET', `/organizations/${orgId}/members`);
  t.is(members.body.data.members[0].created_at, members.body.data.members[0].joined_at);
  const agent = await call('POST', '/agent-config/', { project_id: pid, name: 'printed', system_prompt: 'x', type: 'chat' });
  t.is(agent.status, 201, JSON.stringify(agent.body));
  assertDocumented(t, server.services, 'post', '/agent-config', agent);
  t.is(agent.body.data.id, agent.body.data.agent.id);
});
