import test from 'ava';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createServer, type Agent, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFakeOpenAi, type FakeProvider } from '../agents/fakeProviders.ts';
import { FakeGithub, GITHUB } from '../platform/connectors/fixtures/github/fakeGithub.ts';
import { fetchVia } from './viaWorker.ts';
import { ownerOf as leaseHolder, startWorkers, type Answer, type WorkersServer } from './workersHarness.ts';

// Every surface that changes a project, proven under `cns serve --workers 2`: each test talks to
// the worker that does NOT own the project (its requests are forwarded to the owner, or its
// background work must run there) and reads the outcome back through the API.

let w: WorkersServer;
let token: string;
let llm: FakeProvider;
let github: { fake: FakeGithub; server: Server; url: string };
const agents: Agent[] = [];

test.before(async () => {
  llm = await startFakeOpenAi();
  github = await startFakeGithubServer();
  w = await startWorkers(2, {
    CNS_OPENAI_BASE_URL: llm.url,
    CNS_OPENAI_API_KEY: 'sk-test-openai',
    CNS_SANDBOX: 'bwrap',
    CNS_GITHUB_API_URL: github.url,
    // The stand-in GitHub is on the loopback address, which outbound requests refuse by default.
    CNS_URL_FETCH_ALLOW_PRIVATE: 'true',
  });
  token = await w.token();
});

test.after.always(async () => {
  agents.forEach((a) => a.destroy());
  const code = await w?.stop();
  if (code !== 0 && w) console.error(w.serve.output());
  await llm?.close();
  github?.server.closeAllConnections();
  await new Promise((r) => github?.server.close(r));
});

interface Placed {
  projectId: string;
  owner: string;
  /** A keep-alive connection served by the worker that does not own the project. */
  elsewhere: Agent;
  /** One served by the owner. */
  home: Agent;
}

/** A new project with a first file written (which places its lease), and connections to both workers. */
async function placedProject(name: string, seedPath: string, seed: string): Promise<Placed> {
  const projectId = await w.project(token, name);
  const first = await w.api('POST', `/content/${projectId}/write`, { token, body: { path: seedPath, content: seed, node_type: 'markdown' } });
  if (first.status !== 201) throw new Error(`seed write: ${first.status} ${JSON.stringify(first.body)}`);
  const owner = ownerOf(projectId);
  if (!owner) throw new Error(`no lease for ${projectId}`);
  const elsewhere = await w.connectionTo(owner === 'w1' ? 'w2' : 'w1');
  const home = await w.connectionTo(owner);
  agents.push(elsewhere, home);
  return { projectId, owner, elsewhere, home };
}

const ownerOf = (projectId: string) => leaseHolder(w.dataDir, projectId);

