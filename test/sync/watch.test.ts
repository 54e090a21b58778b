import test from 'ava';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandContext } from '../../src/cli/client/context.ts';
import { bindFolder } from '../../src/cli/sync/folderBinding.ts';
import { FolderWatcher } from '../../src/cli/sync/folderWatcher.ts';
import { SyncEngine } from '../../src/cli/sync/syncEngine.ts';
import { defaultProject } from '../helpers/project.ts';
import { memoryIo } from '../helpers/cliIo.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { folderWith, put, read, until } from './helpers.ts';

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

test('--watch reconnects after the server restarts and catches up from its cursor', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-watch-data-'));
  const port = await freePort();
  let server: TestServer = await startTestServer({ dataDir, port });
  t.teardown(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const { token } = await server.login();
  const { projectId } = await defaultProject(server, token);
  const dir = folderWith({ 'start.md': 'start\n' });
  const store = await bindFolder(new CommandContext({ server: server.url, token, project: projectId }, memoryIo().io), dir, {});
  const engine = new SyncEngine(store, { progress: false });
  const errors: string[] = [];
  const watcher = new FolderWatcher(engine, store, { onCycle: () => undefined, onError: (e) => errors.push(e.message), onFatal: (e) => errors.push(`fatal: ${e.message}`) });
  await watcher.start();
  t.teardown(() => watcher.stop());
  const write = (path: string, content: string) =>
    server.api('POST', `/content/${projectId}/write`, { token, body: { path, node_type: 'markdown', content } });

  await until('the first cycle', () => engine.cursor > 0);
  await write('live.md', 'live\n');
  await until('a live change', () => existsSync(join(dir, 'live.md')));

  await server.close();
  put(dir, 'while-down.md', 'written while the server was down\n');
  server = await startTestServer({ dataDir, port });
  // The first request may meet a pooled connection of the old process: retry until accepted.
  await until('a write to the restarted server', async () => [200, 201].includes((await write('after-restart.md', 'after the restart\n').catch(() => null))?.status ?? 0));
  await until('the change made after the restart', () => existsSync(join(dir, 'after-restart.md')), 30_000);
  await until('the local change made while down', async () => (await server.api('GET', `/content/${projectId}/cat?path=while-down.md`, { token }).catch(() => null))?.status === 200, 30_000);
  t.is(read(dir, 'after-restart.md'), 'after the restart\n');
  t.false(errors.some((e) => e.startsWith('fatal')));
});
