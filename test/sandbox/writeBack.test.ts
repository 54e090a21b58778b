import test from 'ava';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { actingThrough, boundToolReach } from '../../src/agents/tools/reach.ts';
import { unstoredTool } from '../../src/tools/unstoredTool.ts';
import { addMember, createAgent } from '../agents/helpers.ts';
import { contentApi, defaultProject, type ContentCall } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { holdWriter, until } from '../helpers/writerHold.ts';
import { HOLD, heldWorkspace } from './heldCommand.ts';
import { leavesNoHostMounts } from '../helpers/hostMounts.ts';

leavesNoHostMounts(test);

// A command's write-back is merged against the tip inside the project's serialized section, and
// asks the policy again there: the principal as it stands when the changes are written.

let server: TestServer;
let token: string;
let projectId: string;
let c: ContentCall;
let workId: string;

test.before(async () => {
  server = await startTestServer({}, { CNS_SANDBOX: 'bwrap' });
  ({ token } = await server.login());
  ({ projectId } = await defaultProject(server, token));
  c = contentApi(server, token, projectId);
  await c('POST', '/write', { path: 'work/notes.md', node_type: 'markdown', content: 'notes\n' });
  workId = server.services.content.findByPath(projectId, 'work')!.id;
});

test.after.always(async () => server?.stop());

const lines = (...l: string[]) => l.join('\n') + '\n';
const version = () => server.services.content.projectVersion(projectId);
const held = () => heldWorkspace(server.services.sandbox.pool);
const go = (ws: string) => writeFile(join(ws, 'go'), '');
const exec = (id: string, body: Record<string, unknown>, credential = token) => server.api('POST', `/sandbox-endpoints/${id}/exec`, { token: credential, body });

async function endpoint(name: string) {
  const r = await server.api('POST', '/sandbox-endpoints/', { token, body: { name, project_id: projectId, node_id: workId } });
  if (r.status !== 201) throw new Error(`create failed: ${r.status} ${JSON.stringify(r.body)}`);
  return { id: r.body.data.sandbox_endpoint.id as string, key: r.body.data.key as string };
}

test.serial('a write-back racing live writes to the same file: merged with the one before, built on by the one after, each in history', async (t) => {
  const content = server.services.content;
  await c('POST', '/write', { path: 'work/race.md', node_type: 'markdown', content: lines('a', 'b', 'c', 'd', 'e') });
  const node = content.findByPath(projectId, 'work/race.md')!;
  const e = await endpoint('racer');
  const running = exec(e.id, { command: `sed -i 's/^e$/E/' race.md; ${HOLD}`, timeout_s: 20 }, e.key);
  const ws = await held();
  const start = version();
  const hold = await holdWriter(content, projectId);
  let before, after;
  try {
    before = c('POST', '/write', { path: 'work/race.md', node_type: 'markdown', content: lines('A', 'b', 'c', 'd', 'e') });
    await until('the first live write to be queued', () => hold.commits === 1);
    await go(ws);
    await until('the write-back to be queued', () => hold.planned === 1);
    after = c('POST', '/write', { path: 'work/race.md', node_type: 'markdown', content: lines('A', 'b', 'C', 'd', 'E'), base_version: node.version + 2 });
    await until('the last live write to be queued', () => hold.commits === 2);
  } finally {
    await hold.release();
  }
  const [b, r, a] = await Promise.all([before, running, after]);
  t.is(b.status, 200, JSON.stringify(b.body));
  t.is(r.status, 200, JSON.stringify(r.body));
  t.is(a.status, 200, JSON.stringify(a.body));
  t.deepEqual(r.body.data.conflicts, []);
  t.deepEqual(r.body.data.changes, [{ path: 'work/race.md', action: 'modified', type: 'markdown', merged: true }]);
  const first = content.getVersion(projectId, { id: node.id }, node.version + 1);
  t.deepEqual(hold.planTips, [first.commitId], 'planned once, against the tip the first write made');
  t.is(r.body.data.version, first.projectVersion + 1);
  const at = async (v: number) => (await content.versionContent(projectId, { id: node.id }, v)).bytes.toString('utf8');
  t.is(await at(node.version + 2), lines('A', 'b', 'c', 'd', 'E'), 'the write-back holds both changes');
  t.like(content.getVersion(projectId, { id: node.id }, node.version + 2), { actorType: 'agent', actorId: e.id });
  t.is(await at(node.version + 3), lines('A', 'b', 'C', 'd', 'E'));
  t.deepEqual(content.commitsAfter(projectId, start, 10).map((x) => x.projectVersion), [start + 1, start + 2, start + 3]);
});

test.serial("an endpoint's key revoked while its command runs: nothing is written, the exec answers 401 saying why", async (t) => {
  const e = await endpoint('revoked');
  const running = exec(e.id, { command: `echo made > made-revoked.md; sed -i s/notes/NOTES/ notes.md; ${HOLD}`, timeout_s: 20 }, e.key);
  const ws = await held();
  const revoked = await server.api('PATCH', `/connections/${e.id}`, { token, body: { status: 'revoked' } });
  t.is(revoked.status, 200, JSON.stringify(revoked.body));
  const before = version();
  await go(ws);
  const r = await running;
  t.is(r.status, 401, JSON.stringify(r.body));
  t.is(r.body.error.code, 'UNAUTHORIZED');
  t.regex(r.body.message, /no longer exists or was revoked; nothing more is written/);
  t.is(version(), before, 'nothing was written');
  t.is(server.services.content.findByPath(projectId, 'work/made-revoked.md'), null);
  t.is((await c('GET', '/cat?path=work/notes.md')).body.data.content, 'notes\n');
});

