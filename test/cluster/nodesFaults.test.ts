import test from 'ava';
// cns-test: its servers bring their own PostgreSQL database
import { request } from 'node:http';
import { migratedDatabases } from '../helpers/migratedPostgres.ts';
import { startNatsCluster, type NatsCluster } from '../helpers/natsCluster.ts';
import { tcpProxy, type TcpProxy } from '../helpers/tcpProxy.ts';
import { SpawnedNodes, until } from './nodesHarness.ts';

// Faults of a real cluster: three `cns serve` processes (each its own data folder and port, one
// shared signing.key) on a NATS JetStream cluster and a PostgreSQL database of this file's own.
// A node is killed with SIGKILL in the middle of a stream of writes: nothing it acknowledged may
// be lost, and the others go on (docs/design/cluster.md §9).

const migrated = migratedDatabases(test.after.always);

let nats: NatsCluster | null = null;
/** The nodes reach PostgreSQL through it, so a test can take the database away and bring it back. */
let proxy: TcpProxy | null = null;
let cluster: SpawnedNodes | null = null;

test.before(async () => {
  nats = await startNatsCluster(3);
  proxy = await tcpProxy({ host: '127.0.0.1', port: 5432 });
  const direct = new URL((await migrated()).url);
  direct.port = String(proxy.port);
  cluster = new SpawnedNodes({ databaseUrl: direct.toString(), busUrls: nats.urls });
  for (const id of ['f1', 'f2', 'f3']) await cluster.add(id);
});

test.after.always(async () => {
  await cluster?.close();
  await nats?.stop();
  await proxy?.close();
});

const api: SpawnedNodes['api'] = (...args) => cluster!.api(...args);
const session = (via: string) => cluster!.session(via, 'faults');
const writeStream: SpawnedNodes['writeStream'] = (...args) => cluster!.writeStream(...args);
const readable: SpawnedNodes['readable'] = (...args) => cluster!.readable(...args);
const kill = (id: string) => cluster!.kill(id);
const start = (id: string) => cluster!.start(id);

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
  const paused = cluster!.node('f2').proc!.child;
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
    const req = request({ host: '127.0.0.1', port: cluster!.node(id).port, path: `/api/v1/p/${key}` }, (res) => {
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
