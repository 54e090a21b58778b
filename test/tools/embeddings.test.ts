import test from 'ava';
import { contentApi, defaultProject } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { EmbeddingServer } from './embeddingServer.ts';
import { indexReady, search, until } from './helpers.ts';

let server: TestServer;
let provider: EmbeddingServer;

test.after.always(async () => {
  await server?.stop();
  await provider?.stop();
});

test.serial('hybrid search with an embedding provider: batched calls, cached by chunk hash, resilient to failures', async (t) => {
  provider = await new EmbeddingServer(32).start();
  server = await startTestServer({}, { CNS_EMBEDDINGS_BASE_URL: provider.url, CNS_EMBEDDINGS_MODEL: 'test-embed', CNS_EMBEDDINGS_API_KEY: 'sk-secret-test' });
  const { token } = await server.login();
  const { projectId } = await defaultProject(server, token);
  const c = contentApi(server, token, projectId);
  const files = Array.from({ length: 30 }, (_, i) => ({ path: `docs/d${i}.md`, node_type: 'markdown', content: `# Doc ${i}\n\nThis document number ${i} is about topic${i % 5}.` }));
  files.push({ path: 'docs/same1.md', node_type: 'markdown', content: 'identical paragraph text' });
  files.push({ path: 'docs/same2.md', node_type: 'markdown', content: 'identical paragraph text' });
  t.is((await c('POST', '/bulk-write', { files })).status < 300, true);

  const created = await server.api('POST', '/tools/search', { token, body: { project_id: projectId, name: 'hybrid' } });
  const toolId = created.body.data.tool.id;
  const state = await indexReady(server, token, toolId);
  t.like(state, { mode: 'hybrid', embedding_model: 'test-embed', pending_embeddings: 0, last_error: null });
  // Batching: 31 distinct texts went in fewer requests than texts; the key was sent as a bearer token.
  const embedded = provider.embedded();
  t.is(embedded.length, 31, 'identical chunks are embedded once');
  t.true(provider.requests.length < embedded.length);
  t.true(provider.requests.some((r) => r.inputs.length > 1));
  t.is(provider.requests[0]!.authorization, 'Bearer sk-secret-test');
  t.is(provider.requests[0]!.model, 'test-embed');

  const r = await search(server, token, toolId, { query: 'topic3', mode: 'hybrid' });
  t.is(r.status, 200, JSON.stringify(r.body));
  t.is(r.body.data.result.mode, 'hybrid');
  t.regex(r.body.data.result.results[0].path, /docs\/d(3|8|13|18|23|28)\.md/);
  const vec = await search(server, token, toolId, { query: 'identical paragraph text', mode: 'vector' });
  t.is(vec.body.data.result.mode, 'vector');
  t.true(vec.body.data.result.results.slice(0, 2).every((x: { path: string }) => /same[12]/.test(x.path)));

  // Caching: re-writing a document with one changed paragraph embeds only the changed chunk.
  const before = provider.embedded().length;
  await c('POST', '/write', { path: 'docs/d1.md', node_type: 'markdown', content: '# Doc 1\n\nThis document number 1 is about topic1.\n\n# Added\n\nA brand new section.' });
  // Moving a document re-embeds nothing (same content).
  await c('POST', '/mv', { old_path: 'docs/d2.md', new_path: 'docs/moved-d2.md' });
  await until('embeddings caught up', async () => {
    const s = (await server.api('GET', `/tools/${toolId}/search-index`, { token })).body.data;
    return s.lag_versions === 0 && s.pending_embeddings === 0 && s.status === 'ready';
  });
  const added = provider.embedded().slice(before);
  // Only the new section: the unchanged first section and the moved document come from the cache.
  t.deepEqual(added, ['# Added\n\nA brand new section.']);

  // The provider goes down: the status shows the error, lexical search keeps answering, writes go on.
  provider.down = true;
  await c('POST', '/write', { path: 'docs/late.md', node_type: 'markdown', content: 'the capybara arrives late' });
  const errored = await until('index status error', async () => {
    const s = (await server.api('GET', `/tools/${toolId}/search-index`, { token })).body.data;
    return s.status === 'error' ? s : null;
  });
  t.regex(errored.last_error, /503/);
  t.false(errored.last_error.includes('sk-secret-test'));
  const lexical = await search(server, token, toolId, { query: 'capybara' });
  t.is(lexical.status, 200);
  t.is(lexical.body.data.result.mode, 'lexical');
  t.regex(lexical.body.data.result.warning, /embedding provider failed/);
  t.is(lexical.body.data.result.results[0].path, 'docs/late.md');
  const w = await c('POST', '/write', { path: 'docs/during.md', node_type: 'markdown', content: 'written while the provider is down' });
  t.true(w.status < 300);

  // It recovers: indexing resumes by itself and the late chunks get vectors.
  provider.down = false;
  const recovered = await indexReady(server, token, toolId);
  t.is(recovered.last_error, null);
  t.is(recovered.pending_embeddings, 0);
  t.true(provider.embedded().some((x) => x.includes('capybara')));
  const hybrid = await search(server, token, toolId, { query: 'capybara' });
  t.is(hybrid.body.data.result.mode, 'hybrid');
  t.is(hybrid.body.data.result.results[0].path, 'docs/late.md');
});

test.serial('a 429 then success is retried with backoff inside one indexing pass', async (t) => {
  const { token } = await server.login();
  const { projectId } = await defaultProject(server, token);
  const c = contentApi(server, token, projectId);
  await c('POST', '/write', { path: 'retry/one.md', node_type: 'markdown', content: 'retry me softly' });
  provider.failures = { remaining: 2, status: 429 };
  const before = provider.requests.length;
  const tools = (await server.api('GET', `/tools/by-project/${projectId}`, { token })).body.data.tools;
  const toolId = tools.find((x: { type: string }) => x.type === 'search').id;
  await c('POST', '/write', { path: 'retry/two.md', node_type: 'markdown', content: 'a second text to embed' });
  await until('embedded after 429s', () => provider.embedded().slice(0).some((x) => x.includes('second text to embed')));
  t.is(provider.failures.remaining, 0);
  t.true(provider.requests.length > before);
  const s = await indexReady(server, token, toolId);
  t.is(s.last_error, null);
});
