import test from 'ava';
import Database from 'better-sqlite3';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nock from 'nock';
import pg from 'pg';
import { CliUser } from '../cli/harness.ts';
import { fakeConnector, FakeSource } from '../platform/runtime/fakeSource.ts';
import { freshPostgresDatabase, type TestDatabase } from '../helpers/postgresDatabases.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startTestServer, type ApiResponse, type TestServer } from '../helpers/server.ts';

// `cns db copy` on a real install (issue 30): a service on SQLite, with users, an organization and
// its member, projects with content (versions, the trash), access keys, an agent, an MCP endpoint,
// a platform sync that has run, a webhook, a publish and a table, is stopped; its records are
// copied into an empty PostgreSQL database by the command line; the service then starts on
// PostgreSQL with the same data folder, and everything is still there and still works: every key
// authenticates (a scoped one is still refused outside its scope), the sync resumes at its cursor.

const MEMBER = { email: 'member@example.com', password: 'member-password-1' };
const GH_TOKEN = 'ghp_dbCopyInstallToken01';
/** The server's settings on both engines but the metadata store's. */
const OVERRIDES = { signupOpen: true };
const ENV = { CNS_URL_FETCH_ALLOW_PRIVATE: '1' };

let dataDir: string;
const user = new CliUser();
const servers: TestServer[] = [];
const source = new FakeSource();

/** What the install holds, made through the API on SQLite. */
interface Install {
  adminToken: string;
  adminRefresh: string;
  memberId: string;
  orgId: string;
  /** The admin's default project (content, keys, agent, sync, …). */
  projectId: string;
  /** The organization's project the member sees through their membership. */
  orgProjectId: string;
  keys: { read: string; readWrite: string; scoped: string; agent: string; mcp: string; sync: string };
  agentId: string;
  chatSessionId: string;
  mcpId: string;
  webhookId: string;
  publishKey: string;
  tableId: string;
  syncId: string;
  connections: string[];
  /** Paths of the project with their node ids. */
  nodes: Record<string, string>;
  versions: number;
  syncState: Record<string, unknown>;
  /** The answers of every key's probes (status per probe) on SQLite. */
  probes: Record<string, number>;
}
let install: Install;

/**
 * The API over node:http, not fetch: nock (the fake sync source) wraps the global fetch, whose
 * request bodies it cannot pass through on this Node (test/platform/oauth/helpers.ts).
 */