test.serial('an endpoint made read-only while its command runs: nothing is written, 403 as the route would answer', async (t) => {
  const e = await endpoint('narrowed');
  const running = exec(e.id, { command: `echo made > made-read.md; ${HOLD}`, timeout_s: 20 }, e.key);
  const ws = await held();
  t.is((await server.api('PUT', `/sandbox-endpoints/${e.id}`, { token, body: { mode: 'read' } })).status, 200);
  const before = version();
  await go(ws);
  const r = await running;
  t.is(r.status, 403, JSON.stringify(r.body));
  t.is(r.body.message, 'This access key is read-only.');
  t.is(version(), before);
  t.is(server.services.content.findByPath(projectId, 'work/made-read.md'), null);
});

test.serial("a user whose role is lowered while the command runs: nothing is written, 403 naming the role", async (t) => {
  const e = await endpoint('by-user');
  const editor = await addMember(server, token, projectId, 'sbx-editor', 'editor');
  const running = exec(e.id, { command: `echo made > made-user.md; ${HOLD}`, timeout_s: 20 }, editor.token);
  const ws = await held();
  t.is((await server.api('PUT', `/projects/${projectId}/members/${editor.id}/role`, { token, body: { role: 'viewer' } })).status, 200);
  const before = version();
  await go(ws);
  const r = await running;
  t.is(r.status, 403, JSON.stringify(r.body));
  t.regex(r.body.message, /Your role \(viewer\) on this project does not allow content:write/);
  t.is(version(), before);
  t.is(server.services.content.findByPath(projectId, 'work/made-user.md'), null);
});

test.serial("an agent's shell writes through its bash tool as it stands when the changes are written", async (t) => {
  const agent = await createAgent(server, token, projectId, { name: 'sbx-agent' });
  const bash = await server.api('POST', `/agent-config/${agent.id}/bash`, { token, body: { node_id: workId, mode: 'read_write' } });
  t.is(bash.status, 201, JSON.stringify(bash.body));
  const bashId = bash.body.data.id as string;
  const principal = actingThrough((await server.services.connections.find(agent.id))!, { id: bashId, path: 'work', mode: 'read_write' });
  const shell = unstoredTool({ id: `${agent.id}:${bashId}:shell`, projectId, nodeId: workId, type: 'shell', config: { writable: true }, at: new Date().toISOString() });
  const run = (command: string) => server.services.tools.tools.call(principal, shell, { command, timeout_s: 20 }) as Promise<{ version: number | null; changes: unknown[] }>;

  // As it stands: the write-back is a version by the agent.
  const written = await run('echo by-agent > agent.md');
  t.truthy(written.version);
  t.like(server.services.content.getVersion(projectId, { path: 'work/agent.md' }, 1), { actorType: 'agent', actorId: agent.id });

  // Made read-only while the command runs: nothing is written.
  const running = run(`echo late > agent-late.md; ${HOLD}`);
  const ws = await held();
  t.is((await server.api('PUT', `/agent-config/${agent.id}/bash/${bashId}`, { token, body: { mode: 'read' } })).status, 200);
  const before = version();
  await go(ws);
  await t.throwsAsync(running, { message: 'This access key is read-only.' });
  t.is(version(), before);
  t.is(server.services.content.findByPath(projectId, 'work/agent-late.md'), null);

  // Taken away while the command runs: nothing is written either.
  t.is((await server.api('PUT', `/agent-config/${agent.id}/bash/${bashId}`, { token, body: { mode: 'read_write' } })).status, 200);
  const again = run(`echo gone > agent-gone.md; ${HOLD}`);
  const ws2 = await held();
  t.is((await server.api('DELETE', `/agent-config/${agent.id}/bash/${bashId}`, { token })).status, 200);
  await go(ws2);
  await t.throwsAsync(again, { message: /was taken away; nothing more is written/ });
  t.is(server.services.content.findByPath(projectId, 'work/agent-gone.md'), null);
});

test.serial("a shell tool bound to an agent writes through the binding as it stands when the changes are written", async (t) => {
  const agent = await createAgent(server, token, projectId, { name: 'sbx-bound' });
  const tool = await server.api('POST', '/tools/', { token, body: { name: 'sh-bound', project_id: projectId, node_id: workId, type: 'shell', config: { writable: true } } });
  t.is(tool.status, 201, JSON.stringify(tool.body));
  const bound = await server.api('POST', `/mcp/agents/${agent.id}/tools`, { token, body: { tool_id: tool.body.data.id } });
  t.is(bound.status, 201, JSON.stringify(bound.body));
  const b = (await server.services.agents.bindings.boundTools(agent.id))[0]!;
  const principal = actingThrough((await server.services.connections.find(agent.id))!, boundToolReach(b.binding, b.tool, 'work'));
  const run = (command: string) => server.services.tools.tools.call(principal, b.tool, { command, timeout_s: 20 }) as Promise<{ version: number | null }>;

  t.truthy((await run('echo bound > bound.md')).version);
  t.like(server.services.content.getVersion(projectId, { path: 'work/bound.md' }, 1), { actorType: 'agent', actorId: agent.id });

  // Unbound while the command runs: nothing is written.
  const running = run(`echo late > bound-late.md; ${HOLD}`);
  const ws = await held();
  t.is((await server.api('DELETE', `/mcp/agents/${agent.id}/tools/${b.tool.id}`, { token })).status, 200);
  const before = version();
  await go(ws);
  await t.throwsAsync(running, { message: /was taken away; nothing more is written/ });
  t.is(version(), before);
  t.is(server.services.content.findByPath(projectId, 'work/bound-late.md'), null);
});
