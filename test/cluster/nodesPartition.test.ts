import test from 'ava';
// cns-test: its servers bring their own PostgreSQL database
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { migratedDatabases } from '../helpers/migratedPostgres.ts';
import { startNatsCluster, type NatsCluster } from '../helpers/natsCluster.ts';
import { createNetNamespace, type NetNamespace } from '../helpers/netns.ts';
import { tcpProxy, type TcpProxy } from '../helpers/tcpProxy.ts';
import { SpawnedNodes, until } from './nodesHarness.ts';

// A network partition of one node of a real cluster (docs/design/cluster.md §9): three `cns serve`
// processes, two on the host and one in a network namespace of its own (test/helpers/netns.ts),
// with the NATS servers and PostgreSQL (through a proxy) on the host side of the namespace's veth
// pair. Cutting the namespace off the cluster's address stops the writes of the project its node
// is the primary of (none is acknowledged), the majority fails that project over and keeps
// writing the others, and once healed the node rejoins as a replica: nothing acknowledged is lost,
// nothing it wrote alone reaches `main`, and the three copies end on the same `main`.

const migrated = migratedDatabases(test.after.always);

let ns: NetNamespace | null = null;
let nats: NatsCluster | null = null;
let proxy: TcpProxy | null = null;
let cluster: SpawnedNodes | null = null;
const NODES = ['p1', 'p2', 'p3'] as const;

test.before(async () => {
  ns = createNetNamespace();
  nats = await startNatsCluster(3, { host: ns.hostAddress });
  proxy = await tcpProxy({ host: '127.0.0.1', port: 5432 }, { host: ns.hostAddress });
  const direct = new URL((await migrated()).url);
  direct.hostname = ns.hostAddress;
  direct.port = String(proxy.port);
  cluster = new SpawnedNodes({ databaseUrl: direct.toString(), busUrls: nats.urls });
  await cluster.add('p1', { host: ns.hostAddress });
  await cluster.add('p2', { host: ns.hostAddress });
  // p3 listens inside the namespace; the test reaches it from the client address, which the partition spares.
  await cluster.add('p3', { host: ns.innerAddress, prefix: ns.exec, localAddress: ns.clientAddress });
});

test.after.always(async () => {
  await cluster?.close();
  await nats?.stop();
  await proxy?.close();
  ns?.remove();
});

