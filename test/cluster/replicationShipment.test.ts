import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/database.ts';
import { ContentStore } from '../../src/content/contentStore.ts';
import { Repo } from '../../src/content/git/repo.ts';
import { readRef } from '../../src/content/git/refs.ts';
import { applyShipment } from '../../src/cluster/replication/applyShipment.ts';
import { readCopyState } from '../../src/cluster/replication/copyState.ts';
import { objectsBetween } from '../../src/cluster/replication/objectsBetween.ts';
import { BadShipment, decodeShipment, encodeShipment, type Shipment } from '../../src/cluster/replication/shipment.ts';
import { alice, fixture } from '../content/helpers.ts';

const P = 'prj_replicated';
const MAIN = 'refs/heads/main';
const git = (gitdir: string, ...args: string[]) => execFileSync('git', [`--git-dir=${gitdir}`, ...args], { encoding: 'utf8' }).trim();

/** A replica's data folder: an empty one, and the store that indexes what arrives in it. */
function replicaFolder() {
  const dir = mkdtempSync(join(tmpdir(), 'cns-replica-'));
  const db = openDatabase(join(dir, 'cns.db'));
  const store = new ContentStore({ dataDir: dir, db });
  const repo = new Repo(join(dir, `${P}.git`), false);
  return {
    repo,
    store,
    async close() {
      await store.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Ships what the primary's `main` gained since `old`, through the wire format. */
async function ship(primary: Repo, old: string | null, epoch = 1): Promise<Shipment> {
  const next = primary.readMain()!;
  const objects = await objectsBetween(primary, old, next);
  if (!objects) throw new Error('not shippable');
  return decodeShipment(encodeShipment({ project: P, epoch, refs: [{ name: MAIN, old, next }], objects }));
}

/** Every node of a project's index, as the API would show it: id, path, type, version. */
const nodesOf = (store: ContentStore) => JSON.stringify(store.tree(P));

test('a replica that takes the shipments indexes the same nodes, ids and versions as the primary', async (t) => {
  const f = fixture();
  const r = replicaFolder();
  t.teardown(async () => {
    await r.close();
    await f.cleanup();
  });
  await f.store.createProject(P);
  await f.store.write(P, alice, { path: 'docs/a.md', type: 'markdown', content: '# A\n' });
  await f.store.write(P, alice, { path: 'docs/deep/b.json', type: 'json', content: { b: 1 } });
  const primary = new Repo(join(f.dir, `${P}.git`), false);

  // From nothing: the whole history.
  const first = await ship(primary, null);
  t.deepEqual(await applyShipment(r.repo, first), { ok: true });
  await r.store.reconcile(P);
  t.is(r.repo.readMain(), primary.readMain());
  t.deepEqual(r.store.head(P), f.store.head(P));
  t.is(nodesOf(r.store), nodesOf(f.store));

  // Then one step at a time: only what changed travels.
  const before = primary.readMain();
  await f.store.write(P, alice, { path: 'docs/deep/b.json', type: 'json', content: { b: 2 } });
  await f.store.move(P, alice, 'docs/a.md', 'docs/renamed.md');
  await f.store.remove(P, alice, 'docs/renamed.md');
  const step = await ship(primary, before);
  // Three commits at depth 3 or less: each commit and the trees on its paths, one new blob; never the whole project.
  t.true(step.objects.length <= 16, `shipped ${step.objects.length} objects`);
  t.deepEqual(await applyShipment(r.repo, step), { ok: true });
  await r.store.reconcile(P);
  t.deepEqual(r.store.head(P), f.store.head(P));
  t.is(nodesOf(r.store), nodesOf(f.store));
  const id = f.store.getByPath(P, 'docs/deep/b.json').id;
  t.deepEqual(r.store.listVersions(P, { id }), f.store.listVersions(P, { id }));
  // git agrees the copy is whole.
  t.notThrows(() => git(r.repo.gitdir, 'fsck', '--no-progress'));
});

test('a shipment of an older epoch is refused and moves nothing; a newer one is remembered', async (t) => {
  const f = fixture();
  const r = replicaFolder();
  t.teardown(async () => {
    await r.close();
    await f.cleanup();
  });
  await f.store.createProject(P);
  await f.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'a' });
  const primary = new Repo(join(f.dir, `${P}.git`), false);
  t.deepEqual(await applyShipment(r.repo, await ship(primary, null, 3)), { ok: true });
  t.deepEqual(readCopyState(r.repo.gitdir), { epoch: 3, role: 'replica', tipEpoch: 3 });
  const tip = r.repo.readMain();
  await f.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'b' });
  t.deepEqual(await applyShipment(r.repo, await ship(primary, tip, 2)), { ok: false, reason: 'stale-epoch', epoch: 3 });
  t.is(r.repo.readMain(), tip);
  t.deepEqual(await applyShipment(r.repo, await ship(primary, tip, 4)), { ok: true });
  t.is(readCopyState(r.repo.gitdir).epoch, 4);
});

