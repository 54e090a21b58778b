import test from 'ava';
// cns-test: its servers bring their own PostgreSQL database
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnServe, type ServeProcess } from '../helpers/cli.ts';
import { migratedDatabases } from '../helpers/migratedPostgres.ts';
import { startNatsCluster, type NatsCluster } from '../helpers/natsCluster.ts';
import { SUITE_SETTINGS } from '../helpers/testSettings.ts';
import { tcpProxy, type TcpProxy } from '../helpers/tcpProxy.ts';
import { freePort } from './nodesHarness.ts';

// Faults of a real cluster: three `cns serve` processes (each its own data folder and port, one
// shared signing.key) on a NATS JetStream cluster and a PostgreSQL database of this file's own.
// A node is killed with SIGKILL in the middle of a stream of writes: nothing it acknowledged may
// be lost, and the others go on (docs/design/cluster.md §9).

const migrated = migratedDatabases(test.after.always);
const EMAIL = 'admin@example.com';
const PASSWORD = 'admin-password-1';

interface Node {
  id: string;
  dir: string;
  port: number;
  proc: ServeProcess | null;
}

let nats: NatsCluster | null = null;
/** The nodes reach PostgreSQL through it, so a test can take the database away and bring it back. */
let proxy: TcpProxy | null = null;
const nodes = new Map<string, Node>();
let databaseUrl = '';
const key = randomBytes(48).toString('base64');
const agent = new Agent({ keepAlive: true });

test.before(async () => {
  nats = await startNatsCluster(3);
  proxy = await tcpProxy({ host: '127.0.0.1', port: 5432 });
  const direct = new URL((await migrated()).url);
  direct.port = String(proxy.port);
  databaseUrl = direct.toString();
  for (const id of ['f1', 'f2', 'f3']) {
    const dir = mkdtempSync(join(tmpdir(), `cns-${id}-`));
    writeFileSync(join(dir, 'signing.key'), key + '\n', { mode: 0o600 });
    nodes.set(id, { id, dir, port: await freePort(), proc: null });
    await start(id);
  }
});

test.after.always(async () => {
  for (const n of nodes.values()) {
    n.proc?.child.kill('SIGKILL');
    await n.proc?.exited;
    rmSync(n.dir, { recursive: true, force: true });
  }
  await nats?.stop();
  await proxy?.close();
  agent.destroy();
});

async function start(id: string): Promise<void> {
  const n = nodes.get(id)!;
  n.proc = spawnServe(['--port', String(n.port), '--host', '127.0.0.1', '--data-dir', n.dir], {
    ...SUITE_SETTINGS,
    CNS_ADMIN_EMAIL: EMAIL,
    CNS_ADMIN_PASSWORD: PASSWORD,
    CNS_DATABASE_URL: databaseUrl,
    CNS_DATABASE_POOL: '4',
    CNS_BUS_URL: nats!.urls.join(','),
    CNS_NODE_ID: id,
    CNS_NODE_URL: `http://127.0.0.1:${n.port}`,
    CNS_CLUSTER_HEARTBEAT_MS: '100',
    // 2 s: a node killed is failed over within seconds, and late beats on a busy CI machine are not taken for a death.
    CNS_CLUSTER_DOWN_AFTER_MS: '2000',
    CNS_REPLICATION_TIMEOUT_MS: '3000',
  });
  await n.proc.waitFor(/listening on/);
}

async function kill(id: string): Promise<void> {
  const n = nodes.get(id)!;
  n.proc!.child.kill('SIGKILL');
  await n.proc!.exited;
  n.proc = null;
}

