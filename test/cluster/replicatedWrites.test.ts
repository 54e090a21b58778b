import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/database.ts';
import { ContentStore } from '../../src/content/contentStore.ts';
import { DeposedError, Replicator, type ReplicaClient } from '../../src/cluster/replication/replicator.ts';
import { ReplicaService } from '../../src/cluster/replication/replicaService.ts';
import { decodeShipment, encodeShipment } from '../../src/cluster/replication/shipment.ts';
import { readCopyState, writeCopyState } from '../../src/cluster/replication/copyState.ts';
import { ClusterNode } from '../../src/cluster/nodes/clusterNode.ts';
import type { Placement } from '../../src/cluster/nodes/placementStore.ts';
import type { ClusterMembership } from '../../src/cluster/membership.ts';
import type { MetadataDb } from '../../src/db/metadata/metadataStore.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { alice, errorCode, until } from '../content/helpers.ts';

const P = 'prj_quorum';

interface Copy {
  dir: string;
  store: ContentStore;
  close(): Promise<void>;
}

function copy(options: ConstructorParameters<typeof ContentStore>[0] extends infer O ? Partial<O> : never = {}): Copy {
  const dir = mkdtempSync(join(tmpdir(), 'cns-copy-'));
  const db = openDatabase(join(dir, 'cns.db'));
  const store = new ContentStore({ dataDir: dir, db, ...options });
  return {
    dir,
    store,
    async close() {
      await store.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A primary and two replicas in one process: the primary's writer replicates through a client that
 * calls each replica's ReplicaService directly (through the wire format), and can be cut off.
 */
async function cluster(t: { teardown(fn: () => Promise<void>): void }, o: { timeoutMs?: number; shipMaxObjects?: number } = {}) {
  const down = new Set<string>();
  const replicas: Record<string, Copy & { service: ReplicaService }> = {};
  const client: ReplicaClient = {
    async ship(node, shipment) {
      if (down.has(node)) throw new Error(`${node} is unreachable`);
      return replicas[node]!.service.receive(decodeShipment(encodeShipment(shipment)));
    },
    async catchUp(node, project, epoch) {
      if (down.has(node)) throw new Error(`${node} is unreachable`);
      return replicas[node]!.service.catchUp(project, epoch);
    },
  };
  const replicator = new Replicator(client, { timeoutMs: o.timeoutMs ?? 15_000, shipMaxObjects: o.shipMaxObjects });
  const primary = copy({ replicate: (projectId, repo, previous) => replicator.replicate(projectId, repo, { epoch: 1, replicas: ['r1', 'r2'], quorum: 2 }, previous) });
  for (const name of ['r1', 'r2']) {
    const c = copy();
    replicas[name] = { ...c, service: new ReplicaService(c.store, () => ({ url: join(primary.dir, `${P}.git`) })) };
  }
  t.teardown(async () => {
    for (const r of Object.values(replicas)) await r.close();
    await primary.close();
  });
  await primary.store.createProject(P);
  const mainOf = (c: Copy) => {
    try {
      return execFileSync('git', [`--git-dir=${join(c.dir, `${P}.git`)}`, 'rev-parse', 'main'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return null;
    }
  };
  /** Waits until a replica's index shows what the primary's does, node for node (it follows git a moment later, folder hashes last). */
  const sameIndex = (r: Copy) => until(() => (JSON.stringify(r.store.tree(P)) === JSON.stringify(primary.store.tree(P)) ? true : undefined));
  return { primary, replicas, down, replicator, mainOf, sameIndex };
}

test('a write is acknowledged only once a majority holds it, and every copy indexes the same nodes', async (t) => {
  const c = await cluster(t);
  for (let i = 0; i < 5; i++) {
    await c.primary.store.write(P, alice, { path: `notes/n${i}.md`, type: 'markdown', content: `# ${i}\n` });
    const tip = c.mainOf(c.primary);
    t.true([c.replicas.r1!, c.replicas.r2!].some((r) => c.mainOf(r) === tip), `write ${i} acknowledged before a replica held it`);
  }
  const writes = await Promise.all(Array.from({ length: 20 }, (_, i) => c.primary.store.write(P, alice, { path: `burst/b${i}.json`, type: 'json', content: { i } })));
  t.is(writes.length, 20);
  // The replicas' indexes follow git a moment later (folder hashes last): each reaches the primary's, node for node.
  for (const r of Object.values(c.replicas)) {
    await c.sameIndex(r);
    t.deepEqual(r.store.head(P), c.primary.store.head(P));
  }
});

test('writes go on with one replica away, which gets every step it missed when it comes back', async (t) => {
  const c = await cluster(t);
  await c.primary.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'a' });
  c.down.add('r2');
  for (let i = 0; i < 4; i++) await c.primary.store.write(P, alice, { path: 'a.md', type: 'markdown', content: `a${i}` });
  t.is(c.mainOf(c.replicas.r1!), c.mainOf(c.primary));
  t.not(c.mainOf(c.replicas.r2!), c.mainOf(c.primary));
  c.down.delete('r2');
  await c.primary.store.write(P, alice, { path: 'b.md', type: 'markdown', content: 'b' });
  await until(() => (c.mainOf(c.replicas.r2!) === c.mainOf(c.primary) ? true : undefined));
  await until(() => (c.replicas.r2!.store.head(P)?.projectVersion === c.primary.store.head(P)?.projectVersion ? true : undefined));
  const id = c.primary.store.getByPath(P, 'a.md').id;
  t.deepEqual(c.replicas.r2!.store.listVersions(P, { id }), c.primary.store.listVersions(P, { id }));
});

test('without a majority a write answers 503 and is not announced; the next write carries it to the copies', async (t) => {
  const c = await cluster(t, { timeoutMs: 1_000 });
  const announced: number[] = [];
  c.primary.store.onCommitted((tip) => announced.push(tip.projectVersion));
  await c.primary.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'a' });
  t.deepEqual(announced, [1]);
  c.down.add('r1');
  c.down.add('r2');
  const err = await c.primary.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'lonely' }).then(
    () => null,
    (e: unknown) => e as { code: string; details: { reason: string } },
  );
  t.is(err?.code, 'SERVICE_UNAVAILABLE');
  t.is(err?.details.reason, 'REPLICATION_UNAVAILABLE');
  t.deepEqual(announced, [1], 'an unconfirmed write is not announced');
  c.down.clear();
  await c.primary.store.write(P, alice, { path: 'b.md', type: 'markdown', content: 'b' });
  t.deepEqual(announced, [1, 3]);
  await until(() => (c.mainOf(c.replicas.r1!) === c.mainOf(c.primary) && c.mainOf(c.replicas.r2!) === c.mainOf(c.primary) ? true : undefined));
  await until(() => (c.replicas.r1!.store.head(P)?.projectVersion === 3 ? true : undefined));
  t.is((await c.replicas.r1!.store.readContent(P, { path: 'a.md' })).bytes.toString(), 'lonely');
});

