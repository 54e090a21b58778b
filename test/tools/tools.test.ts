import test from 'ava';
import { contentApi, createKey, createProject, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let token: string;
let projectId: string;
let orgId: string;
let docsId: string;
let configId: string;

test.before(async () => {
  server = await startTestServer();
  ({ token } = await server.login());
  ({ projectId, orgId } = await defaultProject(server, token));
  const c = contentApi(server, token, projectId);
  await c('POST', '/write', { path: 'docs/guide.md', node_type: 'markdown', content: '# Guide\n\nHello tools.' });
  await c('POST', '/write', { path: 'docs/sub/deep.md', node_type: 'markdown', content: 'deep' });
  await c('POST', '/write', { path: 'secret/plan.md', node_type: 'markdown', content: 'secret plan' });
  const cfg = await c('POST', '/write', { path: 'docs/config.json', node_type: 'json', content: { items: [{ name: 'a', on: true }, { name: 'b', on: false }], 'a/b': 1 } });
  configId = cfg.body.data.id;
  docsId = server.services.content.findByPath(projectId, 'docs')!.id;
});

test.after.always(async () => server?.stop());

const create = (body: Record<string, unknown>, t = token) => server.api('POST', '/tools/', { token: t, body });
const call = (id: string, args: Record<string, unknown>, t = token) => server.api('POST', `/tools/${id}/call`, { token: t, body: { arguments: args } });

test('tools are created, listed (org, project, node), read, updated and deleted', async (t) => {
  const created = await create({ name: 'docs ls', node_id: docsId, type: 'ls', description: 'list docs' });
  t.is(created.status, 201, JSON.stringify(created.body));
  const tool = created.body.data;
  t.like(tool, { name: 'docs ls', type: 'ls', node_id: docsId, project_id: projectId, description: 'list docs', config: {} });
  t.is(tool.input_schema.type, 'object');
  t.truthy(tool.input_schema.properties.path);
  for (const path of [`/tools/?org_id=${orgId}`, `/tools/?project_id=${projectId}`, `/tools/by-project/${projectId}`, `/tools/by-node/${docsId}`]) {
    const r = await server.api('GET', path, { token });
    t.is(r.status, 200, path);
    t.true(r.body.data.tools.some((x: { id: string }) => x.id === tool.id), path);
  }
  t.is((await server.api('GET', `/tools/${tool.id}`, { token })).body.data.name, 'docs ls');
  const put = await server.api('PUT', `/tools/${tool.id}`, { token, body: { name: 'renamed' } });
  t.is(put.status, 200);
  t.is(put.body.data.name, 'renamed');
  t.is((await server.api('DELETE', `/tools/${tool.id}`, { token })).status, 200);
  t.is((await server.api('GET', `/tools/${tool.id}`, { token })).status, 404);
});

test('the tool types publish JSON Schemas generated from their zod schemas', async (t) => {
  const r = await server.api('GET', '/tools/types', { token });
  t.is(r.status, 200);
  const types = r.body.data.types.map((x: { type: string }) => x.type).sort();
  t.deepEqual(types, ['blame', 'cat', 'grep', 'ls', 'query_json', 'search', 'shell', 'tree', 'write']);
  const search = r.body.data.types.find((x: { type: string }) => x.type === 'search');
  t.deepEqual(search.input_schema.required, ['query']);
  t.is(search.input_schema.properties.top_k.maximum, 100);
});

test('bad input: unknown node or tool 404, node of another project 404, bad type or config 422 naming the field', async (t) => {
  t.is((await create({ name: 'x', node_id: 'nod_missing', type: 'ls' })).status, 404);
  t.is((await server.api('GET', '/tools/tool_missing', { token })).status, 404);
  t.is((await call('tool_missing', {})).status, 404);
  const other = await createProject(server, token, orgId, 'other');
  const wrong = await create({ name: 'x', node_id: docsId, project_id: other, type: 'ls' });
  t.is(wrong.status, 404);
  const badType = await create({ name: 'x', node_id: docsId, type: 'rm-rf' });
  t.is(badType.status, 422);
  t.true(JSON.stringify(badType.body.error.details).includes('type'));
  const badConfig = await create({ name: 'x', node_id: docsId, type: 'tree', config: { max_depth: 'deep' } });
  t.is(badConfig.status, 422);
  t.true(JSON.stringify(badConfig.body.error.details).includes('config.max_depth'));
  const fileForLs = await create({ name: 'x', node_id: configId, type: 'ls' });
  t.is(fileForLs.status, 422);
  const tool = (await create({ name: 'cat', node_id: docsId, type: 'cat' })).body.data;
  const badArgs = await call(tool.id, { path: 42 });
  t.is(badArgs.status, 422);
  t.true(JSON.stringify(badArgs.body.error.details).includes('arguments.path'));
});

test('ls, cat, tree and query_json read beneath their node only', async (t) => {
  const ls = (await create({ name: 'ls', node_id: docsId, type: 'ls' })).body.data;
  const r = await call(ls.id, {});
  t.is(r.status, 200, JSON.stringify(r.body));
  // docs/notes is the write test's, which may run meanwhile in this file.
  const children = (r.body.data.result.children as { path: string }[]).map((c) => c.path).filter((p) => p !== 'docs/notes');
  t.deepEqual(children.sort(), ['docs/config.json', 'docs/guide.md', 'docs/sub']);
  t.is((await call(ls.id, { path: '../secret' })).status, 422);
  const cat = (await create({ name: 'cat', node_id: docsId, type: 'cat' })).body.data;
  const guide = await call(cat.id, { path: 'guide.md' });
  t.is(guide.body.data.result.content, '# Guide\n\nHello tools.');
  t.is((await call(cat.id, { path: '../secret/plan.md' })).status, 422);
  const tree = (await create({ name: 'tree', node_id: docsId, type: 'tree' })).body.data;
  const tr = await call(tree.id, {});
  t.is(tr.body.data.result.path, 'docs');
  t.true(JSON.stringify(tr.body.data.result).includes('docs/sub/deep.md'));
  t.false(JSON.stringify(tr.body.data.result).includes('secret'));
  const q = (await create({ name: 'q', node_id: configId, type: 'query_json', config: { pointer: '/items', expression: '[?on].name' } })).body.data;
  const qr = await call(q.id, {});
  t.is(qr.status, 200, JSON.stringify(qr.body));
  t.deepEqual(qr.body.data.result.result, ['a']);
  const escaped = await call(q.id, { pointer: '/a~1b', expression: '@' });
  t.is(escaped.body.data.result.result, 1);
  t.is((await call(q.id, { pointer: '/nope' })).status, 404);
  const badExpr = await create({ name: 'q2', node_id: configId, type: 'query_json', config: { expression: '[?' } });
  t.is(badExpr.status, 422);
});

test('blame names the version and actor of each line beneath its node, and of each JSON key', async (t) => {
  const blame = (await create({ name: 'blame', node_id: docsId, type: 'blame' })).body.data;
  const guide = await call(blame.id, { path: 'guide.md' });
  t.is(guide.status, 200, JSON.stringify(guide.body));
  t.like(guide.body.data.result, { path: 'docs/guide.md', line_count: 3 });
  t.deepEqual(guide.body.data.result.ranges.map((r: { start_line: number; end_line: number }) => [r.start_line, r.end_line]), [[1, 3]]);
  t.like(guide.body.data.result.commits[0], { version: 1, actor_type: 'user' });
  const cfg = await call(blame.id, { path: 'config.json' });
  t.deepEqual(cfg.body.data.result.keys.map((k: { pointer: string }) => k.pointer), ['/items/0/name', '/items/0/on', '/items/1/name', '/items/1/on', '/a~1b']);
  t.is((await call(blame.id, { path: '../secret/plan.md' })).status, 422);
  t.is((await call(blame.id, { path: 'sub' })).status, 422, 'a folder');
});

test('write creates and updates beneath the node as the caller; a viewer gets 403; a read key too', async (t) => {
  const w = (await create({ name: 'w', node_id: docsId, type: 'write' })).body.data;
  const made = await call(w.id, { path: 'notes/new.md', content: '# New\n' });
  t.is(made.status, 200, JSON.stringify(made.body));
  t.like(made.body.data.result, { path: 'docs/notes/new.md', type: 'markdown', version: 1 });
  const versions = server.services.content.listVersions(projectId, { path: 'docs/notes/new.md' });
  t.is(versions.versions[0]!.author, 'admin@example.com');
  t.is((await call(w.id, { path: '../outside.md', content: 'x' })).status, 422);
  t.is((await call(w.id, { path: 'notes/new.md', content: 'again', base_version: 0 })).status, 409);

  const viewer = await server.createUser('viewer-tools@example.com');
  await server.api('POST', `/projects/${projectId}/members`, { token, body: { user_id: viewer.id, role: 'viewer' } });
  const asViewer = await call(w.id, { path: 'v.md', content: 'x' }, viewer.token);
  t.is(asViewer.status, 403, JSON.stringify(asViewer.body));
  t.is(server.services.content.findByPath(projectId, 'docs/v.md'), null);
  // Viewers may read through tools, but not manage them.
  t.is((await create({ name: 'nope', node_id: docsId, type: 'ls' }, viewer.token)).status, 403);

  const { key: readKey } = await createKey(server, token, projectId, { mode: 'read' });
  t.is((await call(w.id, { path: 'k.md', content: 'x' }, readKey)).status, 403);
  const { key: rwKey } = await createKey(server, token, projectId, { mode: 'read_write', name: 'agent-x' });
  const byKey = await call(w.id, { path: 'k.md', content: 'by key' }, rwKey);
  t.is(byKey.status, 200, JSON.stringify(byKey.body));
  const v = server.services.content.listVersions(projectId, { path: 'docs/k.md' }).versions[0]!;
  t.is(v.actorType, 'agent');
  t.is(v.author, 'agent:agent-x');
});

test("a key's scope still applies to a tool on a wider node; another project's key sees no tool", async (t) => {
  const cat = (await create({ name: 'root cat', project_id: projectId, type: 'cat' })).body.data;
  t.is(cat.node_id, null);
  const { key } = await createKey(server, token, projectId, { mode: 'read', scope_path: 'docs' });
  t.is((await call(cat.id, { path: 'docs/guide.md' }, key)).status, 200);
  t.is((await call(cat.id, { path: 'secret/plan.md' }, key)).status, 403);
  const other = await createProject(server, token, orgId, 'third');
  const { key: otherKey } = await createKey(server, token, other, { mode: 'read' });
  t.is((await server.api('GET', `/tools/${cat.id}`, { token: otherKey })).status, 404);
  t.is((await call(cat.id, { path: 'docs/guide.md' }, otherKey)).status, 404);
  const stranger = await server.createUser('stranger-tools@example.com');
  t.is((await call(cat.id, { path: 'docs/guide.md' }, stranger.token)).status, 404);
});

test('a shell tool runs commands over its folder in the sandbox: read-only unless writable, then one version by the caller', async (t) => {
  const sh = await create({ name: 'sh', node_id: docsId, type: 'shell' });
  t.is(sh.status, 201);
  t.is(sh.body.data.input_schema.required[0], 'command');
  const r = await call(sh.body.data.id, { command: 'ls; cat guide.md | head -1; echo x > new.md' });
  t.is(r.status, 200, JSON.stringify(r.body));
  const result = r.body.data.result;
  t.regex(result.stdout, /^config\.json\nguide\.md\n/);
  t.regex(result.stdout, /\nsub\n# Guide\n$/);
  t.regex(result.stderr, /Read-only file system/);
  t.is(result.version, null);
  const w = await create({ name: 'sh-w', node_id: docsId, type: 'shell', config: { writable: true, limits: { timeout_s: 5 } } });
  t.is(w.status, 201, JSON.stringify(w.body));
  const written = await call(w.body.data.id, { command: 'echo "# From shell" > shell.md' });
  t.is(written.status, 200, JSON.stringify(written.body));
  t.deepEqual(written.body.data.result.changes, [{ path: 'docs/shell.md', action: 'created', type: 'markdown' }]);
  const node = server.services.content.findByPath(projectId, 'docs/shell.md')!;
  t.is(server.services.content.listVersions(projectId, { id: node.id }).versions[0].actorType, 'user');
  t.is((await call(w.body.data.id, { command: 'true', timeout_s: 6 })).status, 422);
  const { key: reader } = await createKey(server, token, projectId, { mode: 'read' });
  t.is((await call(w.body.data.id, { command: 'echo y > y.md' }, reader)).status, 403);
  t.is(server.services.content.findByPath(projectId, 'docs/y.md'), null);
});

test('every tools route is in the OpenAPI document', async (t) => {
  const doc = (await server.api('GET', '/openapi.json')).body;
  for (const p of ['/tools', '/tools/search', '/tools/{tool_id}', '/tools/{tool_id}/call', '/tools/{tool_id}/search', '/tools/{tool_id}/search-index', '/tools/by-node/{node_id}', '/tools/by-project/{project_id}']) {
    t.truthy(doc.paths[p] ?? doc.paths[`${p}/`], p);
  }
});

test("a tool follows its node when it moves, and answers 404 once the node is in the trash", async (t) => {
  const c = contentApi(server, token, projectId);
  await c('POST', '/write', { path: 'movable/a.md', node_type: 'markdown', content: 'a' });
  const folder = server.services.content.findByPath(projectId, 'movable')!.id;
  const ls = (await create({ name: 'movable ls', node_id: folder, type: 'ls' })).body.data;
  t.is((await c('POST', '/mv', { old_path: 'movable', new_path: 'moved-here' })).status, 200);
  const r = await call(ls.id, {});
  t.is(r.status, 200);
  t.deepEqual(r.body.data.result.children.map((x: { path: string }) => x.path), ['moved-here/a.md']);
  t.is((await c('POST', '/rm', { path: 'moved-here' })).status, 200);
  const gone = await call(ls.id, {});
  t.is(gone.status, 404);
  t.regex(gone.body.message, /no longer exists/);
});