const nodeId = async (projectId: string, path: string, agent: Agent): Promise<string> => {
  const r = await w.api('GET', `/content/${projectId}/stat?path=${encodeURIComponent(path)}`, { token, agent });
  if (r.status !== 200) throw new Error(`stat ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data.id as string;
};
const cat = (projectId: string, path: string, agent: Agent) => w.api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token, agent });

/** Polls `check` until it returns a truthy value, or fails with the last answer after `ms`. */
async function until<T>(what: string, check: () => Promise<T>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test.serial('MCP: the endpoint names the workers server; a session opened on the non-owner survives calls alternating between both workers', async (t) => {
  const p = await placedProject('mcp', 'docs/seed.md', '# Seed\n');
  const created = await w.api('POST', '/mcp-endpoints', {
    token,
    agent: p.elsewhere,
    body: { project_id: p.projectId, node_id: await nodeId(p.projectId, 'docs', p.elsewhere), name: 'docs over mcp', mode: 'read_write' },
  });
  t.is(created.status, 201, JSON.stringify(created.body));
  const serverUrl = new URL(created.body.data.mcp_endpoint.server_url as string);
  t.is(serverUrl.port, new URL(w.url).port, 'the endpoint URL names the port the primary listens on');
  t.regex(serverUrl.pathname, /^\/api\/v1\/mcp\/e\//);

  // Requests alternate: non-owner, owner, non-owner…; the standing GET stream has a connection of its own to the non-owner.
  let n = 0;
  const streamConnection = await w.connectionTo(p.owner === 'w1' ? 'w2' : 'w1');
  agents.push(streamConnection);
  const via = fetchVia((method) => (method === 'GET' ? streamConnection : n++ % 2 === 0 ? p.elsewhere : p.home));
  const answered: { method: string; status: number; type: string | null }[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const res = await via(input, init);
    answered.push({ method: init?.method ?? 'GET', status: res.status, type: res.headers.get('content-type') });
    return res;
  };
  const client = new Client({ name: 'cns-workers-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(serverUrl.pathname, w.url), { fetch, requestInit: { headers: { Authorization: `Bearer ${created.body.data.key}` } } });
  await client.connect(transport);
  t.teardown(async () => {
    await transport.terminateSession().catch(() => {});
    await client.close();
  });
  const session = transport.sessionId;
  t.truthy(session);
  const tools = (await client.listTools()).tools.map((x) => x.name);
  t.true(tools.includes('write') && tools.includes('cat'), tools.join(', '));
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
    return { isError: r.isError === true, data: r.structuredContent as { content?: unknown; path?: string }, text: (r.content[0] as { text: string }).text };
  };
  for (let i = 0; i < 4; i++) {
    const written = await call('write', { path: `docs/mcp-${i}.md`, content: `# Written over MCP ${i}\n` });
    t.false(written.isError, written.text);
    const read = await call('cat', { path: `docs/mcp-${i}.md` });
    t.false(read.isError, read.text);
    t.is(read.data.content, `# Written over MCP ${i}\n`);
  }
  t.true(n >= 10, `${n} POSTs, split between the two workers`);
  t.is(transport.sessionId, session, 'one session throughout');
  t.deepEqual(answered.filter((a) => a.status >= 300), [], 'no request of the session was refused');
  const stream = answered.find((a) => a.method === 'GET');
  t.like(stream, { status: 200 }, 'the session’s event stream, opened on the non-owner, is served by the owner');
  t.regex(stream?.type ?? '', /^text\/event-stream/);
  for (const agent of [p.elsewhere, p.home]) t.is((await cat(p.projectId, 'docs/mcp-3.md', agent)).body.data.content, '# Written over MCP 3\n');
  t.is(ownerOf(p.projectId), p.owner, 'the lease did not move');
});

test.serial('search: a file written through the non-owner is found by the tool’s search, asked through either worker', async (t) => {
  const p = await placedProject('search', 'kb/intro.md', '# Intro\n\nNothing special here.\n');
  const created = await w.api('POST', '/tools/search', { token, agent: p.elsewhere, body: { project_id: p.projectId, name: 'kb', node_id: await nodeId(p.projectId, 'kb', p.elsewhere) } });
  t.is(created.status, 202, JSON.stringify(created.body));
  const toolId = created.body.data.tool.id as string;
  // The index is the owner's: its state is asked there too.
  for (const agent of [p.elsewhere, p.home]) {
    let last: Answer | null = null;
    await until(`the index ready (last answer ${JSON.stringify(last)})`, async () => {
      last = await w.api('GET', `/tools/${toolId}/search-index`, { token, agent });
      if (last.status !== 200) throw new Error(`search-index: ${last.status} ${JSON.stringify(last.body)}`);
      return last.body.data.status === 'ready' ? last.body.data : null;
    });
  }
  const written = await w.api('POST', `/content/${p.projectId}/write`, { token, agent: p.elsewhere, body: { path: 'kb/fresh.md', content: '# Fresh\n\nThe quokkaquest appears only here.\n', node_type: 'markdown' } });
  t.is(written.status, 201);
  for (const agent of [p.elsewhere, p.home]) {
    const found = await until('the new file in the results', async () => {
      const r = await w.api('POST', `/tools/${toolId}/search`, { token, agent, body: { query: 'quokkaquest' } });
      if (r.status !== 200) throw new Error(`search: ${r.status} ${JSON.stringify(r.body)}`);
      return (r.body.data.results as { path: string }[]).find((x) => x.path === 'kb/fresh.md');
    });
    t.regex((found as unknown as { snippet: string }).snippet, /\*\*quokkaquest\*\*/);
  }
});