test('a shipment that expects another tip is refused with the copy’s tips; one without its objects moves nothing', async (t) => {
  const f = fixture();
  const r = replicaFolder();
  t.teardown(async () => {
    await r.close();
    await f.cleanup();
  });
  await f.store.createProject(P);
  await f.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'a' });
  const primary = new Repo(join(f.dir, `${P}.git`), false);
  const base = primary.readMain();
  await f.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'b' });
  // The replica never got `base`: the step from it does not apply.
  t.deepEqual(await applyShipment(r.repo, await ship(primary, base)), { ok: false, reason: 'moved', tips: { [MAIN]: null } });
  t.is(r.repo.readMain(), null);
  const all = await ship(primary, null);
  t.deepEqual(await applyShipment(r.repo, { ...all, objects: all.objects.filter((o) => o.type !== 'commit') }), { ok: false, reason: 'incomplete', missing: primary.readMain()! });
  t.is(r.repo.readMain(), null);
});

test('the notes move with main; a merge is not shipped (the copy fetches it)', async (t) => {
  const f = fixture();
  const r = replicaFolder();
  t.teardown(async () => {
    await r.close();
    await f.cleanup();
  });
  await f.store.createProject(P);
  await f.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'a' });
  const primary = new Repo(join(f.dir, `${P}.git`), false);
  const head = primary.readMain()!;
  git(primary.gitdir, '-c', 'user.name=n', '-c', 'user.email=n@x', 'notes', '--ref=cns', 'add', '-m', 'cns note', head);
  const notes = readRef(primary.gitdir, 'refs/notes/cns')!;
  const objects = [...(await objectsBetween(primary, null, head))!, ...(await objectsBetween(primary, null, notes))!];
  const s = decodeShipment(encodeShipment({ project: P, epoch: 1, refs: [{ name: MAIN, old: null, next: head }, { name: 'refs/notes/cns', old: null, next: notes }], objects }));
  t.deepEqual(await applyShipment(r.repo, s), { ok: true });
  t.is(git(r.repo.gitdir, 'notes', '--ref=cns', 'show', head), 'cns note');

  const tree = git(primary.gitdir, 'rev-parse', `${head}^{tree}`);
  const side = git(primary.gitdir, 'commit-tree', tree, '-m', 'side');
  const merge = execFileSync('git', [`--git-dir=${primary.gitdir}`, 'commit-tree', tree, '-p', head, '-p', side, '-m', 'merge'], { encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 'n', GIT_AUTHOR_EMAIL: 'n@x', GIT_COMMITTER_NAME: 'n', GIT_COMMITTER_EMAIL: 'n@x' } }).trim();
  t.is(await objectsBetween(primary, head, merge), null);
  // Nor is a step whose base is not on the chain (a rewritten history).
  t.is(await objectsBetween(primary, side, head), null);
});

test('a malformed shipment is refused before anything is read into the copy', (t) => {
  const good = encodeShipment({ project: P, epoch: 1, refs: [{ name: MAIN, old: null, next: 'a'.repeat(40) }], objects: [{ type: 'blob', content: Buffer.from('x') }] });
  t.notThrows(() => decodeShipment(good));
  t.throws(() => decodeShipment(good.subarray(0, good.length - 1)), { instanceOf: BadShipment });
  t.throws(() => decodeShipment(Buffer.concat([good, Buffer.from('!')])), { instanceOf: BadShipment, message: /trailing/ });
  t.throws(() => decodeShipment(encodeShipment({ project: P, epoch: 1, refs: [{ name: 'refs/heads/other', old: null, next: 'a'.repeat(40) }], objects: [] })), { instanceOf: BadShipment });
  t.throws(() => decodeShipment(encodeShipment({ project: '../x', epoch: 1, refs: [{ name: MAIN, old: null, next: 'a'.repeat(40) }], objects: [] })), { instanceOf: BadShipment });
  t.throws(() => decodeShipment(encodeShipment({ project: P, epoch: 0, refs: [{ name: MAIN, old: null, next: 'a'.repeat(40) }], objects: [] })), { instanceOf: BadShipment });
  t.throws(() => decodeShipment(Buffer.from([0, 0, 0, 9, 1, 2])), { instanceOf: BadShipment });
});
