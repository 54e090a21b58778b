import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContentStore } from '../../src/content/contentStore.ts';
import { openDatabase } from '../../src/db/database.ts';
import { NotOwnerError } from '../../src/cluster/notOwner.ts';
import type { Member } from '../../src/cluster/messages.ts';
import { WorkerOwnership } from '../../src/cluster/workerOwnership.ts';
import { alice } from '../content/helpers.ts';

const member = (name: string, holder: string): Member => ({ name, holder, pid: 1, port: 1, startedAt: '', restarts: 0 });

// Two workers on one data folder, each with its own SQLite connection, content store and leases.
function twoWorkers() {
  const dir = mkdtempSync(join(tmpdir(), 'cns-fence-'));
  const make = (name: string, holder: string) => {
    const db = openDatabase(join(dir, 'cns.db'));
    const ownership = new WorkerOwnership(db, { name, holder, boxStart: false }, () => {});
    const store = new ContentStore({ dataDir: dir, db, fence: (p) => ownership.fence(p) });
    return { db, ownership, store };
  };
  const a = make('w1', 'boot.w1.1');
  const b = make('w2', 'boot.w2.2');
  return {
    dir,
    a,
    b,
    live(...who: (typeof a)[]) {
      const list = who.map((x) => member(x.ownership.workerName, x.ownership.leases.me));
      a.ownership.setMembers(list);
      b.ownership.setMembers(list);
    },
    async cleanup() {
      for (const x of [a, b]) {
        await x.store.close();
        x.db.close();
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test('a lease passes on only when its holder is gone, with a higher epoch, and the stale owner can no longer write: main does not move', async (t) => {
  const w = twoWorkers();
  t.teardown(() => w.cleanup());
  w.live(w.a, w.b);
  await w.a.store.createProject('p1');
  t.deepEqual(w.a.ownership.route('p1'), { here: true });
  await w.a.store.write('p1', alice, { path: 'a.md', type: 'markdown', content: 'one' });
  t.like(w.a.ownership.leases.read('p1'), { holder: 'boot.w1.1', epoch: 1 });

  // While w1 is alive, w2 is sent to it.
  const route = w.b.ownership.route('p1');
  t.false(route.here);
  t.is(!route.here && route.member.name, 'w1');
  await t.throwsAsync(w.b.store.write('p1', alice, { path: 'b.md', type: 'markdown', content: 'from w2' }), { instanceOf: NotOwnerError });

  // The primary declares w1 gone (say it hung, and w2 now sees only itself): w2 takes the lease.
  w.b.ownership.setMembers([member('w2', 'boot.w2.2')]);
  t.deepEqual(w.b.ownership.route('p1'), { here: true });
  t.like(w.b.ownership.leases.read('p1'), { holder: 'boot.w2.2', epoch: 2 });
  await w.b.store.write('p1', alice, { path: 'b.md', type: 'markdown', content: 'from w2' });
  const gitMain = () => execFileSync('git', ['--git-dir', join(w.dir, 'p1.git'), 'rev-parse', 'refs/heads/main'], { encoding: 'utf8' }).trim();
  const mainBefore = gitMain();

  // The stale owner still believes it holds the lease: the fence inside its write transaction refuses.
  t.true(w.a.ownership.holds('p1'));
  const stale = await t.throwsAsync(w.a.store.write('p1', alice, { path: 'c.md', type: 'markdown', content: 'stale' }), { instanceOf: NotOwnerError });
  t.is(stale?.code, 'SERVICE_UNAVAILABLE');
  t.is(gitMain(), mainBefore, 'main did not move');
  t.is(w.b.store.head('p1')!.projectVersion, 2);
  t.is(w.b.store.findByPath('p1', 'c.md'), null);
});

test('a clean stop gives the leases back: the next worker takes them at once, and the epoch still grows', async (t) => {
  const w = twoWorkers();
  t.teardown(() => w.cleanup());
  w.live(w.a, w.b);
  await w.a.store.createProject('p2');
  t.true(w.a.ownership.route('p2').here);
  await w.a.store.write('p2', alice, { path: 'a.md', type: 'markdown', content: 'one' });
  w.a.ownership.release();
  t.like(w.a.ownership.leases.read('p2'), { holder: '', epoch: 1 });
  // w1 is still listed as live, but it holds nothing now.
  t.true(w.b.ownership.route('p2').here);
  t.like(w.b.ownership.leases.read('p2'), { holder: 'boot.w2.2', epoch: 2 });
  await w.b.store.write('p2', alice, { path: 'b.md', type: 'markdown', content: 'two' });
  t.is(w.b.store.head('p2')!.projectVersion, 2);
});