test('a step too large to ship, or a copy that diverged, is caught up with git fetch; the diverged tail is kept aside', async (t) => {
  const c = await cluster(t, { shipMaxObjects: 3, timeoutMs: 15_000 });
  await c.primary.store.bulkWrite(P, alice, Array.from({ length: 10 }, (_, i) => ({ path: `bulk/f${i}.md`, type: 'markdown' as const, content: `${i}` })));
  await c.sameIndex(c.replicas.r1!);
  t.is(c.mainOf(c.replicas.r1!), c.mainOf(c.primary));
  // r2 grows a commit of its own (a deposed primary's unacknowledged write).
  const r2 = join(c.replicas.r2!.dir, `${P}.git`);
  await until(() => (c.mainOf(c.replicas.r2!) === c.mainOf(c.primary) ? true : undefined));
  const stray = execFileSync('git', [`--git-dir=${r2}`, 'commit-tree', `${c.mainOf(c.replicas.r2!)}^{tree}`, '-p', c.mainOf(c.replicas.r2!)!, '-m', 'stray'], { encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'x', GIT_AUTHOR_EMAIL: 'x@x', GIT_COMMITTER_NAME: 'x', GIT_COMMITTER_EMAIL: 'x@x' } }).trim();
  execFileSync('git', [`--git-dir=${r2}`, 'update-ref', 'refs/heads/main', stray]);
  c.replicator.forget(P, 'r2');
  await c.primary.store.write(P, alice, { path: 'after.md', type: 'markdown', content: 'after' });
  await until(() => (c.mainOf(c.replicas.r2!) === c.mainOf(c.primary) ? true : undefined));
  const lost = execFileSync('git', [`--git-dir=${r2}`, 'for-each-ref', '--format=%(objectname)', 'refs/cns/lost/'], { encoding: 'utf8' }).trim();
  t.is(lost, stray);
  await c.sameIndex(c.replicas.r2!);
  t.deepEqual(c.replicas.r2!.store.head(P), c.primary.store.head(P));
});

test('a replica sealed at a newer epoch refuses the old primary: its writes fail, deposed', async (t) => {
  const c = await cluster(t);
  await c.primary.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'a' });
  const first = c.mainOf(c.primary);
  await until(() => (Object.values(c.replicas).every((r) => c.mainOf(r) === first) ? true : undefined));
  for (const r of Object.values(c.replicas)) writeCopyState(join(r.dir, `${P}.git`), { epoch: 2, role: 'replica', tipEpoch: 1 }, false);
  const err = await c.primary.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'b' }).catch((e: unknown) => e);
  t.true(err instanceof DeposedError);
  t.is(await errorCode(c.primary.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'c' })), 'SERVICE_UNAVAILABLE');
  for (const r of Object.values(c.replicas)) {
    t.is(readCopyState(join(r.dir, `${P}.git`)).epoch, 2);
    t.is(c.mainOf(r), first, 'nothing of the deposed primary reached the replica');
  }
});

