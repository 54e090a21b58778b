import test from 'ava';
import { McpError, type Resource } from '@modelcontextprotocol/sdk/types.js';
import { contentApi, createProject, defaultProject, type ContentCall } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { indexReady, until } from '../tools/helpers.ts';
import { call, connect, createEndpoint, type Endpoint } from './helpers.ts';

let server: TestServer;
let token: string;
let projectId: string;
let orgId: string;
let c: ContentCall;
let docs: Endpoint;

const READ_TOOLS = ['ls', 'cat', 'stat', 'tree', 'grep', 'versions', 'diff', 'blame'];
const WRITE_TOOLS = ['write', 'mkdir', 'mv', 'rm', 'rollback'];

test.before(async () => {
  server = await startTestServer();
  ({ token } = await server.login());
  ({ projectId, orgId } = await defaultProject(server, token));
  c = contentApi(server, token, projectId);
  await c('POST', '/write', { path: 'docs/guide.md', node_type: 'markdown', content: '# Guide\n\nInstall the quokka daemon first.' });
  await c('POST', '/write', { path: 'docs/data.json', node_type: 'json', content: { server: { port: 8080 }, tags: ['a'] } });
  await c('POST', '/write', { path: 'docs/sub/deep.md', node_type: 'markdown', content: 'deep' });
  await c('POST', '/write', { path: 'docs/notes.txt', node_type: 'file', content: Buffer.from('plain text').toString('base64') });
  await c('POST', '/write', { path: 'docs/blob.bin', node_type: 'file', content: Buffer.from([0, 1, 2, 255]).toString('base64') });
  await c('POST', '/write', { path: 'other/secret.md', node_type: 'markdown', content: 'the quokka launch codes' });
  docs = await createEndpoint(server, token, projectId, 'docs', { name: 'Docs' });
});

test.after.always(async () => server?.stop());

/** The versions of a node as REST shows them to the project's owner. */
const versionsOf = async (path: string) => (await c('GET', `/versions?path=${encodeURIComponent(path)}`)).body.data.versions;

test('initialize gives instructions; a read_write endpoint lists the reading and writing tools with their input schemas', async (t) => {
  const s = await connect(docs.url, docs.key);
  t.teardown(() => s.close());
  t.is(s.client.getServerVersion()?.name, 'cns');
  const instructions = s.client.getInstructions() ?? '';
  t.regex(instructions, /folder "docs" of the project/);
  t.regex(instructions, /new version attributed to this endpoint \("Docs"\)/);
  t.truthy(s.client.getServerCapabilities()?.resources);
  const { tools } = await s.client.listTools();
  t.deepEqual(tools.map((x) => x.name).sort(), [...READ_TOOLS, ...WRITE_TOOLS].sort(), 'no search tool without a search index');
  const write = tools.find((x) => x.name === 'write')!;
  t.truthy(write.inputSchema.properties?.content && write.inputSchema.properties.base_version);
  t.regex((write.inputSchema.properties!.path as { description: string }).description, /beneath "docs"/);
  t.is(tools.find((x) => x.name === 'cat')!.annotations?.readOnlyHint, true);
  t.is(tools.find((x) => x.name === 'rm')!.annotations?.destructiveHint, true);
});

