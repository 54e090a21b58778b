import test from 'ava';
import { createServer, connect, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { stat, access } from 'node:fs/promises';
import { join } from 'node:path';
import { BwrapRuntime } from '../../src/sandbox/runtime/bwrapRuntime.ts';
import { MARKER, markedProcesses, removeFolders, run, secretFolder, workFolder } from './runtimeHelpers.ts';

const CANARY = `canary-${MARKER}-${Math.random().toString(36).slice(2)}`;
process.env.CNS_RT_ATTACK_CANARY = CANARY;

let bwrap: BwrapRuntime;
let server: Server;
let serverPort = 0;
let connections = 0;

test.before(async () => {
  bwrap = await BwrapRuntime.create();
  // A host service the sandbox must not reach, on every interface of the host.
  server = createServer((socket) => {
    connections++;
    socket.on('error', () => undefined);
    socket.end('hello from the host\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  serverPort = (server.address() as { port: number }).port;
});

test.after.always(async (t) => {
  server?.close();
  t.deepEqual(await bwrap.leftoverCgroups(), [], 'every run removed its cgroups');
  t.deepEqual(await markedProcesses(), [], 'no sandbox process is left');
  await removeFolders();
});

/** A host address that is not loopback (the sandbox has no route to it either). */
function hostAddress(): string | null {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return null;
}

function canConnect(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ port, host }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

const pyConnect = (host: string, port: number): string =>
  `python3 -c "import socket; s = socket.create_connection(('${host}', ${port}), timeout=3); print('CONNECTED', s.recv(100))"`;

test.serial('TCP to the host: PostgreSQL on 127.0.0.1:5432 and a host server are unreachable, and the server saw nothing', async (t) => {
  t.true(await canConnect(5432), 'PostgreSQL listens on the host (the attack would otherwise prove nothing)');
  t.true(await canConnect(serverPort), 'the host server answers the host');
  connections = 0;
  const dir = await workFolder(bwrap);
  const targets = [['127.0.0.1', 5432], ['127.0.0.1', serverPort], ['localhost', serverPort]] as [string, number][];
  const address = hostAddress();
  if (address) targets.push([address, serverPort]);
  for (const [host, port] of targets) {
    const r = await run(bwrap, dir, pyConnect(host, port));
    t.not(r.exitCode, 0, `${host}:${port}`);
    t.false(r.stdout.includes('CONNECTED'), `${host}:${port}`);
    t.regex(r.stderr, /Connection refused|Network is unreachable|Name or service not known|Temporary failure/, `${host}:${port}`);
  }
  const ip = await run(bwrap, dir, 'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "');
  t.is(ip.stdout, 'lo\n', 'the only interface is the namespace’s own loopback');
  t.is(connections, 0, 'the host server saw no connection');
});

test.serial('resolving a name fails', async (t) => {
  const dir = await workFolder(bwrap);
  const getent = await run(bwrap, dir, 'getent hosts example.com');
  t.not(getent.exitCode, 0);
  t.is(getent.stdout, '');
  const py = await run(bwrap, dir, 'python3 -c "import socket; print(socket.gethostbyname(\'example.com\'))"');
  t.not(py.exitCode, 0);
  t.regex(py.stderr, /gaierror/);
});

test.serial('/etc/shadow, the data folder and /root are not there', async (t) => {
  await access('/etc/shadow');
  const secret = `secret-${MARKER}`;
  const data = await secretFolder(secret);
  const dir = await workFolder(bwrap);
  const r = await run(bwrap, dir, `cat /etc/shadow; cat ${join(data, 'secret.txt')}; ls ${data}; ls /root; cat ../${join(data, 'secret.txt')}; find / \\( -path /proc -o -path /usr \\) -prune -o -name secret.txt -print; echo searched`);
  t.is(r.stdout, 'searched\n', 'nothing found, nothing printed');
  t.false(r.stdout.includes(secret));
  t.false(r.stderr.includes(secret));
  t.false(r.stdout.includes('secret.txt'), 'no file of that name anywhere in the sandbox');
  t.regex(r.stderr, /\/etc\/shadow: No such file or directory/);
  t.regex(r.stderr, new RegExp(`${join(data, 'secret.txt')}: No such file or directory`));
});

test.serial("/proc/1/environ and every other process's environment hold nothing of the service", async (t) => {
  const dir = await workFolder(bwrap);
  const r = await run(bwrap, dir, 'for f in /proc/[0-9]*/environ; do echo "== $f"; tr "\\0" "\\n" < $f; done; cat /proc/1/cmdline; env');
  t.regex(r.stdout, /== \/proc\/1\/environ/);
  t.false(r.stdout.includes(CANARY));
  t.false(r.stderr.includes(CANARY));
  t.false(r.stdout.includes('CNS_RT_ATTACK_CANARY'));
});

test.serial('a fork bomb hits the process limit, the run ends and the next run works', async (t) => {
  const dir = await workFolder(bwrap);
  const r = await run(bwrap, dir, 'bomb() { bomb | bomb & }; bomb; sleep 1; echo survived', { limits: { maxProcesses: 32, timeoutMs: 10_000 } });
  t.false(r.timedOut);
  t.regex(r.stderr, /Cannot fork|Resource temporarily unavailable/);
  const next = await run(bwrap, dir, 'echo fine');
  t.is(next.stdout, 'fine\n');
  t.is(next.exitCode, 0);
});

test.serial('allocating past the memory limit is killed', async (t) => {
  const dir = await workFolder(bwrap);
  const r = await run(bwrap, dir, 'python3 -c "b = bytearray(128 << 20); print(len(b))"', { limits: { memoryBytes: 64 * 1024 * 1024 } });
  t.not(r.exitCode, 0);
  t.is(r.stdout, '');
  t.false(r.timedOut);
  t.regex(r.stderr, /killed at the memory limit \(67108864 bytes\)/);
  const next = await run(bwrap, dir, 'python3 -c "b = bytearray(16 << 20); print(len(b))"', { limits: { memoryBytes: 64 * 1024 * 1024 } });
  t.is(next.stdout, `${16 << 20}\n`, 'the same limit lets a smaller allocation through');
});

test.serial('an endless loop is killed at the timeout', async (t) => {
  const dir = await workFolder(bwrap);
  const started = performance.now();
  const r = await run(bwrap, dir, 'while :; do :; done', { limits: { timeoutMs: 1000 } });
  const wall = performance.now() - started;
  t.true(r.timedOut);
  t.is(r.exitCode, 124);
  t.true(r.durationMs >= 1000 && r.durationMs < 2500, `ran ${r.durationMs} ms`);
  t.true(wall < 3000, `returned after ${wall} ms`);
});

test.serial('a background process that ignores signals is killed with the run at the timeout', async (t) => {
  const dir = await workFolder(bwrap);
  const r = await run(bwrap, dir, "trap '' TERM HUP INT; (trap '' TERM HUP INT; while :; do sleep 1; done) & setsid sh -c 'while :; do sleep 1; done' & wait", { limits: { timeoutMs: 800 } });
  t.true(r.timedOut);
  // The after hook checks that no marked process and no cgroup is left.
});

test.serial('writing 2 GiB stops at maxDiskBytes', async (t) => {
  const dir = await workFolder(bwrap);
  const maxDiskBytes = 4 * 1024 * 1024;
  const r = await run(bwrap, dir, 'head -c 2G /dev/zero > big', { limits: { maxDiskBytes } });
  t.not(r.exitCode, 0);
  t.regex(r.stderr, /File size limit exceeded/);
  t.true((await stat(join(dir, 'big'))).size <= maxDiskBytes);
  const tmp = await run(bwrap, dir, 'head -c 2G /dev/zero > /tmp/big; ls -l /tmp/big', { limits: { maxDiskBytes } });
  t.regex(tmp.stderr, /File size limit exceeded|No space left on device/);
  const size = Number(tmp.stdout.split(/\s+/)[4]);
  t.true(size <= maxDiskBytes, `/tmp file of ${size} bytes`);
  const core = await run(bwrap, dir, 'ls');
  t.is(core.stdout, 'big\n', 'no core file left behind');
});

test.serial('an output flood is cut at the cap, drained, and said so', async (t) => {
  const dir = await workFolder(bwrap);
  const maxOutputBytes = 64 * 1024;
  const ends = await run(bwrap, dir, 'yes | head -c 20M; yes err | head -c 20M >&2; echo done > done.txt', { limits: { maxOutputBytes } });
  t.false(ends.timedOut, 'the pipes were drained past the cap: the command ran to its end');
  t.is(ends.exitCode, 0);
  t.deepEqual(ends.truncated, { stdout: true, stderr: true });
  t.is(ends.stdout.length, maxOutputBytes);
  t.is(ends.stderr.length, maxOutputBytes);
  t.true(ends.stdout.startsWith('y\ny\n'));
  await access(join(dir, 'done.txt'));
  const endless = await run(bwrap, dir, 'yes', { limits: { maxOutputBytes, timeoutMs: 800 } });
  t.true(endless.timedOut);
  t.true(endless.truncated.stdout);
  t.is(endless.stdout.length, maxOutputBytes);
});

test.serial('the sandbox cannot make a user namespace of its own or see host processes', async (t) => {
  const dir = await workFolder(bwrap);
  const r = await run(bwrap, dir, 'unshare -U true; echo "unshare=$?"; ps -e -o comm= | sort -u | tr "\\n" " "');
  t.regex(r.stdout, /unshare=1/);
  t.false(/\bnode\b/.test(r.stdout), `host processes visible: ${r.stdout}`);
});