test.serial('sandbox: a read_write exec through the non-owner writes a file that both workers then read', async (t) => {
  const p = await placedProject('sandbox', 'work/notes.md', 'line one\n');
  const created = await w.api('POST', '/sandbox-endpoints/', { token, agent: p.elsewhere, body: { name: 'sbx', project_id: p.projectId, node_id: await nodeId(p.projectId, 'work', p.elsewhere), mode: 'read_write' } });
  t.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body.data.sandbox_endpoint.id as string;
  const ran = await w.api('POST', `/sandbox-endpoints/${id}/exec`, { token: created.body.data.key, agent: p.elsewhere, body: { command: 'cat notes.md; printf "made in the sandbox\\n" > made.md' } });
  t.is(ran.status, 200, JSON.stringify(ran.body));
  t.is(ran.body.data.exit_code, 0, JSON.stringify(ran.body.data));
  t.is(ran.body.data.stdout, 'line one\n');
  for (const agent of [p.elsewhere, p.home]) {
    const read = await cat(p.projectId, 'work/made.md', agent);
    t.is(read.status, 200, JSON.stringify(read.body));
    t.is(read.body.data.content, 'made in the sandbox\n');
  }
});

test.serial('ingestion: a file submitted through the non-owner is converted by the owner’s queue and lands in the project', async (t) => {
  const p = await placedProject('ingest', 'seed.md', 'seed');
  const form = new FormData();
  form.append('project_id', p.projectId);
  form.append('path', 'imports');
  form.append('files', new Blob(['Hello ingestion, from the other worker.\n'], { type: 'text/plain' }), 'hello.txt');
  const res = await fetchVia(() => p.elsewhere)(`${w.url}/api/v1/ingest/submit/file`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  const body = (await res.json()) as { data: { tasks: { id: string }[] } };
  t.is(res.status, 202, JSON.stringify(body));
  const taskId = body.data.tasks[0].id as string;
  const task = await until('the task finished', async () => {
    const r = await w.api('GET', `/ingest/tasks/${taskId}`, { token, agent: p.elsewhere });
    if (r.status !== 200) throw new Error(`task: ${r.status} ${JSON.stringify(r.body)}`);
    return ['succeeded', 'failed', 'cancelled'].includes(r.body.data.status) ? r.body.data : null;
  });
  t.is(task.status, 'succeeded', JSON.stringify(task));
  t.deepEqual(task.result.nodes.map((n: { path: string }) => n.path), ['imports/hello.md']);
  for (const agent of [p.elsewhere, p.home]) {
    const read = await cat(p.projectId, 'imports/hello.md', agent);
    t.is(read.status, 200, JSON.stringify(read.body));
    t.regex(read.body.data.content, /Hello ingestion, from the other worker\./);
  }
});

test.serial('agents: a chat turn through the non-owner streams, runs the model’s write, and the file is there', async (t) => {
  const p = await placedProject('agents', 'docs/a.md', '# Alpha\n');
  const created = await w.api('POST', '/agent-config/', { token, agent: p.elsewhere, body: { name: 'keeper', project_id: p.projectId, system_prompt: 'You keep the docs.', model: 'openai:gpt-test' } });
  t.is(created.status, 201, JSON.stringify(created.body));
  const agentId = created.body.data.agent.id as string;
  const access = await w.api('POST', `/agent-config/${agentId}/accesses`, { token, agent: p.elsewhere, body: { node_id: await nodeId(p.projectId, 'docs', p.elsewhere), mode: 'read_write' } });
  t.is(access.status, 201, JSON.stringify(access.body));
  const asked = llm.requests.length;
  llm.script({ text: ['Writing it.'], toolCalls: [{ name: 'write', arguments: { path: 'docs/by-agent.md', content: '# Written by the agent\n' } }] }, { text: ['Done.'] });
  const res = await fetchVia(() => p.elsewhere)(`${w.url}/api/v1/agents`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ agent_id: agentId, message: 'Write docs/by-agent.md' }),
  });
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  const events = (await res.text())
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as { type: string; [k: string]: unknown });
  const result = events.find((e) => e.type === 'tool_result');
  t.like(result, { name: 'write', is_error: false }, JSON.stringify(events));
  t.like(events.at(-1), { type: 'done', status: 'succeeded' });
  t.is(llm.requests.length - asked, 2, 'the model was asked twice: the call, then with its result');
  for (const agent of [p.elsewhere, p.home]) t.is((await cat(p.projectId, 'docs/by-agent.md', agent)).body.data.content, '# Written by the agent\n');
});

