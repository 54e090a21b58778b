import test from 'ava';
import { GitClient, remoteUrl } from '../git/gitFixture.ts';
import { contentApi, createKey, createProject, defaultProject, type ContentCall } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { indexReady, search, searchUntil, until } from './helpers.ts';

let server: TestServer;
let token: string;
let projectId: string;
let orgId: string;
let c: ContentCall;

test.before(async () => {
  server = await startTestServer();
  ({ token } = await server.login());
  ({ projectId, orgId } = await defaultProject(server, token));
  c = contentApi(server, token, projectId);
  await c('POST', '/write', {
    path: 'kb/install.md',
    node_type: 'markdown',
    content: '# Guide\n\nIntro text.\n\n## Install\n\nRun the zanzibar installer with care.\n\n## Usage\n\nCall the tool.',
  });
  await c('POST', '/write', { path: 'kb/data.json', node_type: 'json', content: { server: { codename: 'quetzal', port: 8080 } } });
  await c('POST', '/write', { path: 'kb/notes.txt', node_type: 'file', content: Buffer.from('plain text mentions walrus here').toString('base64') });
  await c('POST', '/write', { path: 'private/secret.md', node_type: 'markdown', content: 'the zanzibar launch codes' });
});

test.after.always(async () => server?.stop());

