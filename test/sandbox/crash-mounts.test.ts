import test from 'ava';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings } from '../../src/config/settings.ts';
import { spawnServe } from '../helpers/cli.ts';
import { hostMountsUnder, leavesNoHostMounts, usesSandboxRoot } from '../helpers/hostMounts.ts';
import { isRoot } from './workspaceHelpers.ts';

// Issue 28 point 7: the workspace pool's tmpfs and overlay mounts go with the service however it
// ends. A real `cns serve` runs a sandbox command, is killed with SIGKILL, and leaves no mount.

const ADMIN = { CNS_ADMIN_EMAIL: 'mounts@example.com', CNS_ADMIN_PASSWORD: 'mounts-password', CNS_RATE_LIMIT_MAX: '0', CNS_SANDBOX: 'bwrap' };

leavesNoHostMounts(test);

async function call(url: string, token: string | null, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}/api/v1${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { data: any } }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** The descendants of `pid`: with several workers the sandboxes belong to the workers, the service's children. */
function descendantsOf(pid: number): { pid: number; comm: string }[] {
  const children = childrenOf(pid);
  return [...children, ...children.flatMap((c) => descendantsOf(c.pid))];
}

/** The children of `pid` (from /proc/<child>/stat). */
function childrenOf(pid: number): { pid: number; comm: string }[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .flatMap((n) => {
      try {
        const stat = readFileSync(`/proc/${n}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        return ppid === pid ? [{ pid: Number(n), comm }] : [];
      } catch {
        return [];
      }
    });
}

/** Mount points under `root` in the mount namespace of `pid` (none once it has gone). */
function namespaceMountsUnder(pid: number, root: string): string[] {
  try {
    return readFileSync(`/proc/${pid}/mounts`, 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[1] ?? '')
      .filter((p) => p === root || p.startsWith(`${root}/`));
  } catch {
    return [];
  }
}

test('a service killed with SIGKILL leaves none of its sandbox mounts', async (t) => {
  if (!isRoot) return t.pass('the pool mounts only when the service runs as root');
  const dataDir = mkdtempSync(join(tmpdir(), 'cns-mounts-'));
  const sandboxDir = loadSettings({ CNS_DATA_DIR: dataDir }).sandboxDir;
  usesSandboxRoot(sandboxDir);
  t.teardown(() => {
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(sandboxDir, { recursive: true, force: true });
  });
  const before = hostMountsUnder(sandboxDir);

  const serve = spawnServe(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], ADMIN);
  t.teardown(() => serve.child.kill('SIGKILL'));
  const [, url] = await serve.waitFor(/listening on (http:\/\/\S+)/);
  const login = await call(url!, null, 'POST', '/auth/login', { email: ADMIN.CNS_ADMIN_EMAIL, password: ADMIN.CNS_ADMIN_PASSWORD });
  const token = login.body.data.access_token as string;
  const projectId = (await call(url!, token, 'POST', '/auth/initialize')).body.data.project.id as string;
  t.is((await call(url!, token, 'POST', `/content/${projectId}/write`, { path: 'work/a.md', node_type: 'markdown', content: 'a\n' })).status, 201);
  const workId = (await call(url!, token, 'GET', `/content/${projectId}/stat?path=work`)).body.data.id as string;
  const endpoint = await call(url!, token, 'POST', '/sandbox-endpoints/', { name: 'mounts', project_id: projectId, node_id: workId });
  t.is(endpoint.status, 201, JSON.stringify(endpoint.body));
  const run = await call(url!, endpoint.body.data.key, 'POST', `/sandbox-endpoints/${endpoint.body.data.sandbox_endpoint.id}/exec`, { command: 'cat a.md; echo b > b.md' });
  t.is(run.status, 200, JSON.stringify(run.body));
  t.is(run.body.data.stdout, 'a\n');

  // The pool's mounts exist, in the namespace its holder keeps, and none in the host's.
  // One pool per worker process (`--workers`, default one per core here): each keeps its own holder.
  const holders = descendantsOf(serve.child.pid!).filter((c) => c.comm === 'cat' && namespaceMountsUnder(c.pid, sandboxDir).length > 0).map((c) => c.pid);
  t.true(holders.length >= 1, JSON.stringify(descendantsOf(serve.child.pid!)));
  for (const holder of holders) t.true(namespaceMountsUnder(holder, sandboxDir).some((p) => p.startsWith(sandboxDir) && p.endsWith('/pristine')));
  t.deepEqual(hostMountsUnder(sandboxDir), before);

  serve.child.kill('SIGKILL');
  await serve.exited;
  // The holder's pipe closed with the service: it ends, and its namespace with every mount in it.
  const deadline = Date.now() + 15_000;
  while (holders.some((h) => namespaceMountsUnder(h, sandboxDir).length > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.deepEqual(holders.flatMap((h) => namespaceMountsUnder(h, sandboxDir)), []);
  t.deepEqual(hostMountsUnder(sandboxDir), before);
  t.deepEqual(before, []);
});
