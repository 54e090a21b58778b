import test from 'ava';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServe } from '../helpers/cli.ts';

async function login(url: string, email: string, password: string) {
  const res = await fetch(`${url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  return { status: res.status, body: (await res.json()) as { data: { access_token: string } } };
}

test('first start bootstraps the data folder and a generated admin; later starts reuse everything', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-serve-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));

  const first = spawnServe(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir]);
  t.teardown(() => first.child.kill('SIGKILL'));
  const [, email, password] = await first.waitFor(/created administrator (\S+) with password: (\S+)/);
  const [, url] = await first.waitFor(/listening on (http:\/\/\S+)/);
  t.is(email, 'admin@cns.local');
  t.is(statSync(join(dataDir, 'signing.key')).mode & 0o777, 0o600);

  const health = await fetch(`${url}/healthz`);
  t.is(health.status, 200);
  const signedIn = await login(url!, email!, password!);
  t.is(signedIn.status, 200);
  const token = signedIn.body.data.access_token;

  first.child.kill('SIGTERM');
  t.is(await first.exited, 0, 'graceful shutdown exits 0');
  t.regex(first.output(), /SIGTERM received/);

  const second = spawnServe(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir]);
  t.teardown(() => second.child.kill('SIGKILL'));
  const [, url2] = await second.waitFor(/listening on (http:\/\/\S+)/);
  t.notRegex(second.output(), /created administrator/);
  const me = await fetch(`${url2}/api/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } });
  t.is(me.status, 200, 'the signing secret survived the restart');
  second.child.kill('SIGINT');
  t.is(await second.exited, 0);
});

test('the administrator comes from CNS_ADMIN_EMAIL and CNS_ADMIN_PASSWORD when set', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-serve-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const proc = spawnServe(['--port', '0', '--host', '127.0.0.1'], {
    CNS_DATA_DIR: dataDir,
    CNS_ADMIN_EMAIL: 'boss@example.com',
    CNS_ADMIN_PASSWORD: 'boss-password-9',
  });
  t.teardown(() => proc.child.kill('SIGKILL'));
  const [, url] = await proc.waitFor(/listening on (http:\/\/\S+)/);
  t.regex(proc.output(), /created administrator boss@example.com \(password from CNS_ADMIN_PASSWORD\)/);
  t.notRegex(proc.output(), /boss-password-9/);
  t.is((await login(url!, 'boss@example.com', 'boss-password-9')).status, 200);
  proc.child.kill('SIGTERM');
  t.is(await proc.exited, 0);
});

test('invalid settings stop the start with a clear message', async (t) => {
  const proc = spawnServe(['--port', '0'], { PORT: 'x', CNS_LOG_LEVEL: 'loud' });
  t.is(await proc.exited, 2);
  t.regex(proc.output(), /Invalid settings: .*CNS_LOG_LEVEL/);
});
