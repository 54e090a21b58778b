import test from 'ava';
// cns-test: its servers bring their own PostgreSQL database
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultProject, createProject } from '../helpers/project.ts';
import { nodesCluster, until, type NodesCluster } from './nodesHarness.ts';

// Three nodes of one cluster in this process, on a NATS JetStream cluster and a PostgreSQL database
// of their own (docs/design/cluster.md §9). The tests share the cluster, each with its own projects.

const run = promisify(execFile);
const started = nodesCluster(test.after.always);
let shared: Promise<NodesCluster> | null = null;
const cluster = () =>
  (shared ??= (async () => {
    const c = await started();
    for (const id of ['n1', 'n2', 'n3']) await c.start(id);
    return c;
  })());


const mainOf = (c: NodesCluster, id: string, project: string) => {
  try {
    return execFileSync('git', [`--git-dir=${join(c.node(id).dataDir, `${project}.git`)}`, 'rev-parse', 'main'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
};

test.serial('through any node: a project is created, written and read; each write is on a majority before it is acknowledged, and every node lists the cluster', async (t) => {
  const c = await cluster();
  const admin = await c.node('n1').login();
  const { orgId } = await defaultProject(c.node('n1'), admin.token);
  const projectId = await createProject(c.node('n2'), admin.token, orgId, 'clustered');
  const placed = await c.node('n3').api('GET', '/cluster', { token: admin.token });
  t.is(placed.status, 200, JSON.stringify(placed.body));
  t.deepEqual(placed.body.data.nodes.map((n: { id: string; state: string }) => [n.id, n.state]), [['n1', 'up'], ['n2', 'up'], ['n3', 'up']]);

  for (const [i, via] of ['n1', 'n2', 'n3', 'n1', 'n2', 'n3'].entries()) {
    const w = await c.node(via).api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: `notes/n${i}.md`, content: `# note ${i}\n`, node_type: 'markdown' } });
    t.true(w.status === 200 || w.status === 201, JSON.stringify(w.body));
    // Acknowledged: the primary (n2, which created it) and at least one other copy hold the commit.
    const tip = mainOf(c, 'n2', projectId);
    t.true(['n1', 'n3'].some((id) => mainOf(c, id, projectId) === tip), `write ${i} through ${via} acknowledged before a replica held it`);
    // Read back through every node: each request runs on the primary, so a client reads its own write anywhere.
    for (const reader of ['n1', 'n2', 'n3']) {
      const r = await c.node(reader).api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(`notes/n${i}.md`)}`, { token: admin.token });
      t.is(r.status, 200, `read through ${reader}: ${JSON.stringify(r.body)}`);
      t.is(r.body.data.content, `# note ${i}\n`);
    }
  }
  // The cluster lists what each node holds: n2 writes the project, and all three hold a copy.
  const held = (await c.node('n1').api('GET', '/cluster', { token: admin.token })).body.data.nodes as { id: string; projects: { primary: number; copies: number } }[];
  t.true(held.find((n) => n.id === 'n2')!.projects.primary >= 1, JSON.stringify(held));
  for (const n of held) t.true(n.projects.copies >= 1, JSON.stringify(held));
  // Every copy reaches the same history, and indexes it alike.
  await until('every copy at the primary’s tip', () => (['n1', 'n3'].every((id) => mainOf(c, id, projectId) === mainOf(c, 'n2', projectId)) ? true : undefined));
  const tree = (id: string) => JSON.stringify(c.node(id).services.content.tree(projectId));
  await until('every index like the primary’s', () => (tree('n1') === tree('n2') && tree('n3') === tree('n2') ? true : undefined));
  t.pass();
});

test.serial('the primary stops: another copy is elected with a new epoch, every acknowledged write is there, and writes go on through any node', async (t) => {
  const c = await cluster();
  const admin = await c.node('n1').login();
  const { orgId } = await defaultProject(c.node('n1'), admin.token);
  const projectId = await createProject(c.node('n3'), admin.token, orgId, 'failover');
  const acknowledged: string[] = [];
  for (let i = 0; i < 5; i++) {
    const w = await c.node('n1').api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: `log/${i}.md`, content: `entry ${i}`, node_type: 'markdown' } });
    t.true(w.status === 200 || w.status === 201, JSON.stringify(w.body));
    acknowledged.push(`log/${i}.md`);
  }
  await c.stop('n3');
  // Writes through n1 are refused (503, retry) until the new primary is elected, then taken.
  const after = await until('a write after the failover', async () => {
    const w = await c.node('n1').api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: 'log/after.md', content: 'after', node_type: 'markdown' } });
    if (w.status === 201) return w;
    t.is(w.status, 503, JSON.stringify(w.body));
    return undefined;
  });
  t.is(after.status, 201);
  acknowledged.push('log/after.md');
  const placement = await c.node('n1').services.node!.placementOf(projectId, true);
  t.is(placement?.epoch, 2);
  t.true(placement?.primary === 'n1' || placement?.primary === 'n2');
  for (const via of ['n1', 'n2']) {
    for (const path of acknowledged) {
      const r = await c.node(via).api('GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token: admin.token });
      t.is(r.status, 200, `${path} through ${via}: ${JSON.stringify(r.body)}`);
    }
  }
  // n3 comes back as a replica of the new epoch: its copy is brought to the primary's tip.
  await c.start('n3');
  const w = await c.node('n3').api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: 'log/back.md', content: 'back', node_type: 'markdown' } });
  t.true(w.status === 200 || w.status === 201, JSON.stringify(w.body));
  await until('n3 caught up', () => (mainOf(c, 'n3', projectId) === mainOf(c, placement!.primary!, projectId) ? true : undefined));
});

