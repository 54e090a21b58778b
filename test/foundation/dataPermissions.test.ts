import test from 'ava';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultProject } from '../helpers/project.ts';
import { startTestServer } from '../helpers/server.ts';

const mode = (f: string) => statSync(f).mode & 0o777;
const dbFiles = (dir: string) => readdirSync(dir).filter((f) => f.startsWith('cns.db')).map((f) => join(dir, f));

test('the data folder is 0700 and the database files 0600, on creation and fixed on start for existing installs', async (t) => {
  const parent = mkdtempSync(join(tmpdir(), 'cns-perm-'));
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  const dataDir = join(parent, 'data');

  let server = await startTestServer({ dataDir });
  const { token } = await server.login();
  const { projectId } = await defaultProject(server, token);
  await server.api('POST', `/content/${projectId}/write`, { token, body: { path: 'a.md', node_type: 'markdown', content: 'a' } });
  t.is(mode(dataDir), 0o700);
  const files = dbFiles(dataDir);
  t.true(files.some((f) => f.endsWith('-wal')) && files.some((f) => f.endsWith('-shm')), files.join(','));
  for (const f of files) t.is(mode(f), 0o600, f);
  t.is(mode(join(dataDir, 'signing.key')), 0o600);
  await server.stop();

  // An install from before: world-readable files in a world-readable folder.
  chmodSync(dataDir, 0o755);
  for (const f of dbFiles(dataDir)) chmodSync(f, 0o644);
  server = await startTestServer({ dataDir });
  t.teardown(() => server.stop());
  t.is(mode(dataDir), 0o700);
  t.true(existsSync(join(dataDir, 'cns.db')));
  for (const f of dbFiles(dataDir)) t.is(mode(f), 0o600, f);
});