function api(id: string, method: string, path: string, o: { token?: string; body?: unknown } = {}): Promise<{ status: number; body: any }> {
  const n = nodes.get(id)!;
  const data = o.body === undefined ? undefined : Buffer.from(JSON.stringify(o.body));
  return new Promise((resolve) => {
    const req = request(
      { host: '127.0.0.1', port: n.port, method, path: `/api/v1${path}`, agent, timeout: 15_000, headers: { ...(data && { 'content-type': 'application/json', 'content-length': String(data.length) }), ...(o.token && { authorization: `Bearer ${o.token}` }) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let body: unknown = null;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            body = Buffer.concat(chunks).toString('utf8');
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
        res.on('error', () => resolve({ status: 0, body: null }));
      },
    );
    // A node killed under the request: no answer is no acknowledgement.
    req.on('error', () => resolve({ status: 0, body: null }));
    req.on('timeout', () => req.destroy());
    req.end(data);
  });
}

let admin: { token: string; orgId: string } | null = null;

/** The administrator's token and organization (set up once), and a new project created through `via`: placed on `via`. */
async function session(via: string): Promise<{ token: string; projectId: string }> {
  if (!admin) {
    const login = await api(via, 'POST', '/auth/login', { body: { email: EMAIL, password: PASSWORD } });
    const token = login.body.data.access_token as string;
    const init = await api(via, 'POST', '/auth/initialize', { token });
    if (init.status !== 200 && init.status !== 201) throw new Error(`initialize failed: ${JSON.stringify(init.body)}`);
    admin = { token, orgId: init.body.data.organization.id as string };
  }
  const created = await api(via, 'POST', '/projects/', { token: admin.token, body: { name: `faults-${Date.now()}`, org_id: admin.orgId } });
  if (created.status !== 201 && created.status !== 200) throw new Error(`project not created: ${JSON.stringify(created.body)}`);
  return { token: admin.token, projectId: created.body.data.id as string };
}

/** Writes one new file every 50 ms (20 writes/s) through `via` until stopped; records what was acknowledged. */
function writeStream(via: () => string, token: string, projectId: string, tag: string) {
  const acknowledged: string[] = [];
  const statuses = new Map<number, number>();
  let stop = false;
  let i = 0;
  const done = (async () => {
    while (!stop) {
      const path = `${tag}/w${i++}.md`;
      const began = Date.now();
      const w = await api(via(), 'POST', `/content/${projectId}/write`, { token, body: { path, content: `${tag} ${i}`, node_type: 'markdown' } });
      statuses.set(w.status, (statuses.get(w.status) ?? 0) + 1);
      if (w.status === 200 || w.status === 201) acknowledged.push(path);
      await new Promise((r) => setTimeout(r, Math.max(0, 50 - (Date.now() - began))));
    }
  })();
  return {
    acknowledged,
    statuses,
    count: () => acknowledged.length,
    async stop() {
      stop = true;
      await done;
    },
  };
}

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function readable(via: string, token: string, projectId: string, paths: string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const path of paths) {
    let r = await api(via, 'GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token });
    // A 503 says "retry" (Retry-After: a node just resumed, a placement a second old): clients do, for a few seconds.
    for (let tries = 0; r.status === 503 && tries < 50; tries++) {
      await new Promise((res) => setTimeout(res, 100));
      r = await api(via, 'GET', `/content/${projectId}/cat?path=${encodeURIComponent(path)}`, { token });
    }
    if (r.status !== 200) missing.push(`${path} (${r.status})`);
  }
  return missing;
}

test.serial('kill -9 of a replica: writes go on with two of three copies, and the replica catches up when it returns', async (t) => {
  const { token, projectId } = await session('f1'); // placed on f1
  const stream = writeStream(() => 'f2', token, projectId, 'replica');
  await until('some writes', () => stream.count() >= 10);
  await kill('f3');
  const before = stream.count();
  await until('writes after the replica died', () => stream.count() >= before + 20);
  await start('f3');
  await until('more writes with the replica back', () => stream.count() >= before + 30);
  await stream.stop();
  t.deepEqual(await readable('f3', token, projectId, stream.acknowledged), []);
  t.true(stream.acknowledged.length >= before + 30, `statuses: ${JSON.stringify([...stream.statuses])}`);
});

test.serial('kill -9 of the primary during a stream of writes: every acknowledged write is readable afterwards, and a new primary takes writes within seconds', async (t) => {
  const { token, projectId } = await session('f1'); // placed on f1
  const stream = writeStream(() => 'f2', token, projectId, 'primary');
  await until('some writes', () => stream.count() >= 20);
  const killed = Date.now();
  await kill('f1');
  const before = stream.count();
  await until('writes taken by a new primary', () => stream.count() >= before + 5, 30_000);
  const resumedAfter = Date.now() - killed;
  await stream.stop();
  t.log(`writes resumed ${resumedAfter} ms after kill -9 of the primary; statuses ${JSON.stringify([...stream.statuses])}`);
  t.true(resumedAfter < 10_000, `resumed after ${resumedAfter} ms`);
  for (const via of ['f2', 'f3']) t.deepEqual(await readable(via, token, projectId, stream.acknowledged), [], `through ${via}`);
  // The old primary comes back as a replica: it may not move main on its own, and it catches up.
  await start('f1');
  const w = await api('f1', 'POST', `/content/${projectId}/write`, { token, body: { path: 'primary/back.md', content: 'back', node_type: 'markdown' } });
  t.true(w.status === 201 || w.status === 200, JSON.stringify(w.body));
  t.deepEqual(await readable('f1', token, projectId, [...stream.acknowledged, 'primary/back.md']), []);
});

test.serial('a stale primary (paused past down-after, then resumed) cannot move main: the others elected another, and it rejoins as a replica', async (t) => {
  const { token, projectId } = await session('f2'); // placed on f2
  const stream = writeStream(() => 'f3', token, projectId, 'stale');
  await until('some writes', () => stream.count() >= 10);
  const paused = nodes.get('f2')!.proc!.child;
  paused.kill('SIGSTOP');
  const before = stream.count();
  await until('writes taken by a new primary while f2 is paused', () => stream.count() >= before + 10, 30_000);
  paused.kill('SIGCONT');
  // Through the resumed node: its own write path is fenced (not the primary any more), so the write is
  // forwarded, or refused with 503 while its placement is a second old; either way never written there alone.
  await until('a write through the resumed node', async () => {
    const w = await api('f2', 'POST', `/content/${projectId}/write`, { token, body: { path: 'stale/resumed.md', content: 'resumed', node_type: 'markdown' } });
    return w.status === 201 || w.status === 200;
  });
  await stream.stop();
  for (const via of ['f1', 'f2', 'f3']) t.deepEqual(await readable(via, token, projectId, [...stream.acknowledged, 'stale/resumed.md']), [], `through ${via}`);
  const placement = await api('f1', 'GET', '/cluster', { token });
  t.is(placement.status, 200);
});

/** A public page, as any visitor gets it from node `id` (no credentials). */
function page(id: string, key: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: nodes.get(id)!.port, path: `/api/v1/p/${key}`, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end();
  });
}

