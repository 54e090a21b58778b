import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rollForwardMain } from '../../src/content/git/refs.ts';
import { alice, fixture } from './helpers.ts';

/*
 * A batch's index commits before main moves (the rename of main.lock happens after the SQLite
 * transaction, out of its write lock). A writer that dies in between leaves main one step behind
 * its index and a lock naming the commit the index has: the next writer completes the move.
 */

const P = 'proj';
const git = (gitdir: string, ...args: string[]) => execFileSync('git', args, { cwd: gitdir, encoding: 'utf8' }).trim();

test('a move of main prepared by a writer that died is completed by the next one: nothing rebuilt, history linear', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  await f.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'one' });
  await f.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'two' });
  const gitdir = join(f.dir, `${P}.git`);
  const second = git(gitdir, 'rev-parse', 'refs/heads/main');
  const first = git(gitdir, 'rev-parse', 'refs/heads/main~1');
  // The state a writer killed between its commit and the rename leaves: main on the first commit,
  // the lock naming the second, which the index already has.
  writeFileSync(join(gitdir, 'refs/heads/main'), first + '\n');
  writeFileSync(join(gitdir, 'refs/heads/main.lock'), second + '\n');
  const store = await f.reopen();
  const r = await store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'three' });
  t.is(r.node.version, 3, 'the index was not rebuilt: versions go on');
  t.false(existsSync(join(gitdir, 'refs/heads/main.lock')));
  t.deepEqual(git(gitdir, 'log', '--format=%H', 'refs/heads/main').split('\n').slice(1), [second, first]);
  t.deepEqual(store.listVersions(P, { path: 'a.md' }).versions.map((v) => v.version), [3, 2, 1]);
  t.is((await store.versionContent(P, { path: 'a.md' }, 2)).bytes.toString(), 'two');
  git(gitdir, 'fsck', '--strict', '--no-dangling');
});

test('a lock naming anything but the indexed commit is left alone (a push holds it)', (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const gitdir = join(f.dir, 'x.git');
  execFileSync('git', ['init', '--bare', '-q', gitdir]);
  const lock = join(gitdir, 'refs/heads/main.lock');
  writeFileSync(lock, 'b'.repeat(40) + '\n');
  t.false(rollForwardMain(gitdir, 'a'.repeat(40)));
  t.is(readFileSync(lock, 'utf8'), 'b'.repeat(40) + '\n');
  t.false(existsSync(join(gitdir, 'refs/heads/main')));
  t.true(rollForwardMain(gitdir, 'b'.repeat(40)));
  t.is(readFileSync(join(gitdir, 'refs/heads/main'), 'utf8').trim(), 'b'.repeat(40));
});

test('a lock written before this process became the only writer is broken after a moment; one written since is waited for', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  await f.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'one' });
  const gitdir = join(f.dir, `${P}.git`);
  const lock = join(gitdir, 'refs/heads/main.lock');
  // A writer that died inside its transaction: the lock names a commit the index never committed.
  writeFileSync(lock, 'f'.repeat(40) + '\n');
  // This process became the only writer just after (a lease taken from a worker declared dead).
  const since = Date.now() + 1;
  const store = await f.reopen({ soleWriterSince: () => since });
  const started = Date.now();
  const r = await store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'two' });
  const tookMs = Date.now() - started;
  t.is(r.node.version, 2);
  t.true(tookMs >= 900 && tookMs < 10_000, `broken after ${tookMs} ms`);
  t.false(existsSync(lock));

  // A lock taken since (a push of a live git process) is not this process's to break: the write
  // waits for its holder to let it go.
  writeFileSync(lock, 'e'.repeat(40) + '\n');
  const waiting = store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'three' });
  const heldFor = Date.now();
  // Longer than the grace a dead writer's lock gets: what is asserted is that nothing happens.
  await new Promise((r) => setTimeout(r, 1_500));
  t.true(existsSync(lock), 'the live holder’s lock is still there');
  unlinkSync(lock);
  t.is((await waiting).node.version, 3);
  t.true(Date.now() - heldFor >= 1_500);
});