test.serial('every surface through a node that is not the primary: MCP, git clone and push, sandbox, search, ingestion', async (t) => {
  const c = await cluster();
  const admin = await c.node('n1').login();
  const { orgId } = await defaultProject(c.node('n1'), admin.token);
  const projectId = await createProject(c.node('n1'), admin.token, orgId, 'surfaces'); // placed on n1
  const via = c.node('n3');
  const seeded = await via.api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: 'docs/seed.md', content: '# Seed\n', node_type: 'markdown' } });
  t.is(seeded.status, 201, JSON.stringify(seeded.body));
  const docsId = (await via.api('GET', `/content/${projectId}/stat?path=docs`, { token: admin.token })).body.data.id as string;

  // MCP: a session opened through n3 runs on the primary, calls included.
  const endpoint = await via.api('POST', '/mcp-endpoints', { token: admin.token, body: { project_id: projectId, node_id: docsId, name: 'docs over mcp', mode: 'read_write' } });
  t.is(endpoint.status, 201, JSON.stringify(endpoint.body));
  const serverPath = new URL(endpoint.body.data.mcp_endpoint.server_url as string).pathname;
  const client = new Client({ name: 'cns-nodes-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(serverPath, via.url), { requestInit: { headers: { Authorization: `Bearer ${endpoint.body.data.key}` } } });
  await client.connect(transport);
  const written = (await client.callTool({ name: 'write', arguments: { path: 'docs/mcp.md', content: '# Over MCP\n' } })) as CallToolResult;
  t.not(written.isError, true, JSON.stringify(written.content));
  const read = (await client.callTool({ name: 'cat', arguments: { path: 'docs/mcp.md' } })) as CallToolResult;
  t.is((read.structuredContent as { content: string }).content, '# Over MCP\n');
  await transport.terminateSession().catch(() => {});
  await client.close();

  // git: clone through n2, push through n3; the pushed file is read through n1.
  const work = mkdtempSync(join(tmpdir(), 'cns-nodes-git-'));
  t.teardown(() => rmSync(work, { recursive: true, force: true }));
  const remote = (n: string) => `${c.node(n).url.replace('://', `://cns:${admin.token}@`)}/git/${projectId}.git`;
  // Asynchronously: the nodes answer from this very process.
  const git = (cwd: string, ...args: string[]) => run('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd });
  await git(work, 'clone', '-q', remote('n2'), 'repo');
  t.is(readFileSync(join(work, 'repo', 'docs', 'mcp.md'), 'utf8'), '# Over MCP\n');
  writeFileSync(join(work, 'repo', 'docs', 'pushed.md'), '# Pushed\n');
  await git(join(work, 'repo'), 'add', '.');
  await git(join(work, 'repo'), 'commit', '-qm', 'pushed file');
  await git(join(work, 'repo'), 'push', '-q', remote('n3'), 'HEAD:main');
  const pushed = await c.node('n1').api('GET', `/content/${projectId}/cat?path=docs/pushed.md`, { token: admin.token });
  t.is(pushed.body.data?.content, '# Pushed\n', JSON.stringify(pushed.body));

  // Sandbox: a command through n2 runs on the primary and writes back.
  const sandbox = await c.node('n2').api('POST', '/sandbox-endpoints/', { token: admin.token, body: { name: 'sbx', project_id: projectId, node_id: docsId, mode: 'read_write' } });
  t.is(sandbox.status, 201, JSON.stringify(sandbox.body));
  const ran = await c.node('n2').api('POST', `/sandbox-endpoints/${sandbox.body.data.sandbox_endpoint.id}/exec`, { token: sandbox.body.data.key, body: { command: 'cat seed.md; printf "made in the sandbox\\n" > made.md' } });
  t.is(ran.status, 200, JSON.stringify(ran.body));
  t.is(ran.body.data.stdout, '# Seed\n');
  t.is((await via.api('GET', `/content/${projectId}/cat?path=docs/made.md`, { token: admin.token })).body.data?.content, 'made in the sandbox\n');

  // Search: a tool created and asked through n3; its index lives with the primary.
  const tool = await via.api('POST', '/tools/search', { token: admin.token, body: { project_id: projectId, name: 'docs', node_id: docsId } });
  t.is(tool.status, 202, JSON.stringify(tool.body));
  await via.api('POST', `/content/${projectId}/write`, { token: admin.token, body: { path: 'docs/fresh.md', content: '# Fresh\n\nThe quokkaquest appears only here.\n', node_type: 'markdown' } });
  await until('the new file found', async () => {
    const r = await via.api('POST', `/tools/${tool.body.data.tool.id}/search`, { token: admin.token, body: { query: 'quokkaquest' } });
    return r.status === 200 && (r.body.data.results as { path: string }[]).some((x) => x.path === 'docs/fresh.md') ? true : undefined;
  });

  // Ingestion: an upload names its project in the address and reaches the primary; one that does not is refused (422), not lost.
  const upload = (query: string) => {
    const form = new FormData();
    form.append('project_id', projectId);
    form.append('path', 'imports');
    form.append('files', new Blob(['Hello ingestion, from another node.\n'], { type: 'text/plain' }), 'hello.txt');
    return fetch(`${via.url}/api/v1/ingest/submit/file${query}`, { method: 'POST', headers: { authorization: `Bearer ${admin.token}` }, body: form });
  };
  const refused = await upload('');
  t.is(refused.status, 422, await refused.text());
  const accepted = await upload(`?project_id=${projectId}`);
  const body = (await accepted.json()) as { data: { tasks: { id: string }[] } };
  t.is(accepted.status, 202, JSON.stringify(body));
  const task = await until('the task finished', async () => {
    const r = await via.api('GET', `/ingest/tasks/${body.data.tasks[0]!.id}`, { token: admin.token });
    return ['succeeded', 'failed', 'cancelled'].includes(r.body.data?.status) ? r.body.data : undefined;
  });
  t.is(task.status, 'succeeded', JSON.stringify(task));
});

test.serial('a deleted project leaves every node: the other copies go at once, and a node that was away drops its copy when it starts', async (t) => {
  const c = await cluster();
  const admin = await c.node('n1').login();
  const { orgId } = await defaultProject(c.node('n1'), admin.token);
  const atOnce = await createProject(c.node('n1'), admin.token, orgId, 'deleted at once');
  const later = await createProject(c.node('n1'), admin.token, orgId, 'deleted while n3 is away');
  for (const p of [atOnce, later]) {
    const w = await c.node('n2').api('POST', `/content/${p}/write`, { token: admin.token, body: { path: 'a.md', content: 'a', node_type: 'markdown' } });
    t.is(w.status, 201, JSON.stringify(w.body));
  }
  const ids = ['n1', 'n2', 'n3'];
  await until('every node holds both projects', () => (ids.every((id) => mainOf(c, id, atOnce) && mainOf(c, id, later) === mainOf(c, 'n1', later)) ? true : undefined));
  const repo = (dir: string, p: string) => join(dir, `${p}.git`);
  const dirs = Object.fromEntries(ids.map((id) => [id, c.node(id).dataDir]));

  // Through a node that is not the primary (n1): forwarded there, and every copy goes.
  t.is((await c.node('n2').api('DELETE', `/projects/${atOnce}`, { token: admin.token })).status, 200);
  await until('every copy of the deleted project removed', () => (ids.every((id) => !existsSync(repo(dirs[id]!, atOnce))) ? true : undefined)).catch((e) => { t.log(ids.map((id) => id + ':' + existsSync(repo(dirs[id]!, atOnce)))); throw e; });
  t.is((await c.node('n3').api('GET', `/content/${atOnce}/tree`, { token: admin.token })).status, 404);

  await c.stop('n3');
  t.is((await c.node('n2').api('DELETE', `/projects/${later}`, { token: admin.token })).status, 200);
  await until('the live copies removed', () => (['n1', 'n2'].every((id) => !existsSync(repo(dirs[id]!, later))) ? true : undefined));
  t.true(existsSync(repo(dirs.n3!, later)), 'n3 was away: its copy is still on its disk');
  await c.start('n3');
  await until('n3 dropped its copy at its start', () => (!existsSync(repo(dirs.n3!, later)) ? true : undefined));
  // Nothing placed it again.
  t.is(await c.node('n3').services.node!.placements.get(later), null);
});
