import test from 'ava';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { ClusterJoinRefused, ClusterMembership } from '../../src/cluster/membership.ts';
import type { ClusterSettings } from '../../src/config/clusterSettings.ts';
import { openPostgresMetadata } from '../../src/db/metadata/postgresMetadata.ts';
import type { MetadataStore } from '../../src/db/metadata/metadataStore.ts';
import { openPostgresPool } from '../../src/db/postgres/pool.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { migratedDatabases } from '../helpers/migratedPostgres.ts';

/**
 * Membership of nodes on one real PostgreSQL database, with fast timings: a heartbeat of 100 ms,
 * and a down-after a loaded machine keeps to (a stalled test process would mark live nodes down).
 */

const migrated = migratedDatabases(test.after.always);
const TIMING = { heartbeatMs: 100, downAfterMs: 1000 };
const DEADLINE_MS = 15_000;

async function cluster(t: { teardown(fn: () => unknown): void }, timing = TIMING) {
  const d = await migrated();
  const metadata: MetadataStore = openPostgresMetadata(openPostgresPool(d.url, { statementTimeoutMs: 10_000, max: 6 }));
  const key = randomBytes(48);
  const members: ClusterMembership[] = [];
  const logged: string[] = [];
  const logger = createLogger('info', new Writable({ write: (chunk, _enc, done) => (logged.push(String(chunk)), done()) }));
  t.teardown(async () => {
    await Promise.all(members.map((m) => m.close()));
    await metadata.close();
  });
  const node = (id: string, o: { url?: string; key?: Uint8Array; replicas?: number; db?: MetadataStore['db'] } = {}) => {
    const settings: Pick<ClusterSettings, 'nodeId' | 'nodeUrl' | 'replicas' | 'heartbeatMs' | 'downAfterMs'> = { nodeId: id, nodeUrl: o.url ?? `http://${id}.test:8080`, replicas: o.replicas ?? 3, ...timing };
    const m = new ClusterMembership({ db: o.db ?? metadata.db, settings, signingSecret: o.key ?? key, version: '9.9.9', logger });
    members.push(m);
    return m;
  };
  const states = async () => Object.fromEntries((await sql<{ node_id: string; state: string }>`SELECT node_id, state FROM cluster_nodes`.execute(metadata.db)).rows.map((r) => [r.node_id, r.state]));
  return { metadata, url: d.url, node, states, logged };
}

