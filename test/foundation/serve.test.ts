import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCli } from '../../src/cli/runCli.ts';
import { spawnServe } from '../helpers/cli.ts';
import { cleanEnv, memoryIo } from '../helpers/cliIo.ts';

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

test('a port in use stops the start with one clear line, exit status 1, and nothing created', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-serve-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const holder = createNetServer();
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
  t.teardown(() => holder.close());
  const port = (holder.address() as AddressInfo).port;
  const proc = spawnServe(['--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir]);
  t.teardown(() => proc.child.kill('SIGKILL'));
  t.is(await proc.exited, 1);
  t.is(proc.output().trim(), `cns: port ${port} is already in use on 127.0.0.1: stop the other process or choose another port (PORT or --port)`);
  const later = spawnServe(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir]);
  t.teardown(() => later.child.kill('SIGKILL'));
  await later.waitFor(/created administrator \S+ with password: \S+/);
  later.child.kill('SIGTERM');
  t.is(await later.exited, 0);
});

test('the start banner names the address really bound: every interface by default', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-serve-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const proc = spawnServe(['--port', '0', '--data-dir', dataDir]);
  t.teardown(() => proc.child.kill('SIGKILL'));
  const [, port, reach] = await proc.waitFor(/listening on http:\/\/0\.0\.0\.0:(\d+) \(every interface, e\.g\. (http:\/\/127\.0\.0\.1:\d+);/);
  t.is(reach, `http://127.0.0.1:${port}`);
  t.is((await fetch(`${reach}/healthz`)).status, 200);
  proc.child.kill('SIGTERM');
  t.is(await proc.exited, 0);
});

test('SIGTERM to `npm start` stops the service: the port is released and no node process is left', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-serve-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('CNS_') && k !== 'PORT'));
  const npm = spawn('npm', ['start', '--silent', '--', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: { ...clean, CNS_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  npm.stdout.on('data', (c: Buffer) => (out += c.toString()));
  npm.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const npmExited = new Promise<number | null>((r) => npm.once('exit', (code) => r(code)));
  const descendants = () => {
    const ps = spawnSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' }).stdout.trim().split('\n').map((l) => l.trim().split(/\s+/).map(Number));
    const found: number[] = [];
    const walk = (parent: number) => {
      for (const [pid, ppid] of ps) if (ppid === parent && pid !== undefined) found.push(pid), walk(pid);
    };
    walk(npm.pid!);
    return found;
  };
  let started: number[] = [];
  t.teardown(() => {
    // Everything `npm start` began, even when the test failed before it saw the service listen.
    for (const pid of [...started, ...descendants(), npm.pid!]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  });
  // npm, its prestart (the web build's freshness check) and the service each start a node
  // process: on a loaded CI machine that has taken over a minute.
  const deadline = Date.now() + 100_000;
  let url: string | undefined;
  while (!url && Date.now() < deadline) {
    url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
    if (!url) await new Promise((r) => setTimeout(r, 50));
  }
  t.truthy(url, `not listening after ${Math.round((Date.now() - deadline + 100_000) / 1000)} s; output: ${out}`);
  started = descendants();
  t.true(started.length > 0);
  t.is((await fetch(`${url}/healthz`)).status, 200);

  npm.kill('SIGTERM');
  await npmExited;
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const stopBy = Date.now() + 20_000;
  let reachable = true;
  while ((reachable || started.some(alive)) && Date.now() < stopBy) {
    reachable = await fetch(`${url}/healthz`).then(() => true, () => false);
    if (reachable || started.some(alive)) await new Promise((r) => setTimeout(r, 50));
  }
  t.false(reachable, 'the port was released');
  t.deepEqual(started.filter(alive), [], 'no process of `npm start` is left');
});

test('a refused start (port in use, an address not of this machine) creates nothing in a fresh data folder', async (t) => {
  const parent = mkdtempSync(join(tmpdir(), 'cns-serve-'));
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  const holder = createNetServer();
  await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
  t.teardown(() => holder.close());
  const port = (holder.address() as AddressInfo).port;
  const start = async (args: string[]) => {
    const m = memoryIo({ env: { ...cleanEnv(), CNS_LOG_LEVEL: 'silent' } });
    return { code: await runCli(['serve', ...args], m.io), stderr: m.stderr() };
  };
  const fresh = join(parent, 'data');
  const taken = await start(['--port', String(port), '--host', '127.0.0.1', '--data-dir', fresh]);
  t.is(taken.code, 1);
  t.regex(taken.stderr, /port \d+ is already in use/);
  t.false(existsSync(fresh), 'no data folder');
  // 203.0.113.0/24 is reserved for documentation: never an address of this machine.
  const badHost = await start(['--port', '0', '--host', '203.0.113.7', '--data-dir', fresh]);
  t.is(badHost.code, 1);
  t.is(badHost.stderr, 'cns: cannot listen on 203.0.113.7:0: 203.0.113.7 is not an address of this machine (HOST or --host)\n');
  t.false(existsSync(fresh), 'no data folder');
  const empty = mkdtempSync(join(parent, 'empty-'));
  t.is((await start(['--port', String(port), '--host', '127.0.0.1', '--data-dir', empty])).code, 1);
  t.deepEqual(readdirSync(empty), [], 'nothing created in an existing empty folder');
});
