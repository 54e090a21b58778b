import test from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { TarFilter } from '../../src/content/git/tarFilter.ts';
import { alice, errorCode, fixture } from '../content/helpers.ts';
import { LONG_NAME, P, SEEDED_FILES, SEEDED_FOLDERS, listTree, seedProject } from './workspaceHelpers.ts';

/** What exportTree says it wrote, and what a folder holds, in one comparable form. */
const manifest = (entries: { path: string; kind: string; size: number }[]) => entries.map((e) => `${e.kind} ${e.path} ${e.size}`).sort();
const manifestOf = (tree: ReturnType<typeof listTree>) =>
  [...Object.entries(tree.files).map(([p, b]) => `file ${p} ${b.length}`), ...tree.folders.map((p) => `dir ${p} 0`)].sort();

test('exportTree writes every file with its stored bytes, empty folders, and no .cnskeep or .trash', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  await seedProject(f.store);
  const head = f.store.head(P);
  t.truthy(head);
  t.is(head!.projectVersion, f.store.projectVersion(P));
  const out = mkdtempSync(join(f.dir, 'export-'));
  const written = await f.store.exportTree(P, head!.commitId, '', out);
  const tree = listTree(out);
  t.deepEqual(tree.files, SEEDED_FILES);
  t.deepEqual(tree.folders, SEEDED_FOLDERS);
  t.deepEqual(tree.other, []);
  t.deepEqual(manifest(written), manifestOf(tree));
  t.true(LONG_NAME.length > 100, 'the long name needs a pax header');
});

test('exportTree of a folder holds that subtree only; an older commit gives its own content', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  await seedProject(f.store);
  const before = f.store.head(P)!;
  await f.store.write(P, alice, { path: 'docs/readme.md', type: 'markdown', content: 'changed\n' });
  await f.store.write(P, alice, { path: 'docs/added.md', type: 'markdown', content: 'new\n' });

  const scoped = mkdtempSync(join(f.dir, 'scoped-'));
  await f.store.exportTree(P, f.store.head(P)!.commitId, 'docs', scoped);
  t.deepEqual(listTree(scoped).files, {
    'readme.md': Buffer.from('changed\n'),
    'added.md': Buffer.from('new\n'),
    'guide/intro.md': SEEDED_FILES['docs/guide/intro.md']!,
  });

  const old = mkdtempSync(join(f.dir, 'old-'));
  await f.store.exportTree(P, before.commitId, 'docs', old);
  t.deepEqual(listTree(old).files, { 'readme.md': SEEDED_FILES['docs/readme.md']!, 'guide/intro.md': SEEDED_FILES['docs/guide/intro.md']! });

  // An empty folder exported on its own is an empty folder (its .cnskeep stays behind).
  const empty = mkdtempSync(join(f.dir, 'empty-'));
  await f.store.exportTree(P, before.commitId, 'empty', empty);
  t.deepEqual(listTree(empty), { files: {}, folders: ['inner'], other: [] });

  // The trash is content too when asked for by its path.
  const trash = mkdtempSync(join(f.dir, 'trash-'));
  await f.store.exportTree(P, before.commitId, '.trash', trash);
  const trashed = Object.entries(listTree(trash).files);
  t.is(trashed.length, 1);
  t.regex(trashed[0]![0], /_gone\.md$/);
});

test('exportTree without a git program reads the same tree from the object store', async (t) => {
  const f = fixture({ gitBinary: null });
  t.teardown(f.cleanup);
  await seedProject(f.store);
  const out = mkdtempSync(join(f.dir, 'export-'));
  const written = await f.store.exportTree(P, f.store.head(P)!.commitId, '', out);
  t.deepEqual(listTree(out).files, SEEDED_FILES);
  t.deepEqual(listTree(out).folders, SEEDED_FOLDERS);
  t.deepEqual(manifest(written), manifestOf(listTree(out)));
  const scoped = mkdtempSync(join(f.dir, 'scoped-'));
  await f.store.exportTree(P, f.store.head(P)!.commitId, 'docs/guide', scoped);
  t.deepEqual(listTree(scoped).files, { 'intro.md': SEEDED_FILES['docs/guide/intro.md']! });
  t.is(await errorCode(f.store.exportTree(P, f.store.head(P)!.commitId, 'nope', scoped)), 'NOT_FOUND');
});