test('ls, cat, stat and tree read beneath the folder; each answer is JSON text plus the same structuredContent', async (t) => {
  const s = await connect(docs.url, docs.key);
  t.teardown(() => s.close());
  const ls = await call(s.client, 'ls');
  t.false(ls.isError, ls.text);
  t.deepEqual(JSON.parse(ls.text), ls.data);
  const listed = ls.data.children.map((n: { path: string }) => n.path);
  for (const p of ['docs/blob.bin', 'docs/data.json', 'docs/guide.md', 'docs/notes.txt', 'docs/sub']) t.true(listed.includes(p), p);
  t.true(listed.every((p: string) => p.startsWith('docs/')));
  const md = await call(s.client, 'cat', { path: 'docs/guide.md' });
  t.like(md.data, { path: 'docs/guide.md', type: 'markdown', version: 1, content: '# Guide\n\nInstall the quokka daemon first.' });
  t.deepEqual((await call(s.client, 'cat', { path: '/docs/data.json' })).data.content, { server: { port: 8080 }, tags: ['a'] }, 'a leading slash is tolerated');
  t.like((await call(s.client, 'cat', { path: 'docs/notes.txt' })).data, { encoding: 'utf8', content: 'plain text' });
  const stat = await call(s.client, 'stat', { path: 'docs/sub' });
  t.like(stat.data, { path: 'docs/sub', type: 'folder', children_count: 1 });
  t.like((await call(s.client, 'stat')).data, { path: 'docs', type: 'folder' }, 'no path: the endpoint folder');
  const tree = await call(s.client, 'tree', { max_depth: 2 });
  t.is(tree.data.path, 'docs');
  t.deepEqual(tree.data.children.find((n: { name: string }) => n.name === 'sub').children.map((n: { path: string }) => n.path), ['docs/sub/deep.md']);
  const missing = await call(s.client, 'cat', { path: 'docs/nope.md' });
  t.true(missing.isError);
  t.regex(missing.text, /^NOT_FOUND: /);
  const bad = await call(s.client, 'tree', { max_depth: 'deep' });
  t.true(bad.isError);
  t.regex(bad.text, /VALIDATION_ERROR: Invalid arguments: arguments\.max_depth/);
});

test('write is a version by the endpoint: actor agent with its connection id, author agent:<name>, a generated or given message', async (t) => {
  const s = await connect(docs.url, docs.key);
  t.teardown(() => s.close());
  const created = await call(s.client, 'write', { path: 'docs/new/page.md', content: '# New' });
  t.false(created.isError, created.text);
  t.like(created.data, { path: 'docs/new/page.md', type: 'markdown', version: 1, changed: true });
  const json = await call(s.client, 'write', { path: 'docs/new/page.md', content: '# New, edited', message: 'tighten the intro', base_version: 1 });
  t.is(json.data.version, 2);
  const [second, first] = await versionsOf('docs/new/page.md');
  t.like(first, { actor_type: 'agent', actor_id: docs.id, author: 'agent:Docs', message: 'write docs/new/page.md (via MCP endpoint "Docs")' });
  t.like(second, { actor_type: 'agent', actor_id: docs.id, author: 'agent:Docs', message: 'tighten the intro' });
  const stale = await call(s.client, 'write', { path: 'docs/new/page.md', content: 'late', base_version: 1 });
  t.true(stale.isError);
  t.regex(stale.text, /^CONFLICT: /);
  t.is((await c('GET', '/cat?path=docs/new/page.md')).body.data.content, '# New, edited', 'the stale write changed nothing');
  const typed = await call(s.client, 'write', { path: 'docs/new/config.json', content: { on: true } });
  t.like(typed.data, { type: 'json' });
  t.deepEqual((await c('GET', '/cat?path=docs/new/config.json')).body.data.content, { on: true });
});