test.serial('platform sync: a GitHub sync refreshed through the non-owner pulls the repository into the project, and again after a change', async (t) => {
  const p = await placedProject('sync', 'seed.md', 'seed');
  const connected = await w.api('POST', '/oauth/github/token', { token, agent: p.elsewhere, body: { project_id: p.projectId, token: 'github_pat_11AAE2Etest0token0workers' } });
  t.true(connected.status < 300, JSON.stringify(connected.body));
  github.fake.commit({ 'README.md': '# Docs\n', 'guide/intro.md': 'Hello from GitHub\n', 'data/config.json': '{"a": 1}' });
  const boot = await w.api('POST', '/sync/bootstrap', { token, agent: p.elsewhere, body: { project_id: p.projectId, provider: 'github', config: { path: '/gh', owner: 'octo', repo: 'docs', include_issues: false } } });
  t.is(boot.status, 201, JSON.stringify(boot.body));
  const syncId = boot.body.data.sync.id as string;
  const refresh = (agent: Agent): Promise<Answer> => w.api('POST', `/sync/syncs/${syncId}/refresh`, { token, agent });
  const first = await refresh(p.elsewhere);
  t.is(first.status, 200, JSON.stringify(first.body));
  t.like(first.body.data.run, { status: 'succeeded', pulled: { created: 3, updated: 0, deleted: 0 }, error: null });
  for (const agent of [p.elsewhere, p.home]) t.is((await cat(p.projectId, 'gh/guide/intro.md', agent)).body.data.content, 'Hello from GitHub\n');

  github.fake.commit({ 'README.md': '# Docs\n', 'guide/intro.md': 'Hello again\n', 'data/config.json': '{"a": 1}' });
  const second = await refresh(p.elsewhere);
  t.is(second.status, 200, JSON.stringify(second.body));
  t.like(second.body.data.run, { status: 'succeeded', pulled: { created: 0, updated: 1, deleted: 0 } });
  t.is((await cat(p.projectId, 'gh/guide/intro.md', p.home)).body.data.content, 'Hello again\n');
  t.true(github.fake.seen.every((s) => s.headers.authorization === 'Bearer github_pat_11AAE2Etest0token0workers'));
});

/** FakeGithub (GitHub's REST wire format) behind a real HTTP server, which the worker processes reach over the network; `/user` answers the token check. */
async function startFakeGithubServer(): Promise<{ fake: FakeGithub; server: Server; url: string }> {
  const fake = new FakeGithub();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        if (req.url === '/user') {
          res.writeHead(200, { 'content-type': 'application/json', 'x-oauth-scopes': 'repo, read:user' }).end(JSON.stringify({ login: 'octocat', id: 1, type: 'User' }));
          return;
        }
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
        const body = chunks.length && req.method !== 'GET' ? Buffer.concat(chunks) : undefined;
        const [status, text, answerHeaders] = await fake.respond(new Request(`${GITHUB}${req.url}`, { method: req.method, headers, body }));
        res.writeHead(status, answerHeaders).end(text);
      })().catch((err: Error) => res.writeHead(500).end(err.message));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { fake, server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}