test('exportTree refuses what is not there', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  t.is(f.store.head(P), null);
  await seedProject(f.store);
  const { commitId } = f.store.head(P)!;
  const out = mkdtempSync(join(f.dir, 'export-'));
  t.is(await errorCode(f.store.exportTree(P, commitId, 'missing', out)), 'NOT_FOUND');
  t.is(await errorCode(f.store.exportTree(P, commitId, 'docs/readme.md', out)), 'NOT_FOUND');
  t.is(await errorCode(f.store.exportTree(P, '0'.repeat(40), '', out)), 'NOT_FOUND');
  t.is(await errorCode(f.store.exportTree(P, 'HEAD', '', out)), 'VALIDATION_ERROR');
  t.is(await errorCode(f.store.exportTree(P, commitId, '../x', out)), 'VALIDATION_ERROR');
  t.is(await errorCode(f.store.exportTree('other', commitId, '', out)), 'NOT_FOUND');
  t.deepEqual(listTree(out), { files: {}, folders: [], other: [] });
});

test('exportTree handles 10,000 files', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  const files = Array.from({ length: 10_000 }, (_, i) => ({ path: `d${i % 40}/s${i % 9}/f${i}.md`, type: 'markdown' as const, content: `file ${i}\n` }));
  await f.store.bulkWrite(P, alice, files);
  const out = mkdtempSync(join(f.dir, 'export-'));
  await f.store.exportTree(P, f.store.head(P)!.commitId, '', out);
  const tree = listTree(out);
  t.is(Object.keys(tree.files).length, 10_000);
  t.deepEqual(tree.files['d7/s4/f9967.md'], Buffer.from('file 9967\n'));
});

test('exportTree leaves out symbolic links a crafted commit holds; a submodule is an empty folder', async (t) => {
  for (const gitBinary of ['git', null]) {
    const f = fixture({ gitBinary });
    t.teardown(f.cleanup);
    await seedProject(f.store);
    const gitdir = join(f.dir, `${P}.git`);
    const git = (args: string[], input?: string) => execFileSync('git', [`--git-dir=${gitdir}`, ...args], { input }).toString().trim();
    const blob = git(['hash-object', '-w', '--stdin'], 'kept\n');
    const link = git(['hash-object', '-w', '--stdin'], '/etc/passwd');
    const head = f.store.head(P)!.commitId;
    const tree = git(['mktree'], `100644 blob ${blob}\tfile.md\n120000 blob ${link}\tlink\n160000 commit ${head}\tsub\n`);
    const commit = git(['commit-tree', tree, '-m', 'crafted']);
    const out = mkdtempSync(join(f.dir, 'export-'));
    await f.store.exportTree(P, commit, '', out);
    t.deepEqual(listTree(out).files, { 'file.md': Buffer.from('kept\n') }, `git: ${gitBinary}`);
    t.deepEqual(listTree(out).other, []);
    t.deepEqual(listTree(out).folders, ['sub']);
  }
});

test('TarFilter gives the same stream however the archive is cut into chunks', async (t) => {
  const f = fixture();
  t.teardown(f.cleanup);
  await seedProject(f.store);
  const archive = execFileSync('git', [`--git-dir=${join(f.dir, `${P}.git`)}`, 'archive', '--format=tar', 'main']);
  const run = async (chunk: number) => {
    const parts: Buffer[] = [];
    for (let i = 0; i < archive.length; i += chunk) parts.push(archive.subarray(i, i + chunk));
    const names: string[] = [];
    const filter = new TarFilter((e) => {
      names.push(`${e.kind}:${e.path}`);
      return !e.path.endsWith('.cnskeep');
    });
    const out: Buffer[] = [];
    filter.on('data', (b: Buffer) => out.push(b));
    await pipeline(Readable.from(parts), filter);
    return { bytes: Buffer.concat(out), names };
  };
  const whole = await run(archive.length);
  t.true(whole.names.includes(`file:deep/${LONG_NAME}`), 'the pax path is read');
  t.true(whole.names.includes('file:empty/inner/.cnskeep'));
  for (const size of [1, 7, 512, 1000]) t.deepEqual(await run(size), whole, `chunks of ${size}`);
  const listed = execFileSync('tar', ['-t'], { input: whole.bytes }).toString().split('\n').filter(Boolean);
  t.true(listed.includes(`deep/${LONG_NAME}`));
  t.false(listed.some((n) => n.endsWith('.cnskeep')));
  t.true(listed.includes('empty/inner/'));
});

if (process.getuid?.() === 0) {
  test('exportTree with an owner hands every file and folder to it', async (t) => {
    for (const gitBinary of ['git', null]) {
      const f = fixture({ gitBinary });
      t.teardown(f.cleanup);
      await seedProject(f.store);
      const out = mkdtempSync(join(f.dir, 'export-'));
      await f.store.exportTree(P, f.store.head(P)!.commitId, '', out, { owner: { uid: 65534, gid: 65533 } });
      const tree = listTree(out);
      t.deepEqual(tree.files, SEEDED_FILES);
      for (const path of [...Object.keys(tree.files), ...tree.folders]) {
        const st = statSync(join(out, path));
        t.deepEqual([st.uid, st.gid], [65534, 65533], `${path} (git: ${gitBinary})`);
      }
    }
  });
}
