import test from 'ava';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase } from '../../src/db/database.ts';
import { ContentStore, type ProjectChange } from '../../src/content/contentStore.ts';
import { alice, errorCode, fixture } from './helpers.ts';

// Two stores on one data folder, each with its own SQLite connection: two worker processes.
// `here` has read (and once written) a project that `there` then deletes, reindexes or purges.
function twoWorkers() {
  const f = fixture();
  const db = openDatabase(join(f.dir, 'cns.db'));
  const here = new ContentStore({ dataDir: f.dir, db });
  const changes: ProjectChange[] = [];
  f.store.onProjectChanged((c) => changes.push(c));
  return {
    there: f.store,
    here,
    changes,
    dir: f.dir,
    async cleanup() {
      await here.close();
      db.close();
      await f.cleanup();
    },
  };
}

test('a project deleted by another process: after the signal, this one answers not found and never recreates the repository', async (t) => {
  const w = twoWorkers();
  t.teardown(() => w.cleanup());
  await w.there.createProject('p1');
  await w.here.write('p1', alice, { path: 'notes/a.md', type: 'markdown', content: 'written here first' });
  const head = w.here.head('p1')!.commitId;
  t.is(w.here.listChildrenOf('p1', null).length, 1);

  await w.there.deleteProject('p1');
  t.deepEqual(w.changes, [{ kind: 'project-deleted', project: 'p1' }], 'the deleting process reports it once');
  t.false(existsSync(join(w.dir, 'p1.git')));

  w.here.dropCached({ kind: 'project-deleted', project: 'p1' });
  t.is(await errorCode(w.here.write('p1', alice, { path: 'b.md', type: 'markdown', content: 'late' })), 'NOT_FOUND');
  t.false(existsSync(join(w.dir, 'p1.git')), 'a process that is not the owner never recreates it');
  const out = mkdtempSync(join(tmpdir(), 'cns-export-'));
  t.teardown(() => rmSync(out, { recursive: true, force: true }));
  t.is(await errorCode(w.here.exportTree('p1', head, '', out)), 'NOT_FOUND', 'the repository it held is not trusted any more');
  t.is(await errorCode(() => w.here.getByPath('p1', 'notes/a.md')), 'NOT_FOUND');
  t.deepEqual(w.here.listChildrenOf('p1', null), []);
  // Twice (the signal also reaches the process that deleted), or for a project never seen: harmless.
  w.there.dropCached({ kind: 'project-deleted', project: 'p1' });
  w.here.dropCached({ kind: 'project-deleted', project: 'p1' });
  w.here.dropCached({ kind: 'project-reset', project: 'never-seen' });
  w.here.dropCached({ kind: 'publish-changed', project: 'p1' });
  // A project created again under the id (here, as its new owner) may be written.
  await w.here.createProject('p1');
  t.true((await w.here.write('p1', alice, { path: 'again.md', type: 'markdown', content: 'new life' })).changed);
});

test('a project reindexed by another process at the same head: folder listings read before are dropped', async (t) => {
  const w = twoWorkers();
  t.teardown(() => w.cleanup());
  await w.there.write('p2', alice, { path: 'docs/readme.md', type: 'markdown', content: 'hello' });
  const docs = w.here.getByPath('p2', 'docs');
  // A damaged index (a renamed row), read and cached here; `there` rebuilds it from git at the same head.
  w.there['db'].prepare("UPDATE nodes SET name = 'damaged.md', path = 'docs/damaged.md' WHERE project_id = 'p2' AND path = 'docs/readme.md'").run();
  t.deepEqual(w.here.listChildrenOf('p2', docs.id).map((n) => n.name), ['damaged.md']);
  const head = w.here.head('p2')!.commitId;
  await w.there.reindexProject('p2');
  t.is(w.here.head('p2')!.commitId, head, 'the same head: nothing retires the listing by itself');
  t.deepEqual(w.here.listChildrenOf('p2', docs.id).map((n) => n.name), ['damaged.md'], 'still the cached listing');
  t.deepEqual(w.changes, [{ kind: 'project-reset', project: 'p2' }]);
  w.here.dropCached(w.changes[0]!);
  t.deepEqual(w.here.listChildrenOf('p2', docs.id).map((n) => n.name), ['readme.md']);
});

test('a purge by another process: the purged blobs leave this process’s blob cache', async (t) => {
  const w = twoWorkers();
  t.teardown(() => w.cleanup());
  await w.there.write('p3', alice, { path: 'secret.md', type: 'markdown', content: 'the secret' });
  await w.there.write('p3', alice, { path: 'kept.md', type: 'markdown', content: 'kept' });
  const secret = w.here.getByPath('p3', 'secret.md');
  t.is((await w.here.readContent('p3', { path: 'secret.md' })).bytes.toString(), 'the secret');
  const blobs = (w.here as unknown as { blobs: { get(oid: string): Buffer | undefined } }).blobs;
  t.truthy(blobs.get(secret.contentHash!), 'read here, so cached here');
  await w.there.purge('p3', alice, 'secret.md');
  t.deepEqual(w.changes, [{ kind: 'project-reset', project: 'p3' }]);
  w.here.dropCached(w.changes[0]!);
  t.is(blobs.get(secret.contentHash!), undefined);
  t.is((await w.here.readContent('p3', { path: 'kept.md' })).bytes.toString(), 'kept');
  t.is(await errorCode(() => w.here.getByPath('p3', 'secret.md')), 'NOT_FOUND');
});
