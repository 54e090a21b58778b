import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { actingThrough } from '../../src/agents/tools/reach.ts';
import type { WorkspaceContent } from '../../src/agents/workspaces/workspaceContent.ts';
import type { Principal } from '../../src/auth/principal.ts';
import { DEFAULT_LIMITS } from '../../src/sandbox/limits.ts';
import { unstoredTool } from '../../src/tools/unstoredTool.ts';
import { contentApi, defaultProject, type ContentCall } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { holdWriter, until } from '../helpers/writerHold.ts';
import { addMember, createAgent, documented, nodeAt } from './helpers.ts';

let server: TestServer;
let token: string;
let projectId: string;
let c: ContentCall;
let docsId: string;
let check: ReturnType<typeof documented>;

test.before(async () => {
  server = await startTestServer();
  ({ token } = await server.login());
  ({ projectId } = await defaultProject(server, token));
  c = contentApi(server, token, projectId);
  await seed(c);
  docsId = nodeAt(server, projectId, 'docs');
  check = documented(server);
});

test.after.always(async () => server?.stop());

async function seed(call: ContentCall) {
  for (const [path, node_type, content] of [
    ['docs/notes.md', 'markdown', 'line one\nline two\nline three\nline four\nline five\n'],
    ['docs/data.json', 'json', { a: 1, b: { c: 2 }, keep: true }],
    ['docs/old.md', 'markdown', 'to be removed\n'],
    ['docs/sub/deep.md', 'markdown', 'deep\n'],
    ['other/secret.md', 'markdown', 'not in the workspace\n'],
  ] as const) {
    const r = await call('POST', '/write', { path, node_type, content });
    if (r.status !== 200 && r.status !== 201) throw new Error(`seed ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  }
}

/** An agent with read_write on docs and read on other; its access ids. */
async function agentWithAccesses(s: TestServer, tok: string, pid: string, name: string) {
  const agent = await createAgent(s, tok, pid, { name });
  const add = async (path: string, mode: string) => {
    const r = await s.api('POST', `/agent-config/${agent.id}/accesses`, { token: tok, body: { node_id: nodeAt(s, pid, path), mode } });
    if (r.status !== 201) throw new Error(`access: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body.data.id as string;
  };
  return { ...agent, docsAccess: await add('docs', 'read_write'), otherAccess: await add('other', 'read') };
}

/** The agent acting through its docs access, as the chat loop makes it. */
async function agentPrincipal(s: TestServer, agentId: string, accessId: string): Promise<Principal> {
  return actingThrough((await s.services.connections.find(agentId))!, { id: accessId, path: 'docs', mode: 'read_write' });
}

/** Runs a library tool type bound to docs over the workspace, as the agent. */
function toolOver(s: TestServer, ws: WorkspaceContent, principal: Principal, nodeId: string) {
  return (type: string, args: Record<string, unknown>) =>
    s.services.tools.tools.call(principal, unstoredTool({ id: `t-${type}`, projectId: ws.projectId, nodeId, type, at: new Date().toISOString() }), args, { content: ws }) as Promise<
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      any
    >;
}

const open = (agentId: string, tok = token) => server.api('POST', '/workspace/create', { token: tok, body: { agent_id: agentId } });
const status = (agentId: string, tok = token) => server.api('GET', `/workspace/${agentId}/status`, { token: tok });
const liveText = async (path: string) => (await server.services.content.readContent(projectId, { path })).bytes.toString('utf8');
const version = () => server.services.content.projectVersion(projectId);

test.serial('a workspace is opened once per agent over its read_write accesses; who may open it', async (t) => {
  const a = await agentWithAccesses(server, token, projectId, 'opener');
  const before = version();
  const r = await open(a.id);
  t.is(r.status, 201, JSON.stringify(r.body));
  t.like(r.body.data, { agent_id: a.id, project_id: projectId, base_version: before });
  t.deepEqual(r.body.data.roots, ['docs'], 'only the read_write access is a root');
  check(t, 'post', '/workspace/create', r);
  const again = await open(a.id);
  t.is(again.status, 409);
  t.is(version(), before, 'opening writes no content');

  const readOnly = await createAgent(server, token, projectId, { name: 'reader' });
  await server.api('POST', `/agent-config/${readOnly.id}/accesses`, { token, body: { node_id: docsId, mode: 'read' } });
  const none = await open(readOnly.id);
  t.is(none.status, 422, JSON.stringify(none.body));

  const viewer = await addMember(server, token, projectId, 'viewer', 'viewer');
  const other = await agentWithAccesses(server, token, projectId, 'guarded');
  t.is((await open(other.id, viewer.token)).status, 403, 'a viewer may not open a workspace');
  t.is((await status(a.id, viewer.token)).status, 200, 'a viewer may read its status');
  t.is((await server.api('DELETE', `/workspace/${a.id}`, { token: viewer.token })).status, 403);
  const outsider = await server.createUser(`outsider-${process.pid}@example.com`);
  t.is((await open(other.id, outsider.token)).status, 404, 'an agent the caller cannot see is not found');
  t.is((await status(a.id, outsider.token)).status, 404);
  t.is((await open('con_doesnotexist')).status, 404);
  t.is((await open(other.id, a.key)).status, 404, "another agent's key does not see this agent");
  t.is((await status(a.id, a.key)).status, 200, 'the agent reads its own workspace');
  t.is((await server.api('POST', '/workspace/create', { token, body: { agent_id: other.id, extra: 1 } })).status, 422, 'an unknown field is refused');
  t.is((await server.api('DELETE', `/workspace/${a.id}`, { token })).status, 200);
});

test.serial('the library tools run over the draft: writes stay in it, reads, listings and trees show it', async (t) => {
  const a = await agentWithAccesses(server, token, projectId, 'drafter');
  t.is((await open(a.id)).status, 201);
  const ws = (await server.services.agents.workspaces.find(a.id))!;
  t.truthy(ws);
  const principal = (await agentPrincipal(server, a.id, a.docsAccess));
  const tool = toolOver(server, ws, principal, docsId);
  const before = version();
  const liveNotes = server.services.content.findByPath(projectId, 'docs/notes.md')!;

  const w = await tool('write', { path: 'notes.md', content: 'line ONE\nline two\nline three\nline four\nline five\n' });
  t.like(w, { id: liveNotes.id, path: 'docs/notes.md', version: liveNotes.version + 1, changed: true, project_version: null });
  const created = await tool('write', { path: 'new/idea.md', content: 'an idea\n' });
  t.like(created, { id: 'draft:docs/new/idea.md', version: 1, changed: true });
  await tool('write', { path: 'data.json', content: { a: 5, b: { c: 2 }, keep: true } });
  const same = await tool('write', { path: 'data.json', content: { a: 5, b: { c: 2 }, keep: true } });
  t.false(same.changed, 'the same content again changes nothing');

  t.is(version(), before, 'the live content did not change');
  t.is(await liveText('docs/notes.md'), 'line one\nline two\nline three\nline four\nline five\n');
  t.is(server.services.content.findByPath(projectId, 'docs/new'), null);

  t.is((await tool('cat', { path: 'notes.md' })).content, 'line ONE\nline two\nline three\nline four\nline five\n');
  t.deepEqual((await tool('cat', { path: 'data.json' })).content, { a: 5, b: { c: 2 }, keep: true });
  t.is((await tool('query_json', { path: 'data.json', pointer: '/a' })).result, 5);
  const ls = await tool('ls', {});
  t.deepEqual(
    ls.children.map((n: { name: string; type: string }) => `${n.type}:${n.name}`),
    ['folder:new', 'folder:sub', 'json:data.json', 'markdown:notes.md', 'markdown:old.md'],
  );
  const tree = await tool('tree', {});
  const newFolder = tree.children.find((n: { name: string }) => n.name === 'new');
  t.deepEqual(newFolder.children.map((n: { path: string }) => n.path), ['docs/new/idea.md']);
  t.deepEqual(tree.children.find((n: { name: string }) => n.name === 'sub').children.map((n: { path: string }) => n.path), ['docs/sub/deep.md'], 'untouched subtrees are the live ones');

  // The draft's version is what base_version checks; a stale one is a conflict, a write outside the roots is refused.
  await t.throwsAsync(tool('write', { path: 'notes.md', content: 'x', base_version: liveNotes.version }), { message: /is at version/ });
  await t.throwsAsync(tool('write', { path: 'new/idea.md', content: 'x', base_version: 0 }), { message: /new\/idea\.md is at version 1, not 0/ });
  t.like(await tool('write', { path: 'new/idea.md', content: 'an idea, refined\n', base_version: 1 }), { changed: true });
  await t.throwsAsync(tool('write', { path: 'notes.md/inside.md', content: 'x' }), { message: /is a file, not a folder/ });
  const agentActor = { type: 'agent' as const, id: a.id, author: `agent:${a.agent.name}` };
  await t.throwsAsync(ws.write(projectId, agentActor, { path: 'other/x.md', type: 'markdown', content: 'x' }), { message: /outside this agent's workspace/ });
  await t.throwsAsync(ws.write(projectId, agentActor, { path: 'docs/big.md', type: 'markdown', content: 'x'.repeat(server.services.content.maxContentBytes + 1) }), { message: /larger than/ });
  t.is(version(), before);

  // findById follows the draft: the draft-only node is found, a live node shows its draft.
  t.is(ws.findById('draft:docs/new/idea.md')?.path, 'docs/new/idea.md');
  t.is(ws.findById(liveNotes.id)?.version, liveNotes.version + 1);
  await server.api('DELETE', `/workspace/${a.id}`, { token });
});

test.serial('a bash run sees the draft and its changes land in the draft, not in the live content', async (t) => {
  const a = await agentWithAccesses(server, token, projectId, 'basher');
  t.is((await open(a.id)).status, 201);
  const ws = (await server.services.agents.workspaces.find(a.id))!;
  const principal = (await agentPrincipal(server, a.id, a.docsAccess));
  const tool = toolOver(server, ws, principal, docsId);
  await tool('write', { path: 'new/idea.md', content: 'first idea\n' });
  const before = version();
  const grant = await server.services.access.grant(principal, projectId, 'content:write');
  const r = await ws.exec({
    grant,
    scope: 'docs',
    mode: 'read_write',
    command: 'cat new/idea.md; rm old.md; echo made > made.txt; sed -i s/first/second/ new/idea.md; rm -r sub',
    timeoutS: 30,
    limits: DEFAULT_LIMITS,
  });
  t.is(r.exit_code, 0, r.stderr);
  t.is(r.stdout, 'first idea\n', 'the command saw the draft');
  t.is(r.version, null);
  t.deepEqual(
    r.changes.map((x) => `${x.action}:${x.path}`),
    ['created:docs/made.txt', 'modified:docs/new/idea.md', 'deleted:docs/old.md', 'deleted:docs/sub'],
  );
  t.is(version(), before, 'nothing was written live');
  t.truthy(server.services.content.findByPath(projectId, 'docs/old.md'));
  t.is((await tool('cat', { path: 'new/idea.md' })).content, 'second idea\n');
  t.is((await tool('cat', { path: 'made.txt' })).content, 'made\n');
  await t.throwsAsync(tool('cat', { path: 'old.md' }), { message: /no node/ });
  t.deepEqual((await tool('ls', {})).children.map((n: { name: string }) => n.name), ['new', 'data.json', 'made.txt', 'notes.md']);

  // A second run starts from the draft the first one left.
  const again = await ws.exec({ grant, scope: 'docs', mode: 'read_write', command: 'ls -R | sort | tr "\\n" " "; cat made.txt', timeoutS: 30, limits: DEFAULT_LIMITS });
  t.regex(again.stdout, /made\.txt/);
  t.notRegex(again.stdout, /old\.md|deep\.md/);
  t.deepEqual(again.changes, [], 'a run that changes nothing leaves the draft as it was');
  const readGrant = await server.services.access.grant(principal, projectId, 'content:read');
  const looked = await ws.exec({ grant: readGrant, scope: 'docs', mode: 'read', command: 'cat made.txt; echo x > more.txt', timeoutS: 30, limits: DEFAULT_LIMITS });
  t.is(looked.stdout, 'made\n', 'a read run sees the draft too');
  t.not(looked.exit_code, 0, 'its folder is read-only');
  t.deepEqual(looked.changes, []);
  await t.throwsAsync(ws.exec({ grant, scope: '', mode: 'read_write', command: 'true', timeoutS: 30, limits: DEFAULT_LIMITS }), { message: /outside this agent's workspace/ });
  // Writing beneath the folder the run deleted brings the folder back with only that file.
  await tool('write', { path: 'sub/fresh.md', content: 'fresh\n' });
  t.deepEqual((await tool('ls', { path: 'sub' })).children.map((n: { name: string }) => n.name), ['fresh.md']);

  const st = await status(a.id);
  t.is(st.status, 200);
  t.deepEqual(
    st.body.data.changes.map((x: { action: string; path: string }) => `${x.action}:${x.path}`),
    ['created:docs/made.txt', 'created:docs/new/idea.md', 'deleted:docs/old.md', 'deleted:docs/sub/deep.md', 'created:docs/sub/fresh.md'],
  );
  check(t, 'get', '/workspace/{agent_id}/status', st);
  await server.api('DELETE', `/workspace/${a.id}`, { token });
});

test.serial('status diffs each drafted path against its base; complete merges a concurrent live edit into ONE commit by the agent', async (t) => {
  const a = await agentWithAccesses(server, token, projectId, 'completer');
  t.is((await open(a.id)).status, 201);
  const ws = (await server.services.agents.workspaces.find(a.id))!;
  const principal = (await agentPrincipal(server, a.id, a.docsAccess));
  const tool = toolOver(server, ws, principal, docsId);
  const notesBase = server.services.content.findByPath(projectId, 'docs/notes.md')!.version;
  await tool('write', { path: 'notes.md', content: 'line ONE\nline two\nline three\nline four\nline five\n' });
  await tool('write', { path: 'data.json', content: { a: 7, b: { c: 2 }, keep: true } });
  await tool('write', { path: 'plan.md', content: 'a plan\n' });
  const grant = await server.services.access.grant(principal, projectId, 'content:write');
  const rm = await ws.exec({ grant, scope: 'docs', mode: 'read_write', command: 'rm old.md', timeoutS: 30, limits: DEFAULT_LIMITS });
  t.is(rm.exit_code, 0, rm.stderr);

  const st = await status(a.id);
  t.is(st.status, 200);
  const byPath = Object.fromEntries(st.body.data.changes.map((x: { path: string }) => [x.path, x]));
  t.like(byPath['docs/notes.md'], { action: 'updated', type: 'markdown', base_version: notesBase, live_version: notesBase });
  t.is(byPath['docs/notes.md'].diff.kind, 'text');
  t.regex(byPath['docs/notes.md'].diff.unified_diff, /-line one\n\+line ONE/);
  t.is(byPath['docs/data.json'].diff.kind, 'json');
  t.deepEqual(byPath['docs/data.json'].diff.json_patch, [{ op: 'replace', path: '/a', value: 7 }]);
  t.like(byPath['docs/plan.md'], { action: 'created', base_version: null, live_version: null });
  t.regex(byPath['docs/plan.md'].diff.unified_diff, /\+a plan/);
  t.like(byPath['docs/old.md'], { action: 'deleted', type: 'markdown' });
  t.regex(byPath['docs/old.md'].diff.unified_diff, /-to be removed/);

  // Someone edits another line of notes.md live meanwhile.
  const live = await c('POST', '/write', { path: 'docs/notes.md', node_type: 'markdown', content: 'line one\nline two\nline three\nline four\nline FIVE\n' });
  t.is(live.status, 200);
  t.is((await status(a.id)).body.data.changes.find((x: { path: string }) => x.path === 'docs/notes.md').live_version, notesBase + 1);
  const before = version();
  const done = await server.api('POST', `/workspace/${a.id}/complete`, { token, body: { message: 'apply the plan' } });
  t.is(done.status, 200, JSON.stringify(done.body));
  check(t, 'post', '/workspace/{agent_id}/complete', done);
  t.is(done.body.data.version, before + 1, 'one commit');
  t.deepEqual(
    done.body.data.changes.map((x: { action: string; path: string; merged: boolean }) => `${x.action}:${x.path}:${x.merged}`),
    ['deleted:docs/old.md:false', 'updated:docs/data.json:false', 'updated:docs/notes.md:true', 'created:docs/plan.md:false'],
  );
  t.is(await liveText('docs/notes.md'), 'line ONE\nline two\nline three\nline four\nline FIVE\n', 'both edits are in');
  t.deepEqual(JSON.parse(await liveText('docs/data.json')), { a: 7, b: { c: 2 }, keep: true });
  t.is(await liveText('docs/plan.md'), 'a plan\n');
  t.is(server.services.content.findByPath(projectId, 'docs/old.md'), null, 'the deleted file went to the trash');
  const commits = server.services.content.changesBetween(projectId, before, version());
  t.is(new Set(commits.map((x) => x.projectVersion)).size, 1);
  t.true(commits.every((x) => x.actor.type === 'agent' && x.actor.id === a.id), JSON.stringify(commits.map((x) => x.actor)));
  const v = server.services.content.getVersion(projectId, { path: 'docs/plan.md' }, 1);
  t.like(v, { actorType: 'agent', actorId: a.id, author: 'agent:completer', message: 'apply the plan' });
  t.is((await status(a.id)).status, 404, 'the workspace is closed');
  t.is(await server.services.agents.workspaces.find(a.id), null);

  // An empty workspace completes with nothing written.
  t.is((await open(a.id)).status, 201);
  const empty = await server.api('POST', `/workspace/${a.id}/complete`, { token });
  t.is(empty.status, 200);
  t.deepEqual(empty.body.data, { version: null, changes: [] });
  t.is(version(), before + 1);
});

test.serial('an overlapping live edit is a conflict: 409 with the regions, nothing written, the workspace kept; then discarded', async (t) => {
  const a = await agentWithAccesses(server, token, projectId, 'conflicted');
  t.is((await open(a.id)).status, 201);
  const ws = (await server.services.agents.workspaces.find(a.id))!;
  const tool = toolOver(server, ws, (await agentPrincipal(server, a.id, a.docsAccess)), docsId);
  const text = await liveText('docs/notes.md');
  await tool('write', { path: 'notes.md', content: text.replace('line two', 'line two, by the agent') });
  await tool('write', { path: 'fine.md', content: 'no conflict here\n' });
  await c('POST', '/write', { path: 'docs/notes.md', node_type: 'markdown', content: text.replace('line two', 'line two, by a person') });
  const before = version();
  const r = await server.api('POST', `/workspace/${a.id}/complete`, { token });
  t.is(r.status, 409, JSON.stringify(r.body));
  const conflicts = r.body.error.details.conflicts;
  t.is(conflicts.length, 1);
  t.like(conflicts[0], { path: 'docs/notes.md', kind: 'text', type: 'markdown' });
  t.deepEqual(conflicts[0].regions[0].current.lines, ['line two, by a person']);
  t.deepEqual(conflicts[0].regions[0].incoming.lines, ['line two, by the agent']);
  t.is(version(), before, 'nothing was written');
  t.is(server.services.content.findByPath(projectId, 'docs/fine.md'), null);
  t.is((await status(a.id)).status, 200, 'the workspace is kept');

  const gone = await server.api('DELETE', `/workspace/${a.id}`, { token });
  t.is(gone.status, 200);
  check(t, 'delete', '/workspace/{agent_id}', gone);
  t.is((await status(a.id)).status, 404);
  t.is((await server.api('DELETE', `/workspace/${a.id}`, { token })).status, 404);
  t.is(version(), before);
});

test.serial('a completion racing live writes to the same file: merged with the one before, built on by the one after, each in history', async (t) => {
  const content = server.services.content;
  const lines = (...l: string[]) => l.join('\n') + '\n';
  t.is((await c('POST', '/write', { path: 'docs/race.md', node_type: 'markdown', content: lines('a', 'b', 'c', 'd', 'e') })).status, 201);
  const a = await agentWithAccesses(server, token, projectId, 'racer');
  t.is((await open(a.id)).status, 201);
  const ws = (await server.services.agents.workspaces.find(a.id))!;
  await toolOver(server, ws, (await agentPrincipal(server, a.id, a.docsAccess)), docsId)('write', { path: 'race.md', content: lines('a', 'b', 'c', 'd', 'E') });
  const node = content.findByPath(projectId, 'docs/race.md')!;
  const start = version();
  const hold = await holdWriter(content, projectId);
  let before, done, after;
  try {
    before = c('POST', '/write', { path: 'docs/race.md', node_type: 'markdown', content: lines('A', 'b', 'c', 'd', 'e') });
    await until('the first live write to be queued', () => hold.commits === 1);
    done = server.api('POST', `/workspace/${a.id}/complete`, { token, body: { message: 'the agent ends it' } });
    await until('the completion to be queued', () => hold.planned === 1);
    after = c('POST', '/write', { path: 'docs/race.md', node_type: 'markdown', content: lines('A', 'b', 'C', 'd', 'E'), base_version: node.version + 2 });
    await until('the last live write to be queued', () => hold.commits === 2);
  } finally {
    await hold.release();
  }
  const [b, d, l] = await Promise.all([before, done, after]);
  t.is(b.status, 200, JSON.stringify(b.body));
  t.is(d.status, 200, JSON.stringify(d.body));
  t.is(l.status, 200, JSON.stringify(l.body));
  t.deepEqual(d.body.data.changes, [{ path: 'docs/race.md', action: 'updated', type: 'markdown', merged: true }]);
  const first = content.getVersion(projectId, { id: node.id }, node.version + 1);
  t.deepEqual(hold.planTips, [first.commitId], 'planned once, against the tip the first write made');
  t.is(d.body.data.version, first.projectVersion + 1);
  const at = async (v: number) => (await content.versionContent(projectId, { id: node.id }, v)).bytes.toString('utf8');
  t.is(await at(node.version + 2), lines('A', 'b', 'c', 'd', 'E'), 'the completion holds both changes');
  t.like(content.getVersion(projectId, { id: node.id }, node.version + 2), { actorType: 'agent', actorId: a.id, message: 'the agent ends it' });
  t.is(await at(node.version + 3), lines('A', 'b', 'C', 'd', 'E'));
  t.deepEqual(content.commitsAfter(projectId, start, 10).map((x) => x.projectVersion), [start + 1, start + 2, start + 3]);
});

test('a workspace survives a restart of the server', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-ws-restart-'));
  let s = await startTestServer({ dataDir });
  try {
    const { token: tok } = await s.login();
    const { projectId: pid } = await defaultProject(s, tok);
    await seed(contentApi(s, tok, pid));
    const a = await agentWithAccesses(s, tok, pid, 'durable');
    t.is((await s.api('POST', '/workspace/create', { token: tok, body: { agent_id: a.id } })).status, 201);
    const ws = (await s.services.agents.workspaces.find(a.id))!;
    await toolOver(s, ws, (await agentPrincipal(s, a.id, a.docsAccess)), nodeAt(s, pid, 'docs'))('write', { path: 'kept.md', content: 'kept across restarts\n' });
    await s.stop();
    s = await startTestServer({ dataDir });
    const tok2 = (await s.login()).token;
    const st = await s.api('GET', `/workspace/${a.id}/status`, { token: tok2 });
    t.is(st.status, 200);
    t.deepEqual(st.body.data.changes.map((x: { path: string }) => x.path), ['docs/kept.md']);
    const again = (await s.services.agents.workspaces.find(a.id))!;
    t.is((await again.readContent(pid, { path: 'docs/kept.md' })).bytes.toString(), 'kept across restarts\n');
    const done = await s.api('POST', `/workspace/${a.id}/complete`, { token: tok2 });
    t.is(done.status, 200, JSON.stringify(done.body));
    t.is((await s.services.content.readContent(pid, { path: 'docs/kept.md' })).bytes.toString(), 'kept across restarts\n');
  } finally {
    await s.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