test('mkdir, mv, rm and rollback are versions by the endpoint; the endpoint folder itself cannot be moved or deleted through it', async (t) => {
  const s = await connect(docs.url, docs.key);
  t.teardown(() => s.close());
  t.like((await call(s.client, 'mkdir', { path: 'docs/m/inner' })).data, { path: 'docs/m/inner', type: 'folder', changed: true });
  await call(s.client, 'write', { path: 'docs/m/a.md', content: 'one' });
  await call(s.client, 'write', { path: 'docs/m/a.md', content: 'two' });
  const moved = await call(s.client, 'mv', { from: 'docs/m/a.md', to: 'docs/m/inner/b.md', message: 'file it' });
  t.like(moved.data, { path: 'docs/m/inner/b.md', old_path: 'docs/m/a.md', changed: true });
  const rolled = await call(s.client, 'rollback', { path: 'docs/m/inner/b.md', version: 1 });
  t.false(rolled.isError, rolled.text);
  t.like(rolled.data, { path: 'docs/m/inner/b.md', content: 'one', restored_version: 1 });
  const history = await versionsOf('docs/m/inner/b.md');
  t.deepEqual(history.map((v: { operation: string }) => v.operation), ['rollback', 'move', 'update', 'create']);
  t.true(history.every((v: { actor_id: string; author: string }) => v.actor_id === docs.id && v.author === 'agent:Docs'));
  t.is(history[1].message, 'file it');
  const removed = await call(s.client, 'rm', { path: 'docs/m/inner/b.md' });
  t.like(removed.data, { path: 'docs/m/inner/b.md', permanent: false });
  t.regex(removed.data.trash_path, /^\.trash\//);
  t.is((await c('GET', '/stat?path=docs/m/inner/b.md')).status, 404);
  for (const [tool, args] of [['rm', { path: 'docs' }], ['mv', { from: 'docs', to: 'docs2' }], ['rm', { path: '' }]] as const) {
    const r = await call(s.client, tool, args);
    t.true(r.isError, `${tool} ${JSON.stringify(args)}`);
  }
  t.is((await c('GET', '/stat?path=docs')).body.data.type, 'folder');
});

test('versions and diff: a node\'s history and versions, the commits in the folder, project diffs', async (t) => {
  const s = await connect(docs.url, docs.key);
  t.teardown(() => s.close());
  await call(s.client, 'write', { path: 'docs/h.md', content: 'line one\n' });
  await call(s.client, 'write', { path: 'docs/h.md', content: 'line one\nline two\n' });
  await c('POST', '/write', { path: 'other/noise.md', node_type: 'markdown', content: 'outside' });
  const list = await call(s.client, 'versions', { path: 'docs/h.md' });
  t.is(list.data.total, 2);
  t.like((await call(s.client, 'versions', { path: 'docs/h.md', version: 1 })).data, { version: 1, content: 'line one\n' });
  const diff = await call(s.client, 'diff', { path: 'docs/h.md', v1: 1, v2: 2 });
  t.regex(diff.data.diff ?? JSON.stringify(diff.data), /\+line two/);
  const commits = await call(s.client, 'versions', { limit: 1000 });
  t.false(commits.isError, commits.text);
  const paths = commits.data.commits.flatMap((x: { changes: { path: string }[] }) => x.changes.map((ch) => ch.path));
  t.true(paths.includes('docs/h.md'));
  t.false(paths.some((p: string) => p.startsWith('other/')), 'commits outside the folder are not shown');
  const v2 = list.data.versions[0].project_version;
  const changed = (await call(s.client, 'diff', { v1: v2 - 2, v2: server.services.content.projectVersion(projectId) })).data.changes.map((x: { path: string }) => x.path);
  t.true(changed.includes('docs/h.md'));
  t.false(changed.includes('other/noise.md'), 'changes outside the folder are not shown');
});

test('blame: which version, by the endpoint (an agent) or a person, last changed each line; outside the folder refused', async (t) => {
  const s = await connect(docs.url, docs.key);
  t.teardown(() => s.close());
  await c('POST', '/write', { path: 'docs/b.md', node_type: 'markdown', content: 'by a person\n' });
  await call(s.client, 'write', { path: 'docs/b.md', content: 'by a person\nby the agent\n', message: 'agent adds a line' });
  const b = await call(s.client, 'blame', { path: 'docs/b.md' });
  t.false(b.isError, b.text);
  t.deepEqual(JSON.parse(b.text), b.data);
  const actor = (line: number) => {
    const r = b.data.ranges.find((x: { start_line: number; end_line: number }) => x.start_line <= line && line <= x.end_line);
    return b.data.commits.find((x: { commit_id: string }) => x.commit_id === r.commit_id);
  };
  t.like(actor(1), { actor_type: 'user', version: 1 });
  t.like(actor(2), { actor_type: 'agent', version: 2, message: 'agent adds a line', author: 'agent:Docs' });
  t.like((await call(s.client, 'blame', { path: 'docs/b.md', version: 1 })).data, { version: 1, line_count: 1 });
  const outside = await call(s.client, 'blame', { path: 'other/secret.md' });
  t.true(outside.isError);
});

test('paths outside the folder are tool errors saying so, and change nothing', async (t) => {
  const s = await connect(docs.url, docs.key);
  t.teardown(() => s.close());
  for (const [tool, args] of [
    ['cat', { path: 'other/secret.md' }],
    ['ls', { path: 'other' }],
    ['stat', { path: 'other/secret.md' }],
    ['versions', { path: 'other/secret.md' }],
    ['write', { path: 'other/x.md', content: 'no' }],
    ['mkdir', { path: 'elsewhere' }],
    ['mv', { from: 'docs/guide.md', to: 'other/guide.md' }],
    ['rm', { path: 'other/secret.md' }],
    ['rollback', { path: 'other/secret.md', version: 1 }],
  ] as const) {
    const r = await call(s.client, tool, args);
    t.true(r.isError, `${tool} ${JSON.stringify(args)}`);
    t.regex(r.text, /^FORBIDDEN: "[^"]+" is outside this MCP endpoint's folder "docs"/, tool);
  }
  const dots = await call(s.client, 'cat', { path: 'docs/../other/secret.md' });
  t.true(dots.isError);
  t.notRegex(dots.text, /launch codes/);
  // Nothing was written (other tests write elsewhere in the project meanwhile: look at the targets).
  for (const p of ['other/x.md', 'elsewhere', 'other/guide.md']) t.is((await c('GET', `/stat?path=${p}`)).status, 404, p);
  t.like((await c('GET', '/stat?path=other/secret.md')).body.data, { version: 1 });
  t.like((await c('GET', '/stat?path=docs/guide.md')).body.data, { version: 1 });
});

test('resources: every node beneath the folder, paginated; text, JSON, blobs and versions read; folders read as listings; outside is an error', async (t) => {
  const own = await createProject(server, token, orgId, 'mcp-resources');
  const oc = contentApi(server, token, own);
  const files = Array.from({ length: 230 }, (_, i) => ({ path: `kb/many/f${String(i).padStart(3, '0')}.md`, node_type: 'markdown', content: `file ${i}` }));
  t.is((await oc('POST', '/bulk-write', { files })).status, 200);
  await oc('POST', '/write', { path: 'kb/doc.md', node_type: 'markdown', content: 'v1' });
  await oc('POST', '/write', { path: 'kb/doc.md', node_type: 'markdown', content: 'v2' });
  await oc('POST', '/write', { path: 'kb/bytes.bin', node_type: 'file', content: Buffer.from([0, 159, 146, 150]).toString('base64') });
  await oc('POST', '/write', { path: 'kb/v.json', node_type: 'json', content: { x: 1 } });
  await oc('POST', '/write', { path: 'outside.md', node_type: 'markdown', content: 'no' });
  const kb = await createEndpoint(server, token, own, 'kb', { mode: 'read' });
  const s = await connect(kb.url, kb.key);
  t.teardown(() => s.close());
  const resources: Resource[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await s.client.listResources(cursor ? { cursor } : {});
    resources.push(...page.resources);
    cursor = page.nextCursor;
    pages++;
  } while (cursor);
  const uris = resources.map((r) => r.uri);
  t.true(pages >= 2, `paginated (${pages} pages)`);
  t.is(uris.length, 233);
  t.is(new Set(uris).size, 233, 'no resource twice');
  t.true(uris.includes(`cns://${own}/kb/many/f229.md`));
  t.false(uris.some((u) => u.endsWith('outside.md')));
  t.like(resources.find((r) => r.uri.endsWith('/kb/v.json')), { name: 'v.json', title: 'kb/v.json', mimeType: 'application/json' });
  t.like(resources.find((r) => r.uri.endsWith('/kb/bytes.bin')), { mimeType: 'application/octet-stream', size: 4 });

  const read = async (uri: string) => (await s.client.readResource({ uri })).contents[0] as { text?: string; blob?: string; mimeType: string };
  t.like(await read(`cns://${own}/kb/doc.md`), { text: 'v2', mimeType: 'text/markdown' });
  t.like(await read(`cns://${own}/kb/doc.md@1`), { text: 'v1' });
  t.deepEqual(JSON.parse((await read(`cns://${own}/kb/v.json`)).text!), { x: 1 });
  t.is((await read(`cns://${own}/kb/bytes.bin`)).blob, Buffer.from([0, 159, 146, 150]).toString('base64'));
  const listing = JSON.parse((await read(`cns://${own}/kb`)).text!);
  t.deepEqual(listing.children.map((n: { name: string }) => n.name), ['many', 'bytes.bin', 'doc.md', 'v.json']);
  const templates = (await s.client.listResourceTemplates()).resourceTemplates.map((x) => x.uriTemplate);
  t.deepEqual(templates, [`cns://${own}/kb/{+path}`, `cns://${own}/kb/{+path}@{version}`]);
  for (const [uri, pattern] of [
    [`cns://${own}/outside.md`, /outside this MCP endpoint's folder/],
    [`cns://${own}/kb/nope.md`, /not found/i],
    [`cns://${projectId}/docs/guide.md`, /Resource not found/],
    [`cns://${own}/kb/doc.md@9`, /version/i],
  ] as const) {
    const err = await t.throwsAsync(s.client.readResource({ uri }), { instanceOf: McpError });
    t.regex(err!.message, pattern, uri);
  }
});

test('a read endpoint lists no write tools and refuses writes, changing nothing', async (t) => {
  const ro = await createEndpoint(server, token, projectId, 'docs', { name: 'Reader', mode: 'read' });
  const s = await connect(ro.url, ro.key);
  t.teardown(() => s.close());
  const names = (await s.client.listTools()).tools.map((x) => x.name);
  t.deepEqual(names.sort(), [...READ_TOOLS].sort());
  t.regex(s.client.getInstructions() ?? '', /read-only/);
  for (const tool of WRITE_TOOLS) {
    const r = await call(s.client, tool, { path: 'docs/ro.md', content: 'x', from: 'docs/guide.md', to: 'docs/ro2.md', version: 1 });
    t.true(r.isError, tool);
    t.regex(r.text, /read-only/, tool);
  }
  for (const p of ['docs/ro.md', 'docs/ro2.md']) t.is((await c('GET', `/stat?path=${p}`)).status, 404, p);
  t.like((await c('GET', '/stat?path=docs/guide.md')).body.data, { version: 1 });
  t.false((await call(s.client, 'cat', { path: 'docs/guide.md' })).isError, 'reading still works');
});

test('search is offered once a search tool covers the folder, and finds only what is beneath it', async (t) => {
  const own = await createProject(server, token, orgId, 'mcp-search');
  const oc = contentApi(server, token, own);
  await oc('POST', '/write', { path: 'kb/install.md', node_type: 'markdown', content: '# Install\n\nRun the zanzibar installer.' });
  await oc('POST', '/write', { path: 'private/notes.md', node_type: 'markdown', content: 'zanzibar secrets' });
  const kb = await createEndpoint(server, token, own, 'kb');
  const s = await connect(kb.url, kb.key);
  t.teardown(() => s.close());
  t.false((await s.client.listTools()).tools.some((x) => x.name === 'search'));
  const narrow = await server.api('POST', '/tools/search', { token, body: { project_id: own, name: 'private only', node_id: server.services.content.findByPath(own, 'private')!.id } });
  t.is(narrow.status, 202);
  t.false((await s.client.listTools()).tools.some((x) => x.name === 'search'), 'a search tool on another folder does not cover this one');
  const wide = await server.api('POST', '/tools/search', { token, body: { project_id: own, name: 'everything' } });
  await indexReady(server, token, wide.body.data.tool.id);
  const search = (await s.client.listTools()).tools.find((x) => x.name === 'search');
  t.truthy(search);
  t.regex((search!.inputSchema.properties!.path_prefix as { description: string }).description, /beneath "kb"/);
  const r = await call(s.client, 'search', { query: 'zanzibar' });
  t.false(r.isError, r.text);
  t.deepEqual(r.data.results.map((x: { path: string }) => x.path), ['kb/install.md']);
  t.regex(r.data.results[0].snippet, /\*\*zanzibar\*\*/);
  const outside = await call(s.client, 'search', { query: 'zanzibar', path_prefix: 'private' });
  t.true(outside.isError);
  // What the endpoint writes is found once the index follows the commit.
  await call(s.client, 'write', { path: 'kb/new.md', content: 'a fresh zanzibar page' });
  await until('the new page in search results', async () => (await call(s.client, 'search', { query: 'fresh zanzibar' })).data.results.some((x: { path: string }) => x.path === 'kb/new.md'));
  t.pass();
});

test('bound tools (tool_ids) are offered under their own names, with their own node and schema', async (t) => {
  const dataId = server.services.content.findByPath(projectId, 'docs/data.json')!.id;
  const tool = await server.api('POST', '/tools', { token, body: { project_id: projectId, node_id: dataId, name: 'Port lookup', type: 'query_json', description: 'Reads the server settings.' } });
  t.is(tool.status, 201, JSON.stringify(tool.body));
  const e = await createEndpoint(server, token, projectId, 'docs', { name: 'with tools', tool_ids: [tool.body.data.id] });
  const s = await connect(e.url, e.key);
  t.teardown(() => s.close());
  const listed = (await s.client.listTools()).tools.find((x) => x.name === 'Port_lookup');
  t.truthy(listed);
  t.regex(listed!.description ?? '', /Reads the server settings/);
  t.truthy(listed!.inputSchema.properties?.pointer);
  const r = await call(s.client, 'Port_lookup', { pointer: '/server/port' });
  t.false(r.isError, r.text);
  t.is(r.data.result, 8080);
  t.regex(s.client.getInstructions() ?? '', /Also available: `Port_lookup`/);
  const unknown = await t.throwsAsync(s.client.callTool({ name: 'nope', arguments: {} }), { instanceOf: McpError });
  t.regex(unknown!.message, /Tool nope not found/);
});

test('a user token that may read the project works too, and what it writes is the user\'s', async (t) => {
  const s = await connect(docs.url, token);
  t.teardown(() => s.close());
  t.false((await call(s.client, 'cat', { path: 'docs/guide.md' })).isError);
  const w = await call(s.client, 'write', { path: 'docs/by-user.md', content: 'mine' });
  t.false(w.isError, w.text);
  const [v] = await versionsOf('docs/by-user.md');
  t.like(v, { actor_type: 'user', author: 'admin@example.com' });
  const viewer = await server.createUser(`mcp-reader-${process.pid}@example.com`);
  await server.api('POST', `/projects/${projectId}/members`, { token, body: { user_id: viewer.id, role: 'viewer' } });
  const vs = await connect(docs.url, viewer.token);
  t.teardown(() => vs.close());
  const names = (await vs.client.listTools()).tools.map((x) => x.name);
  t.false(names.includes('write'), 'a viewer is not offered write tools, even on a read_write endpoint');
  t.regex((await call(vs.client, 'write', { path: 'docs/v.md', content: 'x' })).text, /does not allow changes/);
});

test('a bound shell tool runs in the sandbox as the endpoint: its write-back is a version by the agent; a read endpoint does not offer a writable one', async (t) => {
  await c('POST', '/write', { path: 'shelled/readme.md', node_type: 'markdown', content: '# Shelled\n' });
  const folder = server.services.content.findByPath(projectId, 'shelled')!.id;
  const sh = await server.api('POST', '/tools', { token, body: { project_id: projectId, node_id: folder, name: 'sh', type: 'shell', config: { writable: true } } });
  t.is(sh.status, 201, JSON.stringify(sh.body));
  const e = await createEndpoint(server, token, projectId, 'shelled', { name: 'Shell user', tool_ids: [sh.body.data.id] });
  const s = await connect(e.url, e.key);
  t.teardown(() => s.close());
  const r = await call(s.client, 'sh', { command: 'head -1 readme.md; echo "# Made by a command" > made.md' });
  t.false(r.isError, r.text);
  t.is(r.data.stdout, '# Shelled\n');
  t.deepEqual(r.data.changes, [{ path: 'shelled/made.md', action: 'created', type: 'markdown' }]);
  const [v] = await versionsOf('shelled/made.md');
  t.like(v, { actor_type: 'agent', actor_id: e.id, author: 'agent:Shell user' });
  const ro = await createEndpoint(server, token, projectId, 'shelled', { mode: 'read', tool_ids: [sh.body.data.id] });
  const rs = await connect(ro.url, ro.key);
  t.teardown(() => rs.close());
  t.false((await rs.client.listTools()).tools.some((x) => x.name === 'sh'), 'a writable shell tool is a write tool');
});
