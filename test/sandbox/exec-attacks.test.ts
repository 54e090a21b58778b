import test from 'ava';
import { existsSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { contentApi, createProject, defaultProject, type ContentCall } from '../helpers/project.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { leavesNoHostMounts } from '../helpers/hostMounts.ts';

leavesNoHostMounts(test);

// Each attack runs through HTTP and must fail inside the sandbox, leaving the host and the project untouched.
const CANARY = 'sandbox-canary-7f3a9c';
process.env.CNS_TEST_CANARY = CANARY;

let server: TestServer;
let token: string;
let projectId: string;
let c: ContentCall;
let endpointId: string;
let key: string;
let listener: Server;
let listenerPort: number;
let connections = 0;

test.before(async () => {
  server = await startTestServer({}, { CNS_SANDBOX: 'bwrap' });
  ({ token } = await server.login());
  let orgId: string;
  ({ projectId, orgId } = await defaultProject(server, token));
  c = contentApi(server, token, projectId);
  await c('POST', '/write', { path: 'box/readme.md', node_type: 'markdown', content: 'inside' });
  const other = await createProject(server, token, orgId, 'neighbour');
  await contentApi(server, token, other)('POST', '/write', { path: 'private.md', node_type: 'markdown', content: 'neighbour secret' });
  const node = server.services.content.findByPath(projectId, 'box')!.id;
  const r = await server.api('POST', '/sandbox-endpoints/', {
    token,
    body: { name: 'attacked', project_id: projectId, node_id: node, limits: { timeout_s: 3, memory_mb: 64, max_processes: 32, disk_mb: 16 } },
  });
  endpointId = r.body.data.sandbox_endpoint.id;
  key = r.body.data.key;
  listener = createServer((s) => {
    connections++;
    s.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  listenerPort = (listener.address() as { port: number }).port;
});

test.after.always(async () => {
  listener?.close();
  await server?.stop();
});

const exec = (command: string, extra: Record<string, unknown> = {}) =>
  server.api('POST', `/sandbox-endpoints/${endpointId}/exec`, { token: key, body: { command, ...extra } });
const version = () => server.services.content.projectVersion(projectId);

async function attack(t: import('ava').ExecutionContext, command: string, extra: Record<string, unknown> = {}) {
  const before = version();
  const r = await exec(command, extra);
  t.is(r.status, 200, JSON.stringify(r.body).slice(0, 400));
  t.is(version(), before, 'the project did not change');
  t.deepEqual(r.body.data.changes, []);
  return r.body.data as { stdout: string; stderr: string; exit_code: number; timed_out: boolean; skipped: { path: string; reason: string }[]; duration_ms: number };
}

test.serial('no network: TCP to 127.0.0.1 (PostgreSQL, a local listener) fails and name resolution fails', async (t) => {
  const d = await attack(
    t,
    `python3 -c "
import socket
for port in (5432, ${listenerPort}):
    try:
        socket.create_connection(('127.0.0.1', port), timeout=1); print('CONNECTED', port)
    except Exception as e: print('refused', port, type(e).__name__)
try:
    print('RESOLVED', socket.gethostbyname('localhost.localdomain'), socket.gethostbyname('example.com'))
except Exception as e: print('no resolution', type(e).__name__)
"; getent hosts example.com || echo getent-failed`,
  );
  t.notRegex(d.stdout, /CONNECTED|RESOLVED/);
  t.regex(d.stdout, /refused 5432/);
  t.regex(d.stdout, /no resolution/);
  t.is(connections, 0, 'the host listener saw no connection');
});

test.serial("secrets of the host stay out of reach: /etc/shadow, the data folder, /proc/1/environ, another project's files", async (t) => {
  const d = await attack(
    t,
    `cat /etc/shadow; cat ${join(server.dataDir, 'cns.db')} | head -c 100; ls ${server.dataDir}; cat /proc/1/environ; env; ` +
      `cat ${server.dataDir}/*.git/HEAD; find / -name '*.git' -maxdepth 4 2>/dev/null; echo done`,
  );
  t.regex(d.stdout, /done/);
  t.false(d.stdout.includes(CANARY) || d.stderr.includes(CANARY), 'the service environment is not visible');
  t.notRegex(d.stdout, /neighbour secret|SQLite format|ref: refs/);
  t.regex(d.stderr, /shadow: No such file or directory/);
});

test.serial('a fork bomb is stopped by the process limit and the next command runs normally', async (t) => {
  const d = await attack(t, 'bomb() { bomb | bomb; }; bomb', { timeout_s: 3 });
  t.true(d.timed_out || d.exit_code !== 0);
  t.true(d.duration_ms < 6000);
  const next = await exec('echo ok');
  t.is(next.body.data.stdout, 'ok\n');
});

test.serial('allocating past the memory limit kills the command', async (t) => {
  const d = await attack(t, `python3 -c "x = bytearray(256 * 1024 * 1024); print('ALLOCATED')"`);
  t.notRegex(d.stdout, /ALLOCATED/);
  t.not(d.exit_code, 0);
});

test.serial('an endless loop is killed at the timeout', async (t) => {
  const d = await attack(t, 'while true; do :; done', { timeout_s: 1 });
  t.true(d.timed_out);
  t.true(d.duration_ms >= 900 && d.duration_ms < 5000, `duration ${d.duration_ms}`);
});

test.serial('writing 2 GiB fails at the disk limit and nothing is written back', async (t) => {
  const d = await attack(t, 'head -c 2G /dev/zero > big; echo "exit $?"; ls -l big; rm -f big');
  t.notRegex(d.stdout, /exit 0/);
});

test.serial('entries the content API would refuse are skipped, not written: a symlink to /etc/passwd, .git/config, a backslash name, .cnskeep', async (t) => {
  const root = version();
  const d = await attack(t, "ln -s /etc/passwd passwd.md; mkdir -p .git; echo '[core]' > .git/config; echo x > 'a\\b.md'; touch .cnskeep; mkfifo pipe");
  const skipped = d.skipped.map((s) => s.path).sort();
  t.true(skipped.includes('passwd.md'), JSON.stringify(d.skipped));
  t.true(skipped.some((p) => p.startsWith('.git')), JSON.stringify(d.skipped));
  t.true(skipped.includes('a\\b.md'), JSON.stringify(d.skipped));
  t.true(skipped.includes('pipe'), JSON.stringify(d.skipped));
  t.is(version(), root);
  t.deepEqual(server.services.content.listChildren(projectId, 'box').map((n) => n.name), ['readme.md']);
});

test.serial('writing above the folder does not reach the host nor the project', async (t) => {
  const d = await attack(t, 'echo x > ../escape.md; echo x > /escape.md; echo x > /tmp/escape.md; ls -a / ..');
  t.is(server.services.content.findByPath(projectId, 'escape.md'), null);
  t.false(existsSync('/escape.md'));
  const sandboxRoot = server.services.sandbox.pool.reachableRoot;
  const seen = (dir: string): boolean =>
    existsSync(join(dir, 'escape.md')) || readdirSync(dir, { withFileTypes: true }).some((e) => e.isDirectory() && seen(join(dir, e.name)));
  t.false(existsSync(sandboxRoot) && seen(sandboxRoot));
  t.false(existsSync(join(dirname(server.dataDir), 'escape.md')));
  void d;
});
