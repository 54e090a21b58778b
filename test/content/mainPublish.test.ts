import test from 'ava';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
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