/** Polls `check` until it holds, or fails after the deadline. */
async function eventually(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + DEADLINE_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('three nodes join one database; the first writes the key fingerprint and the replica count; nodes() lists them with PostgreSQL ages', async (t) => {
  const c = await cluster(t);
  const [a, b, n3] = [c.node('a'), c.node('b'), c.node('c')];
  await Promise.all([a.join(), b.join(), n3.join()]);
  t.deepEqual(await c.states(), { a: 'up', b: 'up', c: 'up' });
  const config = (await c.metadata.db.selectFrom('cluster_config').selectAll().orderBy('key').execute()).map((r) => r.key);
  t.deepEqual(config, ['key_fingerprint', 'replicas']);
  t.not(a.incarnation, b.incarnation);
  const nodes = await a.nodes();
  t.deepEqual(nodes.map((n) => [n.id, n.url, n.state, n.version]), [
    ['a', 'http://a.test:8080', 'up', '9.9.9'],
    ['b', 'http://b.test:8080', 'up', '9.9.9'],
    ['c', 'http://c.test:8080', 'up', '9.9.9'],
  ]);
  for (const n of nodes) {
    t.true(n.heartbeatAgeMs >= 0 && n.heartbeatAgeMs < 60_000, `${n.id}: an age in milliseconds`);
    t.regex(n.startedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  }
  // Beats go on: each node's age stays below down-after, and one of them coordinates.
  await eventually('a coordinator', () => [a, b, n3].some((m) => m.coordinator));
  t.is([a, b, n3].filter((m) => m.coordinator).length, 1, 'one coordinator');
  t.true(a.lastBeatAt !== null);
});

test('a node with another signing key, or another replica count, is refused with one line and leaves no row', async (t) => {
  const c = await cluster(t);
  await c.node('a').join();
  const wrongKey = await t.throwsAsync(c.node('b', { key: randomBytes(48) }).join(), { instanceOf: ClusterJoinRefused });
  t.is(wrongKey?.message, "this node's signing.key differs from the cluster's: copy the first node's data-folder signing.key to every node");
  const wrongReplicas = await t.throwsAsync(c.node('c', { replicas: 5 }).join(), { instanceOf: ClusterJoinRefused });
  t.is(wrongReplicas?.message, "CNS_REPLICAS is 5 but the cluster's is 3: every node must set the same");
  t.deepEqual(await c.states(), { a: 'up' });
});

test('a node id that is up at another address with a fresh heartbeat is refused; once that node is down, the id may join elsewhere', async (t) => {
  // A long down-after: the first node's heartbeat stays fresh whatever the machine's load.
  const c = await cluster(t, { heartbeatMs: 100, downAfterMs: 30_000 });
  const first = c.node('a');
  await first.join();
  const twin = c.node('a', { url: 'http://elsewhere.test:8080' });
  const refused = await t.throwsAsync(twin.join(), { instanceOf: ClusterJoinRefused });
  t.is(refused?.message, 'node id a is up at http://a.test:8080 with a fresh heartbeat: give this node another CNS_NODE_ID (or stop that node)');
  await first.leave();
  t.deepEqual(await c.states(), { a: 'down' }, 'a clean stop marks its row down');
  await twin.join();
  t.is((await twin.nodes())[0]?.url, 'http://elsewhere.test:8080');
});

test('a node that stops beating is marked down by the coordinator within a deadline, and the lease passes on when its holder stops', async (t) => {
  const c = await cluster(t);
  const [a, b, n3] = [c.node('a'), c.node('b'), c.node('c')];
  await a.join();
  await eventually('a coordinating', () => a.coordinator);
  await Promise.all([b.join(), n3.join()]);
  // c stops without a word (a crash): the coordinator marks it down.
  await n3.close();
  await eventually('c marked down', async () => (await c.states()).c === 'down');
  t.deepEqual(await c.states(), { a: 'up', b: 'up', c: 'down' });
  const epoch = (await c.metadata.db.selectFrom('cluster_leases').select('epoch').where('name', '=', 'coordinator').executeTakeFirstOrThrow()).epoch;
  // The coordinator crashes too: once its lease expires, b takes it (a new epoch) and marks a down.
  await a.close();
  await eventually('b coordinating', () => b.coordinator);
  await eventually('a marked down', async () => (await c.states()).a === 'down');
  const lease = await c.metadata.db.selectFrom('cluster_leases').select(['holder', 'epoch']).where('name', '=', 'coordinator').executeTakeFirstOrThrow();
  t.is(lease.holder, `b:${b.incarnation}`);
  t.is(lease.epoch, epoch + 1);
  t.is((await c.states()).b, 'up');
  t.true(c.logged.some((l) => l.includes('nodes without a heartbeat marked down')));
});

test('a clean stop lets the lease go at once: the next node takes it without waiting for it to expire', async (t) => {
  // A lease that would last 30 s: b can only have it because a let it go.
  const c = await cluster(t, { heartbeatMs: 100, downAfterMs: 30_000 });
  const [a, b] = [c.node('a'), c.node('b')];
  await a.join();
  await eventually('a coordinating', () => a.coordinator);
  await b.join();
  await a.leave();
  const left = Date.now();
  await eventually('b coordinating', () => b.coordinator);
  t.true(Date.now() - left < 30_000, 'before the lease would have expired');
  t.is((await c.states()).a, 'down');
});

test("a node that joins again takes a new incarnation; the old run's next beat reports the loss and stops", async (t) => {
  const c = await cluster(t);
  const lost: string[] = [];
  const old = c.node('a');
  await old.join((reason) => lost.push(reason));
  const oldIncarnation = old.incarnation;
  const again = c.node('a');
  await again.join();
  t.not(again.incarnation, oldIncarnation);
  await eventually('the loss reported', () => lost.length > 0);
  t.deepEqual(lost, [`node id a was taken by another run of it (incarnation ${oldIncarnation} no longer matches)`]);
  t.is(old.incarnation, null);
  t.false(await old.beat(), 'no more beats from the old run');
  t.is(lost.length, 1, 'reported once');
  t.true(c.logged.some((l) => l.includes('"level":50') && l.includes('this node stops')));
  // The old run leaving changes nothing of the new one's row.
  await old.leave();
  t.is((await c.states()).a, 'up');
  t.true(await again.beat());
});

test('a live node the coordinator marked down (late beats) comes back up under a new incarnation, without reporting a loss', async (t) => {
  const c = await cluster(t);
  const lost: string[] = [];
  const a = c.node('a');
  await a.join((reason) => lost.push(reason));
  const first = a.incarnation;
  await sql`UPDATE cluster_nodes SET state = 'down' WHERE node_id = 'a'`.execute(c.metadata.db);
  await eventually('a back under a new incarnation', () => a.incarnation !== first);
  t.is((await c.states()).a, 'up');
  t.is((await c.metadata.db.selectFrom('cluster_nodes').select('incarnation').where('node_id', '=', 'a').executeTakeFirstOrThrow()).incarnation, a.incarnation!);
  t.true(await a.beat());
  t.deepEqual(lost, []);
  t.true(c.logged.some((l) => l.includes('it is up again under a new incarnation')));
});

test('a beat that fails (PostgreSQL away) answers false, is logged once per episode and never throws', async (t) => {
  const c = await cluster(t);
  // A store of its own, closed under the node: every query fails from then on.
  const away = openPostgresMetadata(openPostgresPool(c.url, { statementTimeoutMs: 10_000, max: 1 }));
  const a = c.node('a', { db: away.db });
  await a.join();
  await away.close();
  t.false(await a.beat());
  t.false(await a.beat());
  t.is(c.logged.filter((l) => l.includes('the heartbeat failed')).length, 1);
  t.false(a.coordinator);
});
