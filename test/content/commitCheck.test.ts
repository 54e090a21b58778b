import test from 'ava';
import { alice, fixture } from './helpers.ts';

// CommitOptions.check: an async check awaited in the project's serialized section right before
// the commit (a background writer's permission, read from the metadata store, issue 30): it sees
// every earlier write of the project, no later write comes before its commit, and a refusal
// writes nothing.

const write = (path: string) => [{ op: 'write' as const, path, type: 'markdown' as const, content: `# ${path}\n` }];

test('a check sees the writes before it and holds the later ones until its commit is made', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  await f.store.write('p', alice, { path: 'seed.md', type: 'markdown', content: '# seed\n' });
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let seenAtCheck: number | null = null;
  let checked!: () => void;
  const checking = new Promise<void>((r) => (checked = r));
  const earlier = f.store.commit('p', alice, write('earlier.md'));
  const checkedCommit = f.store.commit('p', alice, write('checked.md'), {
    check: async () => {
      seenAtCheck = f.store.head('p')?.projectVersion ?? null;
      checked();
      await held;
    },
  });
  await checking;
  const later = f.store.commit('p', alice, write('later.md'));
  let laterDone = false;
  void later.then(() => (laterDone = true));
  // Many turns of the event loop: the later write stays queued while the check is pending.
  for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
  t.false(laterDone, 'no write of the project is made while a check is pending');
  release();
  const [a, b, c] = await Promise.all([earlier, checkedCommit, later]);
  t.is(seenAtCheck as number | null, a.projectVersion, 'the check ran after the earlier write');
  t.is(b.projectVersion, a.projectVersion! + 1);
  t.is(c.projectVersion, b.projectVersion! + 1, 'the later write came after the checked one');
});

test('a check that throws writes nothing, and the writes after it go on', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const refused = new Error('the key was revoked');
  await t.throwsAsync(f.store.commit('p', alice, write('refused.md'), { check: async () => Promise.reject(refused) }), { is: refused });
  t.is(f.store.findByPath('p', 'refused.md'), null);
  const after = await f.store.commit('p', alice, write('after.md'));
  t.is(after.projectVersion, 1, 'the refused call made no version');
});