async function searchTool(body: Record<string, unknown>) {
  const r = await server.api('POST', '/tools/search', { token, body: { project_id: projectId, name: 'search', ...body } });
  if (r.status !== 202) throw new Error(`create search tool: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.data;
}

test('POST /tools/search answers 202 at once with index pending; the index becomes ready, lexical without a provider', async (t) => {
  const own = await createProject(server, token, orgId, 'fresh-index');
  const oc = contentApi(server, token, own);
  await oc('POST', '/write', { path: 'a.md', node_type: 'markdown', content: '# A\n\nalpha' });
  await oc('POST', '/write', { path: 'b/c.json', node_type: 'json', content: { k: 'v' } });
  await oc('POST', '/write', { path: 'b/d.bin', node_type: 'file', content: Buffer.from([0, 1, 2, 3, 0]).toString('base64') });
  await oc('POST', '/write', { path: 'b/e.txt', node_type: 'file', content: Buffer.from('text file').toString('base64') });
  const r = await server.api('POST', '/tools/search', { token, body: { project_id: own, name: 'all' } });
  t.is(r.status, 202);
  const created = r.body.data;
  t.is(created.index.status, 'pending');
  t.is(created.tool.type, 'search');
  const state = await indexReady(server, token, created.tool.id);
  t.like(state, { mode: 'lexical', embedding_model: null, lag_versions: 0, last_error: null });
  // Four documents; the binary file has no chunks.
  t.is(state.documents, 4);
  t.is(state.chunks, 3);
  t.is(state.indexed_project_version, state.project_version);
});

test('results: markdown by heading, json as pointer lines, text files; matched terms marked; best first', async (t) => {
  const { tool } = await searchTool({ name: 'kb', node_id: server.services.content.findByPath(projectId, 'kb')!.id });
  await indexReady(server, token, tool.id);
  const r = await search(server, token, tool.id, { query: 'zanzibar installer' });
  t.is(r.status, 200, JSON.stringify(r.body));
  const [first] = r.body.data.result.results;
  t.like(first, { path: 'kb/install.md', type: 'markdown', heading_path: 'Guide > Install', version: 1 });
  t.regex(first.snippet, /\*\*zanzibar\*\*/);
  t.is(typeof first.score, 'number');
  // The tool's subtree: private/secret.md also says zanzibar but is outside kb.
  t.false(r.body.data.result.results.some((x: { path: string }) => x.path.startsWith('private/')));
  const json = await search(server, token, tool.id, { query: 'quetzal' });
  t.is(json.body.data.result.results[0].path, 'kb/data.json');
  t.regex(json.body.data.result.results[0].snippet, /\/server\/codename: \*\*quetzal\*\*/);
  const txt = await server.api('POST', `/tools/${tool.id}/search`, { token, body: { query: 'walrus' } });
  t.is(txt.status, 200);
  t.is(txt.body.data.results[0].path, 'kb/notes.txt');
  // No chunk has every word: chunks with any of them answer.
  const anyWord = await search(server, token, tool.id, { query: 'zanzibar xylophonic' });
  t.is(anyWord.body.data.result.results[0].path, 'kb/install.md');
  const none = await search(server, token, tool.id, { query: 'zanzibar', path_prefix: 'nothing-here' });
  t.deepEqual(none.body.data.result.results, []);
});

test('bad input: empty query 422, top_k over 100 422, unknown tool 404, search on a non-search tool 404', async (t) => {
  const { tool } = await searchTool({ name: 'bad' });
  const empty = await search(server, token, tool.id, { query: '   ' });
  t.is(empty.status, 422);
  t.true(JSON.stringify(empty.body.error.details).includes('arguments.query'));
  const big = await search(server, token, tool.id, { query: 'x', top_k: 101 });
  t.is(big.status, 422);
  t.true(JSON.stringify(big.body.error.details).includes('arguments.top_k'));
  t.is((await server.api('GET', '/tools/tool_nope/search-index', { token })).status, 404);
  t.is((await server.api('POST', '/tools/tool_nope/search', { token, body: { query: 'x' } })).status, 404);
  t.is((await server.api('POST', '/tools/search', { token, body: { project_id: projectId, node_id: 'nod_nope', name: 'x' } })).status, 404);
  const other = await createProject(server, token, orgId, 'elsewhere');
  const kb = server.services.content.findByPath(projectId, 'kb')!.id;
  t.is((await server.api('POST', '/tools/search', { token, body: { project_id: other, node_id: kb, name: 'x' } })).status, 404);
  const badCfg = await server.api('POST', '/tools/search', { token, body: { project_id: projectId, name: 'x', config: { default_top_k: 1000 } } });
  t.is(badCfg.status, 422);
  t.true(JSON.stringify(badCfg.body.error.details).includes('config.default_top_k'));
});

test('a REST write is found; a move and a trash remove the old paths from results', async (t) => {
  const { tool } = await searchTool({ name: 'fresh' });
  await indexReady(server, token, tool.id);
  await c('POST', '/write', { path: 'moving/a/b.md', node_type: 'markdown', content: 'the ocelot sleeps' });
  await searchUntil(server, token, tool.id, { query: 'ocelot' }, (p) => p.includes('moving/a/b.md'));
  // A folder move: the descendant has no changelog entry of its own.
  t.is((await c('POST', '/mv', { old_path: 'moving', new_path: 'moved' })).status, 200);
  const after = await searchUntil(server, token, tool.id, { query: 'ocelot' }, (p) => p.includes('moved/a/b.md'));
  t.false(after.results.some((r: { path: string }) => r.path.startsWith('moving/')));
  await indexReady(server, token, tool.id);
  const direct = server.services.tools.indexer.index(projectId)!.docsUnder('moving');
  t.deepEqual(direct, []);
  // Trash: gone from results.
  t.is((await c('POST', '/rm', { path: 'moved' })).status, 200);
  await searchUntil(server, token, tool.id, { query: 'ocelot' }, (p) => p.length === 0);
  await indexReady(server, token, tool.id);
  t.deepEqual(server.services.tools.indexer.index(projectId)!.docsUnder('moved'), []);
  // An update replaces the old text (its own file: the results test, running alongside, searches kb/).
  await c('POST', '/write', { path: 'updated/notes.txt', node_type: 'file', content: Buffer.from('about a dugong').toString('base64') });
  await searchUntil(server, token, tool.id, { query: 'dugong' }, (p) => p.includes('updated/notes.txt'));
  await c('POST', '/write', { path: 'updated/notes.txt', node_type: 'file', content: Buffer.from('now about narwhals').toString('base64') });
  await searchUntil(server, token, tool.id, { query: 'dugong' }, (p) => !p.includes('updated/notes.txt'));
  await searchUntil(server, token, tool.id, { query: 'narwhals' }, (p) => p.includes('updated/notes.txt'));
  t.pass();
});

test('a git push is found by search', async (t) => {
  // Its own project: other tests write to the shared one while this clone is out.
  const pushed = await createProject(server, token, orgId, 'pushed');
  await contentApi(server, token, pushed)('POST', '/write', { path: 'seed.md', node_type: 'markdown', content: 'seed' });
  const tool = (await server.api('POST', '/tools/search', { token, body: { project_id: pushed, name: 'git' } })).body.data.tool;
  await indexReady(server, token, tool.id);
  const git = new GitClient();
  try {
    const dir = git.dir('work');
    await git.ok(['clone', remoteUrl(server, pushed, token), dir]);
    const { writeFileSync, mkdirSync } = await import('node:fs');
    mkdirSync(`${dir}/pushed`, { recursive: true });
    writeFileSync(`${dir}/pushed/readme.md`, '# Pushed\n\nThe axolotl arrived by git push.\n');
    await git.ok(['add', '-A'], { cwd: dir });
    await git.ok(['commit', '-m', 'push it'], { cwd: dir });
    await git.ok(['push', 'origin', 'main'], { cwd: dir });
    const r = await searchUntil(server, token, tool.id, { query: 'axolotl' }, (p) => p.includes('pushed/readme.md'));
    t.is(r.results[0].heading_path, 'Pushed');
  } finally {
    git.dispose();
  }
});

test("results are filtered to what the caller may read (a scoped key) and the caller's project", async (t) => {
  const { tool } = await searchTool({ name: 'scoped' });
  await indexReady(server, token, tool.id);
  const all = await search(server, token, tool.id, { query: 'zanzibar' });
  t.true(all.body.data.result.results.some((r: { path: string }) => r.path === 'private/secret.md'));
  const { key } = await createKey(server, token, projectId, { mode: 'read', scope_path: 'kb' });
  const scoped = await search(server, token, tool.id, { query: 'zanzibar' }, );
  t.true(scoped.body.data.result.results.length > 0);
  const byKey = await server.api('POST', `/tools/${tool.id}/call`, { token: key, body: { arguments: { query: 'zanzibar' } } });
  t.is(byKey.status, 200, JSON.stringify(byKey.body));
  const paths = byKey.body.data.result.results.map((r: { path: string }) => r.path);
  t.true(paths.includes('kb/install.md'));
  t.false(paths.includes('private/secret.md'));
  const stranger = await server.createUser('stranger-search@example.com');
  t.is((await search(server, stranger.token, tool.id, { query: 'zanzibar' })).status, 404);
  t.is((await server.api('GET', `/tools/${tool.id}/search-index`, { token: stranger.token })).status, 404);
});

test('deleting the last search tool of a project drops its index', async (t) => {
  const p2 = await createProject(server, token, orgId, 'drop');
  await contentApi(server, token, p2)('POST', '/write', { path: 'x.md', node_type: 'markdown', content: 'hello' });
  const r = await server.api('POST', '/tools/search', { token, body: { project_id: p2, name: 's' } });
  await indexReady(server, token, r.body.data.tool.id);
  t.true(server.services.tools.indexer.isEnabled(p2));
  t.is((await server.api('DELETE', `/tools/${r.body.data.tool.id}`, { token })).status, 200);
  t.false(server.services.tools.indexer.isEnabled(p2));
  await until('file gone', async () => !(await import('node:fs')).existsSync(server.services.tools.indexer.fileOf(p2)));
});
