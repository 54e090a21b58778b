import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { baseGitEnv, gitConfigEnv } from '../../src/remote/gitConfig.ts';
import { dropExtraBitmaps } from '../../src/content/git/bitmaps.ts';
import { alice, fixture } from '../content/helpers.ts';

const P = 'proj';

test('git processes of the remote never start maintenance of their own (it would race the store repack)', (t) => {
  const env = { ...baseGitEnv(), ...gitConfigEnv() };
  const get = (key: string) => execFileSync('git', ['config', '--get', key], { env }).toString().trim();
  t.is(get('receive.autogc'), 'false');
  t.is(get('gc.auto'), '0');
});

test('after a repack that raced another, one bitmap is left and git stops warning', async (t) => {
  const f = fixture({ repackEvery: 0 });
  t.teardown(f.cleanup);
  const gitdir = join(f.dir, `${P}.git`);
  const packDir = join(gitdir, 'objects', 'pack');
  const bitmaps = () => readdirSync(packDir).filter((n) => n.endsWith('.bitmap'));
  await f.store.write(P, alice, { path: 'a.md', type: 'markdown', content: 'a' });
  t.true(await f.store.repack(P));
  // Another repack's pack (with its bitmap) that the store's repack did not see.
  const aside = mkdtempSync(join(tmpdir(), 'cns-pack-'));
  t.teardown(() => rmSync(aside, { recursive: true, force: true }));
  const first = readdirSync(packDir).filter((n) => n.startsWith('pack-'));
  for (const n of first) copyFileSync(join(packDir, n), join(aside, n));
  await f.store.write(P, alice, { path: 'b.md', type: 'markdown', content: 'b' });
  t.true(await f.store.repack(P));
  for (const n of first) copyFileSync(join(aside, n), join(packDir, n));
  t.is(bitmaps().length, 2);
  // What serving a clone does: git reads the bitmap, and warns about the extra one.
  const warnings = () => spawnSync('git', ['--git-dir', gitdir, 'rev-list', '--count', '--all', '--use-bitmap-index'], { encoding: 'utf8' }).stderr;
  t.regex(warnings(), /bitmap/);
  t.is(dropExtraBitmaps(gitdir), 1);
  t.is(bitmaps().length, 1);
  t.is(warnings(), '');
});
