import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentApi, defaultProject } from '../helpers/project.ts';
import { startTestServer } from '../helpers/server.ts';
import { indexReady, search, until } from './helpers.ts';

test('a restart in the middle of indexing resumes from the persisted position and catches up', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-search-restart-'));
  try {
    let server = await startTestServer({ dataDir });
    let { token } = await server.login();
    const { projectId } = await defaultProject(server, token);
    const c = contentApi(server, token, projectId);
    // Many documents, so that the first build takes many batches.
    const files = Array.from({ length: 1500 }, (_, i) => ({ path: `bulk/f${i}.md`, node_type: 'markdown', content: `# File ${i}\n\nword${i} common text about lemurs` }));
    t.true((await c('POST', '/bulk-write', { files })).status < 300);
    const toolId = (await server.api('POST', '/tools/search', { token, body: { project_id: projectId, name: 's' } })).body.data.tool.id;
    // Stop while the index is being built.
    await until('indexing started', () => {
      const idx = server.services.tools.indexer.index(projectId);
      return idx !== null && idx.counts('').documents > 0;
    });
    const partial = server.services.tools.indexer.index(projectId)!.counts('').documents;
    await server.stop();
    t.true(partial < 1500, `stopped after ${partial} documents`);

    // Writes while the index is not running (another process, a crash): the changelog has them.
    server = await startTestServer({ dataDir });
    ({ token } = await server.login());
    await contentApi(server, token, projectId)('POST', '/write', { path: 'bulk/after.md', node_type: 'markdown', content: 'the marmoset came after the restart' });
    const state = await indexReady(server, token, toolId, 60_000);
    t.is(state.documents, 1501);
    t.is(state.lag_versions, 0);
    t.is((await search(server, token, toolId, { query: 'marmoset' })).body.data.result.results[0].path, 'bulk/after.md');
    t.is((await search(server, token, toolId, { query: 'word1499' })).body.data.result.results[0].path, 'bulk/f1499.md');
    await server.stop();

    // Restart when caught up: nothing is re-indexed, the position is kept.
    server = await startTestServer({ dataDir });
    ({ token } = await server.login());
    const again = await indexReady(server, token, toolId);
    t.is(again.indexed_project_version, state.indexed_project_version);
    await server.stop();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