function call(server: TestServer, method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<ApiResponse> {
  const url = path.startsWith('http') ? path : `${server.url}/api/v1${path}`;
  const headers: Record<string, string> = { accept: 'application/json, text/event-stream' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : null;
        } catch {
          /* not JSON */
        }
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
        resolve({ status: res.statusCode!, headers: h, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The call's answer when it has `status`, else an error naming what came back. */
async function expect(server: TestServer, status: number | number[], method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<ApiResponse> {
  const res = await call(server, method, path, options);
  if (!([] as number[]).concat(status).includes(res.status)) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

async function start(env: Record<string, string>): Promise<TestServer> {
  const server = await startTestServer({ dataDir, ...OVERRIDES }, { ...ENV, ...env });
  servers.push(server);
  // The fake source's connector, under the provider id `github` (test/platform/runtime/fakeSource.ts).
  server.services.syncRuntime.register(fakeConnector);
  return server;
}

async function stop(server: TestServer): Promise<void> {
  servers.splice(servers.indexOf(server), 1);
  await server.stop();
}

/**
 * What each key may do and may not: [name, key, method, path, body]. Writes go to a path of
 * their own per round (`round`), so that the same probe is a creation on either engine.
 */
function probes(i: Install, round: string): [string, string, string, string, unknown?][] {
  const p = i.projectId;
  return [
    ['read key reads', i.keys.read, 'GET', `/content/${p}/cat?path=docs/guide.md`],
    ['read key may not write', i.keys.read, 'POST', `/content/${p}/write`, { path: `probe/read-${round}.md`, content: 'x\n', node_type: 'markdown' }],
    ['read_write key writes', i.keys.readWrite, 'POST', `/content/${p}/write`, { path: `probe/rw-${round}.md`, content: 'x\n', node_type: 'markdown' }],
    ['scoped key reads in its scope', i.keys.scoped, 'GET', `/content/${p}/cat?path=docs/guide.md`],
    ['scoped key is refused outside its scope', i.keys.scoped, 'GET', `/content/${p}/cat?path=notes/plan.md`],
    ['agent key lists its chat sessions', i.keys.agent, 'GET', `/chat/sessions?agent_id=${i.agentId}`],
    ['agent key is its agent', i.keys.agent, 'GET', `/agent-config/${i.agentId}`],
    ['sync key lists its changes', i.keys.sync, 'GET', `/sync/changelog?project_id=${p}`],
    ['mcp key at its endpoint', i.keys.mcp, 'POST', `/mcp/e/${i.mcpId}`, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } }],
    ['mcp key is refused at the content API', i.keys.mcp, 'GET', `/content/${p}/cat?path=notes/plan.md`],
  ];
}

async function runProbes(server: TestServer, i: Install, round: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, key, method, path, body] of probes(i, round)) out[name] = (await call(server, method, path, { token: key, body })).status;
  return out;
}

/** The project's paths with their node ids (files and folders, trash aside). */
async function tree(server: TestServer, token: string, projectId: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (path: string) => {
    const res = await expect(server, 200, 'GET', `/content/${projectId}/ls?path=${encodeURIComponent(path)}`, { token });
    for (const e of res.body.data.entries ?? res.body.data.items) {
      const p = path ? `${path}/${e.name}` : e.name;
      out[p] = e.id;
      if (e.type === 'folder') await walk(p);
    }
  };
  await walk('');
  return out;
}

/** A sync as the project's list shows it. */
async function syncOf(server: TestServer, token: string, projectId: string, syncId: string): Promise<Record<string, unknown>> {
  const list = (await expect(server, 200, 'GET', `/sync/syncs?project_id=${projectId}`, { token })).body.data;
  const found = ((list.syncs ?? list.items) as { id: string }[]).find((s) => s.id === syncId);
  if (!found) throw new Error(`no sync ${syncId} in ${JSON.stringify(list)}`);
  return found;
}

test.before(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
  source.intercept();
  dataDir = mkdtempSync(join(tmpdir(), 'cns-dbcopy-install-'));
  // SQLite, even when the suite runs on PostgreSQL (CNS_TEST_ENGINE=postgres): a blank URL pins it.
  const server = await start({ CNS_DATABASE_URL: '' });
  const api = (status: number | number[], method: string, path: string, body?: unknown, token = admin.token) => expect(server, status, method, path, { token, body });
  const login = await expect(server, 200, 'POST', '/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
  const admin = { token: login.body.data.access_token as string, refresh: login.body.data.refresh_token as string };
  const init = await api([200, 201], 'POST', '/auth/initialize');
  const projectId: string = init.body.data.project.id;

  // A second user, who signs up, and joins an organization by its invitation.
  const member = await expect(server, 201, 'POST', '/auth/signup', { body: { email: MEMBER.email, password: MEMBER.password } });
  const memberToken: string = member.body.data.access_token;
  const orgId: string = (await api(201, 'POST', '/organizations', { name: 'Team' })).body.data.id;
  const orgProjectId: string = (await api(201, 'POST', '/projects', { name: 'Team handbook', org_id: orgId })).body.data.id;
  await expect(server, 201, 'POST', `/content/${orgProjectId}/write`, { token: admin.token, body: { path: 'handbook.md', content: '# Handbook\n', node_type: 'markdown' } });
  const invitation = (await api(201, 'POST', `/organizations/${orgId}/invite`, { email: MEMBER.email, role: 'member' })).body.data;
  await expect(server, 200, 'POST', `/organizations/invitations/${invitation.token}/accept`, { token: memberToken });

  // Content: a few versions, something in the trash.
  const write = (path: string, content: string) => api([200, 201], 'POST', `/content/${projectId}/write`, { path, content, node_type: 'markdown' });
  await write('docs/guide.md', '# Guide\n');
  await write('docs/guide.md', '# Guide\n\nSecond version.\n');
  await write('docs/guide.md', '# Guide\n\nThird version.\n');
  await write('notes/plan.md', '# Plan\n');
  await write('notes/old.md', '# Old\n');
  await api(200, 'POST', `/content/${projectId}/rm`, { path: 'notes/old.md' });

  // Access keys: read, read_write, scoped.
  const key = async (body: Record<string, unknown>) => (await api(201, 'POST', '/connections/', { project_id: projectId, kind: 'api', ...body })).body.data.key as string;
  const read = await key({ name: 'reader', mode: 'read' });
  const readWrite = await key({ name: 'writer', mode: 'read_write' });
  const scoped = await key({ name: 'docs only', mode: 'read', scope_path: 'docs' });

  const docsId: string = (await api(200, 'GET', `/content/${projectId}/stat?path=docs`)).body.data.id;
  // An agent with an access to docs/, and a chat session (no message: no model is asked).
  const agent = (await api(201, 'POST', '/agent-config/', { name: 'helper', project_id: projectId, system_prompt: 'Be brief.' })).body.data;
  await api(201, 'POST', `/agent-config/${agent.agent.id}/accesses`, { node_id: docsId, mode: 'read' });
  const chat = (await api(201, 'POST', '/chat/sessions', { agent_id: agent.agent.id, title: 'Planning' })).body.data;
  // An MCP endpoint on docs/.
  const mcp = (await api(201, 'POST', '/mcp-endpoints', { project_id: projectId, node_id: docsId, name: 'Docs', mode: 'read' })).body.data;

  // A webhook, whose deliveries (to a port nothing listens on) stay in the log.
  const webhook = (await api(201, 'POST', `/projects/${projectId}/webhooks`, { url: 'http://127.0.0.1:9/hook', events: ['content.created'] })).body.data;
  const guide = (await api(200, 'GET', `/content/${projectId}/stat?path=docs/guide.md`)).body.data;
  const publish = (await api(201, 'POST', '/publishes/', { project_id: projectId, node_id: guide.id })).body.data;
  const table = (await api(201, 'POST', '/tables/', { project_id: projectId, name: 'Customers' })).body.data;
  await api([200, 201], 'POST', `/tables/${table.id}/data`, { data: { name: 'Ada' } });

  // A platform sync (the fake source on nock) that has run: 5 items in pages of 2, cursor 5.
  nock('https://api.github.com').get('/user').reply(200, { login: 'octocat' }, { 'X-OAuth-Scopes': 'repo' });
  await api([200, 201], 'POST', '/oauth/github/token', { project_id: projectId, token: GH_TOKEN });
  for (let n = 1; n <= 5; n++) source.put(`i${n}`, `notes/n${n}.md`, `# Note ${n}\n`);
  const sync = (await api(201, 'POST', '/sync/bootstrap', { project_id: projectId, provider: 'github', config: { path: '/imported' } })).body.data;
  const run = (await api(200, 'POST', `/sync/syncs/${sync.sync.id}/refresh`)).body.data.run;
  if (run.status !== 'succeeded' || run.cursor_after !== '5') throw new Error(`first sync run: ${JSON.stringify(run)}`);

  const deadline = Date.now() + 15_000;
  for (;;) {
    const d = await api(200, 'GET', `/projects/${projectId}/webhooks/${webhook.id}/deliveries`);
    if ((d.body.data.deliveries ?? d.body.data.items ?? []).length >= 1) break;
    if (Date.now() > deadline) throw new Error(`no deliveries logged: ${JSON.stringify(d.body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }

  const partial = {
    adminToken: admin.token,
    adminRefresh: admin.refresh,
    memberId: member.body.data.user.id,
    orgId,
    projectId,
    orgProjectId,
    keys: { read, readWrite, scoped, agent: agent.key, mcp: mcp.key, sync: sync.key },
    agentId: agent.agent.id,
    chatSessionId: chat.id ?? chat.session?.id,
    mcpId: mcp.mcp_endpoint.id,
    webhookId: webhook.id,
    publishKey: publish.publish_key,
    tableId: table.id,
    syncId: sync.sync.id,
    connections: ((await api(200, 'GET', `/connections/?project_id=${projectId}`)).body.data.connections as { id: string }[]).map((c) => c.id).sort(),
    nodes: {},
    versions: (await api(200, 'GET', `/content/${projectId}/versions?path=docs/guide.md`)).body.data.versions.length,
    syncState: await syncOf(server, admin.token, projectId, sync.sync.id),
    probes: {},
  };
  const probed = await runProbes(server, partial, 'sqlite');
  // The tree after the probes' writes, as the copy finds it.
  install = { ...partial, probes: probed, nodes: await tree(server, admin.token, projectId) };
  await stop(server);
});

test.after.always(async () => {
  for (const s of [...servers]) await s.stop().catch(() => {});
  nock.cleanAll();
  nock.enableNetConnect();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  user.dispose();
});

test.serial('cns db copy of a real install: the service starts on PostgreSQL with every record, every key and every sync where it was', async (t) => {
  t.timeout(240_000);
  // What SQLite held, each table counted.
  const sqlite = new Database(join(dataDir, 'cns.db'), { readonly: true });
  const count = (table: string) => (sqlite.prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
  const sourceCursor = (sqlite.prepare('SELECT source_cursor, acked_cursor FROM sync_states WHERE sync_id = ?').get(install.syncId) as { source_cursor: string; acked_cursor: number });
  const itemsBefore = count('sync_items');
  const copiedSeq = (sqlite.prepare('SELECT max(seq) AS max FROM webhook_deliveries').get() as { max: number }).max;

  const database: TestDatabase = await freshPostgresDatabase();
  t.teardown(() => database.drop());
  const copy = await user.run(['db', 'copy', '--to', database.url, '--data-dir', dataDir]);
  t.is(copy.code, 0, copy.stderr);
  t.regex(copy.stdout, /counts verified in PostgreSQL/);
  const printed = [...copy.stdout.matchAll(/^ {2}(\w+) +(\d+) rows$/gm)].map((m) => ({ table: m[1]!, rows: Number(m[2]) }));
  for (const { table, rows } of printed) t.is(rows, count(table), `${table}: the count printed is SQLite's`);

  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  t.teardown(() => client.end());
  const { rows: pgTables } = await client.query<{ table_name: string }>(
    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations'",
  );
  t.deepEqual(printed.map((p) => p.table).sort(), pgTables.map((r) => r.table_name).sort(), 'every table of PostgreSQL was filled');
  for (const { table, rows } of printed) t.is(Number((await client.query(`SELECT count(*) AS n FROM "${table}"`)).rows[0].n), rows, `${table} in PostgreSQL`);
  const nonEmpty = new Set(printed.filter((p) => p.rows > 0).map((p) => p.table));
  for (const table of ['users', 'refresh_tokens', 'organizations', 'org_members', 'invitations', 'projects', 'connections', 'agent_accesses', 'chat_sessions', 'oauth_connections', 'sync_states', 'sync_runs', 'sync_items', 'webhooks', 'webhook_deliveries', 'publishes', 'json_tables']) {
    t.true(nonEmpty.has(table), `${table} had records to copy`);
  }
  t.regex(copy.stdout, /stay in .*cns\.db: .*\bnodes\b/);
  sqlite.close();

  // Into a database that now holds records: refused, and nothing changes.
  const again = await user.run(['db', 'copy', '--to', database.url, '--data-dir', dataDir]);
  t.not(again.code, 0);
  t.regex(again.stderr, /already holds records/);
  t.is(Number((await client.query('SELECT count(*) AS n FROM users')).rows[0].n), printed.find((p) => p.table === 'users')!.rows);

  // The service on PostgreSQL, the same data folder (repositories, content index, signing secret).
  const server = await start({ CNS_DATABASE_URL: database.url, CNS_DATABASE_POOL: '4' });
  t.teardown(() => (servers.includes(server) ? stop(server) : undefined));
  const i = install;

  // Users sign in with their passwords; the admin's refresh token (a sign-in) still refreshes.
  const admin = (await expect(server, 200, 'POST', '/auth/login', { body: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).body.data.access_token as string;
  const member = (await expect(server, 200, 'POST', '/auth/login', { body: MEMBER })).body.data.access_token as string;
  t.is((await call(server, 'POST', '/auth/refresh', { body: { refresh_token: i.adminRefresh } })).status, 200, 'a refresh token issued on SQLite');
  t.is((await call(server, 'GET', '/auth/me', { token: i.adminToken })).status, 200, 'an access token issued on SQLite');

  // The member still sees the organization's projects and their content.
  const memberProjects = (await expect(server, 200, 'GET', `/projects/?org_id=${i.orgId}`, { token: member })).body.data.projects as { id: string }[];
  t.deepEqual(memberProjects.map((p) => p.id), [i.orgProjectId]);
  t.is((await expect(server, 200, 'GET', `/content/${i.orgProjectId}/cat?path=handbook.md`, { token: member })).body.data.content, '# Handbook\n');
  const members = (await expect(server, 200, 'GET', `/organizations/${i.orgId}/members`, { token: admin })).body.data.members as { user_id: string; role: string }[];
  t.true(members.some((m) => m.user_id === i.memberId && m.role === 'member'));

  // Content, versions and trash (the content index is in the data folder).
  t.deepEqual(await tree(server, admin, i.projectId), i.nodes);
  t.is((await expect(server, 200, 'GET', `/content/${i.projectId}/versions?path=docs/guide.md`, { token: admin })).body.data.versions.length, i.versions);
  t.is((await expect(server, 200, 'GET', `/content/${i.projectId}/cat?path=docs/guide.md`, { token: admin })).body.data.content, '# Guide\n\nThird version.\n');
  const trash = (await expect(server, 200, 'GET', `/content/${i.projectId}/trash`, { token: admin })).body.data.items as { original_path: string }[];
  t.true(trash.some((x) => x.original_path === 'notes/old.md'));

  // Every key authenticates as before, and may do what it could (and no more).
  const probed = await runProbes(server, i, 'postgres');
  t.deepEqual(probed, i.probes);
  for (const name of ['read key reads', 'read_write key writes', 'scoped key reads in its scope', 'agent key lists its chat sessions', 'agent key is its agent', 'sync key lists its changes', 'mcp key at its endpoint']) {
    t.true(probed[name]! >= 200 && probed[name]! < 300, `${name}: ${probed[name]}`);
  }
  for (const name of ['read key may not write', 'scoped key is refused outside its scope', 'mcp key is refused at the content API']) {
    t.true(probed[name] === 403 || probed[name] === 404, `${name}: ${probed[name]}`);
  }
  // The read_write key's write is logged for the webhook after the copied deliveries (the identity moved past them).
  const copiedDeliveries = printed.find((p) => p.table === 'webhook_deliveries')!.rows;
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { rows } = await client.query<{ n: string; max: string }>('SELECT count(*) AS n, max(seq) AS max FROM webhook_deliveries');
    if (Number(rows[0]!.n) > copiedDeliveries) {
      t.true(Number(rows[0]!.max) > copiedSeq);
      break;
    }
    if (Date.now() > deadline) {
      t.fail('no delivery logged on PostgreSQL');
      break;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const connections = ((await expect(server, 200, 'GET', `/connections/?project_id=${i.projectId}`, { token: admin })).body.data.connections as { id: string }[]).map((c) => c.id).sort();
  t.deepEqual(connections, i.connections);
  // A new key on PostgreSQL works beside the copied ones.
  const fresh = (await expect(server, 201, 'POST', '/connections/', { token: admin, body: { project_id: i.projectId, kind: 'api', name: 'after the copy', mode: 'read' } })).body.data.key as string;
  t.is((await call(server, 'GET', `/content/${i.projectId}/cat?path=docs/guide.md`, { token: fresh })).status, 200);

  // The agent with its access and chat session, the MCP endpoint, the webhook, the publish, the table.
  const agent = (await expect(server, 200, 'GET', `/agent-config/${i.agentId}`, { token: admin })).body.data;
  t.is((agent.agent ?? agent).accesses.length, 1);
  t.true(JSON.stringify((await expect(server, 200, 'GET', `/chat/sessions?agent_id=${i.agentId}`, { token: admin })).body.data).includes(i.chatSessionId));
  t.true(JSON.stringify((await expect(server, 200, 'GET', `/mcp-endpoints?project_id=${i.projectId}`, { token: admin })).body.data).includes(i.mcpId));
  t.true(JSON.stringify((await expect(server, 200, 'GET', `/projects/${i.projectId}/webhooks`, { token: admin })).body.data).includes(i.webhookId));
  t.true(JSON.stringify((await expect(server, 200, 'GET', `/publishes/?project_id=${i.projectId}`, { token: admin })).body.data).includes(i.publishKey));
  const published = await call(server, 'GET', `/p/${i.publishKey}`);
  t.is(published.status, 200);
  t.true(JSON.stringify(published.body).includes('Third version.'));
  t.true(JSON.stringify((await expect(server, 200, 'GET', `/tables/${i.tableId}/data`, { token: admin })).body.data).includes('Ada'));

  // The sync resumes at its cursor: the same state, and a new run asks the source for what came after it.
  const state = await syncOf(server, admin, i.projectId, i.syncId);
  t.deepEqual(state, i.syncState);
  const { rows: pgState } = await client.query('SELECT source_cursor, acked_cursor FROM sync_states WHERE sync_id = $1', [i.syncId]);
  t.is(pgState[0].source_cursor, sourceCursor.source_cursor);
  t.is(Number(pgState[0].acked_cursor), sourceCursor.acked_cursor);
  source.put('i1', 'notes/n1.md', '# Note 1, edited\n');
  source.put('i6', 'notes/n6.md', '# Note 6\n');
  source.seen.length = 0;
  const run = (await expect(server, 200, 'POST', `/sync/syncs/${i.syncId}/refresh`, { token: admin })).body.data.run;
  t.like(run, { status: 'succeeded', pulled: { created: 1, updated: 1, deleted: 0 }, cursor_before: '5', cursor_after: '7' });
  t.deepEqual(source.seen.filter((r) => r.path === '/changes').map((r) => r.query.since), ['5']);
  t.is(Number((await client.query('SELECT count(*) AS n FROM sync_items WHERE sync_id = $1', [i.syncId])).rows[0].n), itemsBefore + 1, 'one new item, none imported again');
  const after = await tree(server, admin, i.projectId);
  const imported = Object.keys(after).filter((p) => p.startsWith('imported/notes/')).sort();
  t.deepEqual(imported, [1, 2, 3, 4, 5, 6].map((n) => `imported/notes/n${n}.md`));
  t.is(after['imported/notes/n1.md'], i.nodes['imported/notes/n1.md'], 'the edited item is the same node');
  t.is((await expect(server, 200, 'GET', `/content/${i.projectId}/cat?path=imported/notes/n1.md`, { token: admin })).body.data.content, '# Note 1, edited\n');
  const runs = (await expect(server, 200, 'GET', `/sync/syncs/${i.syncId}/runs`, { token: admin })).body.data.runs as unknown[];
  t.is(runs.length, 2, 'the run before the copy and the one after');

  await stop(server);
});
