import test from 'ava';
import { contentApi, defaultProject } from '../helpers/project.ts';
import { startTestServer } from '../helpers/server.ts';

test('WAL checkpoints run on a worker thread, never inside a request: the service connection does not checkpoint', async (t) => {
  const server = await startTestServer();
  t.teardown(() => server.stop());
  const { db, checkpointer } = server.services;
  t.true(checkpointer.running);
  t.is(db.pragma('wal_autocheckpoint', { simple: true }), 0, 'commits never checkpoint on the event loop');

  const token = (await server.login()).token;
  const c = contentApi(server, token, (await defaultProject(server, token)).projectId);
  const files = Array.from({ length: 3000 }, (_, i) => ({ path: `wal/f${i}.md`, content: `# ${i}`, node_type: 'markdown' }));
  t.is((await c('POST', '/bulk-write', { files })).status, 200);

  const stats = await checkpointer.now();
  t.is(stats.lastError, null);
  t.true(stats.lastLog > 0, 'the WAL had frames');
  t.is(stats.lastCheckpointed, stats.lastLog, 'a PASSIVE checkpoint with no reader in the way copies every frame');
  // The data is where the service reads it.
  t.is((await c('GET', '/cat?path=wal/f2999.md')).body.data.content, '# 2999');
});

test('stopping the checkpointer gives checkpoints back to SQLite', async (t) => {
  const server = await startTestServer();
  const { db, checkpointer } = server.services;
  await checkpointer.stop();
  t.is(db.pragma('wal_autocheckpoint', { simple: true }), 1000);
  await server.stop();
});
