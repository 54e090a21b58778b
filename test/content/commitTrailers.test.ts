import test from 'ava';
import { alice, fixture } from './helpers.ts';

// A caller's own trailer lines (CommitOptions.trailers): what a record kept in the other store
// reads back from git to learn whether its commit was made (a sync's page, issue 30).

test("a commit carries its caller's trailer lines: read back from git, kept out of the message, and the index rebuilt from git is the same", async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const r = await f.store.commit('p', alice, [{ op: 'write', path: 'a.md', type: 'markdown', content: '# A\n' }], {
    message: 'sync github: 1 created',
    trailers: ['Cns-Sync-Page: syn_1/p%2F1'],
  });
  const plain = await f.store.write('p', alice, { path: 'b.md', type: 'markdown', content: '# B\n' });
  t.is(await f.store.commitTrailer('p', r.commitId!, 'Cns-Sync-Page'), 'syn_1/p%2F1');
  t.is(await f.store.commitTrailer('p', r.commitId!, 'Cns-Other'), null);
  t.is(await f.store.commitTrailer('p', plain.commitId!, 'Cns-Sync-Page'), null);
  t.deepEqual(
    f.store.commitsAfter('p', 0, 10).map((c) => c.message),
    ['sync github: 1 created', 'write b.md'],
  );
  const report = await f.store.reindexProject('p');
  t.deepEqual(report.differences, []);
  t.is(await f.store.commitTrailer('p', r.commitId!, 'Cns-Sync-Page'), 'syn_1/p%2F1');
});

test("the store's own keys, other prefixes and more than one line are refused as a caller's trailers: nothing is committed", async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const write = [{ op: 'write' as const, path: 'a.md', type: 'markdown' as const, content: '# A\n' }];
  for (const bad of ['Cns-Node: nod_x 1 markdown create - 3 - x.md', 'Cns-Actor: user u x', 'Sync-Page: x', 'Cns-Sync-Page: a\nCns-Node: b', 'Cns-Sync-Page:']) {
    await t.throwsAsync(f.store.commit('p', alice, write, { trailers: [bad] }), { message: /not a trailer line a caller may add/ }, bad);
  }
  t.is(f.store.projectVersion('p'), 0);
});
