import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CNS_BIN, spawnServe } from '../helpers/cli.ts';
import { databaseOfDataDir, releaseDatabaseOfDataDir } from '../helpers/serverDatabases.ts';

const ADMIN = { CNS_ADMIN_EMAIL: 'crash@example.com', CNS_ADMIN_PASSWORD: 'crash-password', CNS_RATE_LIMIT_MAX: '0' };

async function call(url: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { data: any } }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

async function signIn(url: string): Promise<string> {
  const res = await fetch(`${url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: ADMIN.CNS_ADMIN_EMAIL, password: ADMIN.CNS_ADMIN_PASSWORD }),
  });
  return ((await res.json()) as { data: { access_token: string } }).data.access_token;
}

test('kill -9 of the server under write load loses no acknowledged write; fsck clean; reindex changes nothing', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-crash-'));
  // Retried: a worker of a killed service may still be exiting (it leaves when the primary is gone).
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true, maxRetries: 10 }));
  // On the suite's PostgreSQL pass the three starts and the reindex share this folder's database.
  const engine = await databaseOfDataDir(dataDir);
  t.teardown(() => releaseDatabaseOfDataDir(dataDir));
  const env = { ...ADMIN, ...engine };
  const first = spawnServe(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], env);
  t.teardown(() => first.child.kill('SIGKILL'));
  const [, url] = await first.waitFor(/listening on (http:\/\/\S+)/);
  const token = await signIn(url!);
  const projectId = (await call(url!, token, 'POST', '/auth/initialize')).body.data.project.id as string;

  // Acknowledged writes: path -> (version -> content). Writers stop when the server dies.
  const acked = new Map<string, Map<number, string>>();
  const killAfter = 40 + Math.floor(Math.random() * 80);
  let ackCount = 0;
  let killed = false;
  const writer = async (w: number) => {
    for (let i = 0; !killed; i++) {
      const path = i % 3 === 0 ? 'shared.md' : `w${w}/f${i % 5}.md`;
      const content = `writer ${w} write ${i}\n`;
      let res;
      try {
        res = await call(url!, token, 'POST', `/content/${projectId}/write`, { path, content, node_type: 'markdown' });
      } catch {
        return; // connection refused or reset: the server is gone
      }
      if (res.status !== 200 && res.status !== 201) continue;
      const versions = acked.get(path) ?? new Map<number, string>();
      versions.set(res.body.data.version, content);
      acked.set(path, versions);
      if (++ackCount === killAfter) {
        killed = true;
        first.child.kill('SIGKILL');
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, (_, w) => writer(w)));
  await first.exited;
  t.true(ackCount >= killAfter);

  const second = spawnServe(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], env);
  t.teardown(() => second.child.kill('SIGKILL'));
  const [, url2] = await second.waitFor(/listening on (http:\/\/\S+)/);
  const token2 = await signIn(url2!);
  const snapshot: Record<string, unknown> = {};
  for (const [path, versions] of acked) {
    const list = await call(url2!, token2, 'GET', `/content/${projectId}/versions?path=${encodeURIComponent(path)}&limit=1000`);
    t.is(list.status, 200, path);
    const numbers = list.body.data.versions.map((v: { version: number }) => v.version);
    t.deepEqual(numbers, Array.from({ length: numbers.length }, (_, i) => numbers.length - i), `${path}: contiguous versions`);
    for (const [version, content] of versions) {
      const got = await call(url2!, token2, 'GET', `/content/${projectId}/version-content?path=${encodeURIComponent(path)}&version=${version}`);
      t.is(got.body.data.content_text, content, `${path} v${version}`);
    }
    snapshot[path] = list.body.data.versions.map((v: { version: number; commit_id: string }) => `${v.version}:${v.commit_id}`);
  }
  second.child.kill('SIGTERM');
  await second.exited;

  const fsck = spawnSync('git', ['fsck', '--strict', '--no-dangling'], { cwd: join(dataDir, `${projectId}.git`), encoding: 'utf8' });
  t.is(fsck.status, 0, fsck.stderr);

  const report = execFileSync(process.execPath, [CNS_BIN, 'reindex', '--project', projectId, '--data-dir', dataDir], { encoding: 'utf8', env: { ...process.env, ...engine } });
  t.regex(report, new RegExp(`${projectId}: \\d+ commits, \\d+ nodes, \\d+ versions: index matched git`), report);

  const third = spawnServe(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], env);
  t.teardown(() => third.child.kill('SIGKILL'));
  const [, url3] = await third.waitFor(/listening on (http:\/\/\S+)/);
  const token3 = await signIn(url3!);
  for (const path of acked.keys()) {
    const list = await call(url3!, token3, 'GET', `/content/${projectId}/versions?path=${encodeURIComponent(path)}&limit=1000`);
    t.deepEqual(list.body.data.versions.map((v: { version: number; commit_id: string }) => `${v.version}:${v.commit_id}`), snapshot[path], `${path} after reindex`);
  }
  third.child.kill('SIGTERM');
  await third.exited;
});