test('a write admitted while its node was the primary is not acknowledged once the placement names another (deposed during the batch: a partition, a pause)', async (t) => {
  const settings = { busUrls: [], nodeId: 'n1', nodeUrl: 'http://n1', replicas: 3, heartbeatMs: 100, downAfterMs: 2000, replicationTimeoutMs: 1000, replaceAfterMs: 300_000 };
  const node = new ClusterNode({ settings, db: {} as MetadataDb, membership: {} as ClusterMembership, signingSecret: new Uint8Array(32), logger: createLogger('silent'), replicationTimeoutMs: 1000 });
  // What mayWrite read (cached, a second old) said n1; what replicate reads after the commit says a failover made n2 the primary.
  let placement: Placement = { project: P, epoch: 1, primary: 'n1', state: 'ok', copies: ['n1', 'n2', 'n3'] };
  node.placementOf = async () => placement;
  const c = copy({ replicate: node.replicate, mayWrite: async () => {} });
  t.teardown(() => c.close());
  await c.store.createProject(P);
  placement = { ...placement, epoch: 2, primary: 'n2' };
  const err = await c.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'a' }).catch((e: unknown) => e);
  t.true(err instanceof DeposedError, String(err));
  // Mid-election (no primary yet) the same.
  placement = { ...placement, epoch: 3, primary: null, state: 'electing' };
  t.is(await errorCode(c.store.write(P, alice, { path: 'b.md', type: 'markdown', content: 'b' })), 'SERVICE_UNAVAILABLE');
  // A replica indexing what it was shipped is not a write: nothing to refuse there.
  await t.notThrowsAsync(node.replicate(P, {} as never, {}));
});

test('a push indexed after its node was deposed is not acknowledged; the same commits indexed by a start-up repair are not refused', async (t) => {
  const settings = { busUrls: [], nodeId: 'n1', nodeUrl: 'http://n1', replicas: 1, heartbeatMs: 100, downAfterMs: 2000, replicationTimeoutMs: 1000, replaceAfterMs: 300_000 };
  const node = new ClusterNode({ settings, db: {} as MetadataDb, membership: {} as ClusterMembership, signingSecret: new Uint8Array(32), logger: createLogger('silent'), replicationTimeoutMs: 1000 });
  let placement: Placement = { project: P, epoch: 1, primary: 'n1', state: 'ok', copies: ['n1'] };
  node.placementOf = async () => placement;
  const c = copy({ replicate: node.replicate, mayWrite: async () => {} });
  t.teardown(() => c.close());
  await c.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'a' });
  // What git receive-pack leaves once the push's pre-receive check passed (while n1 was the
  // primary): main moved to a commit the index has not seen. A failover happened meanwhile.
  const gitdir = join(c.dir, `${P}.git`);
  const env = { ...process.env, GIT_AUTHOR_NAME: 'p', GIT_AUTHOR_EMAIL: 'p@x', GIT_COMMITTER_NAME: 'p', GIT_COMMITTER_EMAIL: 'p@x' };
  const head = execFileSync('git', [`--git-dir=${gitdir}`, 'rev-parse', 'refs/heads/main'], { encoding: 'utf8' }).trim();
  const pushed = execFileSync('git', [`--git-dir=${gitdir}`, 'commit-tree', `${head}^{tree}`, '-p', head, '-m', 'pushed'], { encoding: 'utf8', env }).trim();
  execFileSync('git', [`--git-dir=${gitdir}`, 'update-ref', 'refs/heads/main', pushed, head]);
  placement = { ...placement, epoch: 2, primary: 'n2', copies: ['n1', 'n2'] };
  const err = await c.store.reconcile(P, { actor: alice, keepCommitAuthor: true, pushed: true }).catch((e: unknown) => e);
  t.true(err instanceof DeposedError, String(err));
  t.is((err as { code?: string }).code, 'SERVICE_UNAVAILABLE', 'git reports the push as failed (gitRemote.ts)');
  // The start-up reconciler indexing commits it finds is no acknowledgement: it is not refused.
  execFileSync('git', [`--git-dir=${gitdir}`, 'update-ref', 'refs/heads/main', execFileSync('git', [`--git-dir=${gitdir}`, 'commit-tree', `${pushed}^{tree}`, '-p', pushed, '-m', 'found'], { encoding: 'utf8', env }).trim(), pushed]);
  const report = await c.store.reconcile(P);
  t.true(report.indexedCommits >= 1);
});