test.serial('the bus between nodes on NATS: a publish turned off through one node stops being served by another at once, also after kill -9 of a NATS server', async (t) => {
  const { token, projectId } = await session('f1');
  const w = await api('f1', 'POST', `/content/${projectId}/write`, { token, body: { path: 'site/page.md', content: '# Public\n', node_type: 'markdown' } });
  t.is(w.status, 201, JSON.stringify(w.body));
  const created = await api('f1', 'POST', '/publishes/', { token, body: { project_id: projectId, node_id: w.body.data.id } });
  t.is(created.status, 201, JSON.stringify(created.body));
  const { id, publish_key: key } = created.body.data as { id: string; publish_key: string };
  // Served by f3 from its own copy (public pages are not routed), and cached there.
  await until('the page served by f3', async () => (await page('f3', key)) === 200);
  const toggle = async (enabled: boolean, want: number, what: string) => {
    const r = await api('f1', 'PATCH', `/publishes/${id}`, { token, body: { enabled } });
    t.is(r.status, 200, JSON.stringify(r.body));
    await until(what, async () => (await page('f3', key)) === want, 20_000);
  };
  await toggle(false, 404, 'f3 stops serving a disabled publish (publish-changed through NATS)');
  await toggle(true, 200, 'f3 serves it again');
  await nats!.kill(0);
  await toggle(false, 404, 'the signal still crosses with one NATS server killed');
  await nats!.restart(0);
});

test.serial('PostgreSQL goes away and comes back: requests answer 503 meanwhile, then writes go on with no failover', async (t) => {
  const { token, projectId } = await session('f1');
  const first = await api('f2', 'POST', `/content/${projectId}/write`, { token, body: { path: 'pg/before.md', content: 'before', node_type: 'markdown' } });
  t.is(first.status, 201, JSON.stringify(first.body));
  await proxy!.down();
  // Placements are cached for a second, and so are credentials: wait until the nodes need the database.
  let during = { status: 0, body: null as any };
  await until('a 503 while the database is away', async () => {
    during = await api('f2', 'POST', `/content/${projectId}/write`, { token, body: { path: 'pg/during.md', content: 'during', node_type: 'markdown' } });
    return during.status === 503;
  });
  t.is(during.body?.success, false);
  await proxy!.up();
  await until('writes again', async () => {
    const w = await api('f2', 'POST', `/content/${projectId}/write`, { token, body: { path: 'pg/after.md', content: 'after', node_type: 'markdown' } });
    return w.status === 201 || w.status === 200;
  });
  const placement = await api('f1', 'GET', '/cluster', { token });
  t.is(placement.status, 200);
  t.deepEqual(await readable('f3', token, projectId, ['pg/before.md', 'pg/after.md']), []);
});