/** `git` on node `id`'s copy of a project (a bare repository `<project>.git` in its data folder). */
function git(id: string, project: string, ...args: string[]): string {
  return execFileSync('git', ['--git-dir', join(cluster!.node(id).dir, `${project}.git`), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** The copy's `main` on node `id`, or null while it has none. */
function mainOf(id: string, project: string): string | null {
  try {
    return git(id, project, 'rev-parse', '--verify', '--quiet', 'refs/heads/main');
  } catch {
    return null;
  }
}

const ok = (status: number) => status === 200 || status === 201;

test('a network partition of one node: its writes stop, the majority fails its project over and keeps writing, and once healed it rejoins as a replica with nothing diverged', async (t) => {
  const c = cluster!;
  const a = await c.session('p3', 'partition-a'); // placed on p3: its primary is the node to be cut off
  const b = await c.session('p1', 'partition-b'); // placed on p1, with a copy on p3
  const token = a.token;
  await until('every node sees the three up', async () => {
    for (const id of NODES) {
      const r = await c.api(id, 'GET', '/cluster', { token });
      if (r.status !== 200 || (r.body.data.nodes as { state: string }[]).filter((n) => n.state === 'up').length !== 3) return false;
    }
    return true;
  });

  const aBefore = c.writeStream(() => 'p3', token, a.projectId, 'a-before');
  let turn = 0;
  // B through both outside nodes (p2 forwards to p1) for the whole test.
  const bStream = c.writeStream(() => (turn++ % 2 === 0 ? 'p1' : 'p2'), token, b.projectId, 'b');
  await until('writes to both projects before the partition', () => aBefore.count() >= 10 && bStream.count() >= 10);
  await aBefore.stop();
  const tipAtCut = mainOf('p3', a.projectId);

  ns!.partition();
  const cut = Date.now();
  const bAtCut = bStream.count();
  // Through the cut-off primary: none may be acknowledged (it cannot reach a quorum). A blackholed
  // request would hang, so each gets a few seconds (a quorum times out after 3 s: a 503).
  const aIsolated = c.writeStream(() => 'p3', token, a.projectId, 'a-isolated', { timeoutMs: 5_000 });
  // Through the majority: forwarded to p3 until the failover, then written by the new primary. A
  // request forwarded to the cut-off node ends with 503 once it is marked down (or its connection
  // is not taken within the down-after time): none waits for the client's timeout.
  const aMajority = c.writeStream(() => 'p1', token, a.projectId, 'a-majority', { timeoutMs: 10_000 });
  await until('A failed over: writes through the majority acknowledged again', () => aMajority.count() >= 10, 40_000);
  const failedOverAfter = Date.now() - cut;
  await until('B went on during the partition', () => bStream.count() >= bAtCut + 20, 20_000);
  await aIsolated.stop();
  // What the cut-off node holds now (it may have committed what it could not get acknowledged).
  const isolatedTip = mainOf('p3', a.projectId);
  t.true(aIsolated.contents.size >= 1, 'writes were tried through the cut-off primary');
  t.deepEqual(aIsolated.acknowledged, [], `no write through the cut-off primary is acknowledged; statuses ${JSON.stringify([...aIsolated.statuses])}`);

  ns!.heal();
  const healed = Date.now();
  // The healed node takes requests again: a write through it reaches the new primary (forwarded);
  // its own copy is fenced (the placement names another primary, at a newer epoch), so it never writes A itself.
  let back = { status: 0, body: null as any };
  await until(
    'a write through the healed node acknowledged',
    async () => {
      back = await c.api('p3', 'POST', `/content/${a.projectId}/write`, { token, body: { path: 'a-healed/back.md', content: 'back', node_type: 'markdown' }, timeoutMs: 5_000 });
      return ok(back.status);
    },
    40_000,
  );
  const rejoinedAfter = Date.now() - healed;
  const bAtHeal = bStream.count();
  await until('more writes to A and B after the heal', () => aMajority.count() >= 20 && bStream.count() >= bAtHeal + 10, 20_000);
  await aMajority.stop();
  await bStream.stop();
  t.log(`A failed over ${failedOverAfter} ms after the partition; p3 took a write ${rejoinedAfter} ms after the heal`);
  t.log(`statuses: A through p3 cut off ${JSON.stringify([...aIsolated.statuses])}, A through p1 ${JSON.stringify([...aMajority.statuses])}, B ${JSON.stringify([...bStream.statuses])}`);
  t.false(aMajority.statuses.has(0), `a request forwarded to the cut-off node was left hanging: ${JSON.stringify([...aMajority.statuses])}`);
  // B never depended on the cut-off node: every write to it was acknowledged, during the partition too.
  t.deepEqual(
    [...bStream.statuses.keys()].filter((s) => !ok(s)),
    [],
    `B's statuses ${JSON.stringify([...bStream.statuses])}`,
  );

  // The copies converge: the same `main` on all three, for both projects.
  let mains: Record<string, (string | null)[]> = {};
  await until(
    'the three copies of A and of B on the same main',
    () => {
      mains = { a: NODES.map((id) => mainOf(id, a.projectId)), b: NODES.map((id) => mainOf(id, b.projectId)) };
      return Object.values(mains).every((m) => m[0] !== null && m.every((x) => x === m[0]));
    },
    20_000,
  ).catch((err: Error) => {
    // What each copy of A says of itself, and what its node logged, for the failure's message.
    for (const id of NODES) {
      const copyFile = join(c.node(id).dir, `${a.projectId}.git`, 'cns-copy.json');
      const copy = existsSync(copyFile) ? `${readFileSync(copyFile, 'utf8')}\n${git(id, a.projectId, 'for-each-ref')}` : 'no copy';
      t.log(`${id}: ${copy}\n${c.node(id).proc?.output().slice(-3000)}`);
    }
    t.fail(`${err.message}: ${JSON.stringify(mains)}`);
  });

  // p3's copy of A caught up as a replica, at a newer epoch than the one it wrote under.
  const state = JSON.parse(readFileSync(join(c.node('p3').dir, `${a.projectId}.git`, 'cns-copy.json'), 'utf8')) as { epoch: number; role: string };
  t.true(state.epoch >= 2, JSON.stringify(state));
  t.is(state.role, 'replica');

  // Every acknowledged write, with its content, through every node.
  const aAcknowledged = [...aBefore.acknowledged, ...aMajority.acknowledged, 'a-healed/back.md'];
  const aContents = new Map([...aBefore.contents, ...aMajority.contents, ['a-healed/back.md', 'back']]);
  for (const via of NODES) {
    t.deepEqual(await c.readable(via, token, a.projectId, aAcknowledged, aContents), [], `A through ${via}`);
    t.deepEqual(await c.readable(via, token, b.projectId, bStream.acknowledged, bStream.contents), [], `B through ${via}`);
  }
  // What only the cut-off node held is in no copy's `main`; its tail, if it committed one, is kept aside.
  const unacknowledged = aIsolated.unacknowledged();
  for (const id of NODES) {
    const files = new Set(git(id, a.projectId, 'ls-tree', '-r', '--name-only', 'refs/heads/main').split('\n'));
    t.deepEqual(
      unacknowledged.filter((p) => files.has(p)),
      [],
      `unacknowledged writes in ${id}'s main`,
    );
  }
  const kept = (() => {
    try {
      git('p3', a.projectId, 'merge-base', '--is-ancestor', isolatedTip!, 'refs/heads/main');
      return true;
    } catch {
      return false;
    }
  })();
  if (!kept) {
    const lost = git('p3', a.projectId, 'for-each-ref', '--format=%(objectname)', 'refs/cns/lost/').split('\n');
    t.true(lost.includes(isolatedTip!), `p3's unacknowledged tail ${isolatedTip} is under refs/cns/lost/ (${lost.join(', ')})`);
  }
  t.log(`unacknowledged writes through p3: ${unacknowledged.length}; p3 ${isolatedTip === tipAtCut ? 'committed none of them' : 'committed a tail'}${kept ? '' : ', kept under refs/cns/lost/'}`);
});
