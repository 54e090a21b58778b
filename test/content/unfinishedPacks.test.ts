import test from 'ava';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Repo } from '../../src/content/git/repo.ts';

// A `git repack` under way keeps its new pack as `.tmp-PID-pack-*.{pack,idx}` until it renames
// them; a read meanwhile (after a kill -9 left a repack running, or beside an operator's gc)
// must not take that half-written pack for a finished one.
test('a packed object reads while an unfinished pack of a repack lies beside the finished one', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'cns-packs-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const gitdir = join(root, 'r.git');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: gitdir, encoding: 'utf8' }).trim();
  execFileSync('git', ['init', '-q', '--bare', gitdir]);
  const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: gitdir, input: 'packed content\n', encoding: 'utf8' }).trim();
  const tree = execFileSync('git', ['mktree'], { cwd: gitdir, input: `100644 blob ${blob}\tfile.txt\n`, encoding: 'utf8' }).trim();
  git('update-ref', 'refs/heads/main', git('commit-tree', tree, '-m', 'one'));
  git('repack', '-a', '-d', '-q');
  const packDir = join(gitdir, 'objects', 'pack');
  const idx = readdirSync(packDir).find((n) => n.endsWith('.idx'))!;
  // What a repack writing the same objects leaves while it works: a whole index, a pack not yet written out.
  copyFileSync(join(packDir, idx), join(packDir, `.tmp-4242-${idx}`));
  writeFileSync(join(packDir, `.tmp-4242-${idx.replace(/\.idx$/, '.pack')}`), 'PACK');
  const read = await new Repo(gitdir, false).readObject(blob);
  t.is(read.type, 'blob');
  t.is(read.content.toString(), 'packed content\n');
});
