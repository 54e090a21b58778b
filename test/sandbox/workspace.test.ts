import test, { type ExecutionContext } from 'ava';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alice, errorCode, fixture, type Fixture } from '../content/helpers.ts';
import { HostShell } from '../../src/sandbox/workspace/hostShell.ts';
import { WorkspacePool, type WorkspacePoolOptions } from '../../src/sandbox/workspace/workspacePool.ts';
import type { Owner } from '../../src/sandbox/workspace/materialize.ts';
import { leavesNoHostMounts, usesSandboxRoot } from '../helpers/hostMounts.ts';
import { P, SEEDED_FILES, SEEDED_FOLDERS, alive, isRoot, listTree, mountsUnder, seedProject } from './workspaceHelpers.ts';

interface Mode {
  name: string;
  options: Partial<WorkspacePoolOptions>;
  owner: Owner;
  /** Whether the folder's size is capped (its own tmpfs). */
  capped: boolean;
}

leavesNoHostMounts(test);

const NOBODY = { uid: 65534, gid: 65534 };
const MODES: Mode[] = [
  ...(isRoot
    ? [
        { name: 'overlay', options: { strategy: 'overlay' as const }, owner: NOBODY, capped: true },
        { name: 'copy on tmpfs', options: { strategy: 'copy' as const }, owner: NOBODY, capped: true },
      ]
    : []),
  { name: 'copy without mounts', options: { strategy: 'copy', mounts: false }, owner: null, capped: false },
];
/** For tests of the pool's bookkeeping, which is the same whatever makes the folders. */
const FIRST = MODES[0]!;

interface Setup {
  f: Fixture;
  pool: WorkspacePool;
  root: string;
  commitId: string;
}

async function setup(t: ExecutionContext, mode: Mode, more: Partial<WorkspacePoolOptions> = {}): Promise<Setup> {
  const f = fixture();
  const root = join(f.dir, 'sandbox');
  usesSandboxRoot(root);
  const pool = new WorkspacePool({ root, content: f.store, ...mode.options, ...more });
  t.teardown(async () => {
    await pool.close();
    await f.cleanup();
  });
  await seedProject(f.store);
  await pool.ready;
  t.is(pool.strategy, mode.options.strategy === 'overlay' ? 'overlay' : 'copy');
  return { f, pool, root, commitId: f.store.head(P)!.commitId };
}

for (const mode of MODES) {
  test(`[${mode.name}] a folder holds exactly the subtree at the commit, writable by its owner`, async (t) => {
    const { pool, commitId } = await setup(t, mode);
    const ws = await pool.acquire(P, '', commitId, mode.owner);
    t.like(ws, { projectId: P, scope: '', commitId });
    t.deepEqual(listTree(ws.dir), { files: SEEDED_FILES, folders: SEEDED_FOLDERS, other: [] });
    const scoped = await pool.acquire(P, 'docs', commitId, mode.owner);
    t.deepEqual(listTree(scoped.dir).files, { 'readme.md': SEEDED_FILES['docs/readme.md']!, 'guide/intro.md': SEEDED_FILES['docs/guide/intro.md']! });
    if (mode.owner) {
      t.is(fs.statSync(ws.dir).uid, mode.owner.uid);
      t.is(fs.statSync(join(ws.dir, 'docs/readme.md')).uid, mode.owner.uid);
      // The owner's uid, and nothing more, can write there.
      const as = ['--reuid=65534', '--regid=65534', '--clear-groups', 'sh', '-c', 'echo hi > new.md && echo more >> docs/readme.md && mkdir made'];
      execFileSync('setpriv', as, { cwd: ws.dir });
      t.deepEqual(await ws.changes(), {
        files: [
          { path: 'docs/readme.md', action: 'modified' },
          { path: 'new.md', action: 'created' },
        ],
        folders: [{ path: 'made', action: 'created' }],
        skipped: [],
      });
    }
  });

  test(`[${mode.name}] an unchanged folder is handed out again as it is, without a copy`, async (t) => {
    const { pool, commitId } = await setup(t, mode);
    const first = await pool.acquire(P, '', commitId, mode.owner);
    listTree(first.dir); // a command that only reads
    const ino = fs.lstatSync(join(first.dir, 'docs/readme.md')).ino;
    t.deepEqual(await first.changes(), { files: [], folders: [], skipped: [] });
    await first.release();
    t.like(pool.counts(), { busy: 0, idle: 1 });
    const again = await pool.acquire(P, '', commitId, mode.owner);
    t.is(again.dir, first.dir);
    t.is(fs.lstatSync(join(again.dir, 'docs/readme.md')).ino, ino);
    t.like(pool.counts(), { busy: 1, idle: 0 });
    // A folder released twice is given back once.
    await first.release();
    t.like(pool.counts(), { busy: 1, idle: 0 });
    await t.throwsAsync(first.changes(), { message: /released/ });
  });

  test(`[${mode.name}] a changed folder is removed and the next one is pristine`, async (t) => {
    const { pool, commitId } = await setup(t, mode);
    const ws = await pool.acquire(P, '', commitId, mode.owner);
    fs.writeFileSync(join(ws.dir, 'new.md'), 'new\n');
    fs.appendFileSync(join(ws.dir, 'docs/readme.md'), 'more\n');
    await ws.release();
    await pool.settled();
    t.false(fs.existsSync(ws.dir));
    t.like(pool.counts(), { busy: 0, idle: 0 });
    const next = await pool.acquire(P, '', commitId, mode.owner);
    t.not(next.dir, ws.dir);
    t.deepEqual(listTree(next.dir).files, SEEDED_FILES);
  });

  test(`[${mode.name}] concurrent acquires get distinct folders of their own`, async (t) => {
    const { pool, commitId } = await setup(t, mode);
    const all = await Promise.all([1, 2, 3, 4].map(() => pool.acquire(P, 'docs', commitId, mode.owner)));
    t.is(new Set(all.map((w) => w.dir)).size, 4);
    fs.writeFileSync(join(all[0]!.dir, 'readme.md'), 'only here\n');
    for (const w of all.slice(1)) t.deepEqual(fs.readFileSync(join(w.dir, 'readme.md')), SEEDED_FILES['docs/readme.md']);
    await Promise.all(all.map((w) => w.release()));
    await pool.settled();
    t.like(pool.counts(), { busy: 0, idle: 3 });
  });

  test(`[${mode.name}] changes() names created, modified and deleted files and folders`, async (t) => {
    const { pool, commitId } = await setup(t, mode);
    const ws = await pool.acquire(P, '', commitId, mode.owner);
    const at = (p: string) => join(ws.dir, p);
    fs.writeFileSync(at('new.md'), 'new\n');
    fs.appendFileSync(at('docs/readme.md'), 'more\n');
    fs.rmSync(at('docs/guide/intro.md'));
    fs.rmSync(at('data'), { recursive: true });
    fs.mkdirSync(at('made/empty'), { recursive: true });
    fs.mkdirSync(at('made2'));
    fs.writeFileSync(at('made2/x.md'), 'x\n');
    // A file replaced by a folder and a folder by a file.
    fs.rmSync(at('bin/blob.bin'));
    fs.mkdirSync(at('bin/blob.bin'));
    fs.rmSync(at('empty/inner'), { recursive: true });
    fs.writeFileSync(at('empty/inner'), 'now a file\n');
    // A folder removed and made again with the same file: only the new file counts.
    fs.rmSync(at('notes'), { recursive: true });
    fs.mkdirSync(at('notes'));
    fs.writeFileSync(at('notes/café ü.md'), SEEDED_FILES['notes/café ü.md']!);
    fs.writeFileSync(at('notes/other.md'), 'other\n');
    t.deepEqual(await ws.changes(), {
      files: [
        { path: 'bin/blob.bin', action: 'deleted' },
        { path: 'data/config.json', action: 'deleted' },
        { path: 'docs/guide/intro.md', action: 'deleted' },
        { path: 'docs/readme.md', action: 'modified' },
        { path: 'empty/inner', action: 'created' },
        { path: 'made2/x.md', action: 'created' },
        { path: 'new.md', action: 'created' },
        { path: 'notes/other.md', action: 'created' },
      ],
      folders: [
        { path: 'bin/blob.bin', action: 'created' },
        { path: 'data', action: 'deleted' },
        { path: 'empty/inner', action: 'deleted' },
        { path: 'made', action: 'created' },
        { path: 'made/empty', action: 'created' },
        { path: 'made2', action: 'created' },
      ],
      skipped: [],
    });
  });

  test(`[${mode.name}] touching a file is no change; a same-size rewrite that keeps the mtime is`, async (t) => {
    const { pool, commitId } = await setup(t, mode);
    const ws = await pool.acquire(P, '', commitId, mode.owner);
    const readme = join(ws.dir, 'docs/readme.md');
    const config = join(ws.dir, 'data/config.json');
    fs.utimesSync(readme, new Date(), new Date(Date.now() + 60_000));
    fs.chmodSync(join(ws.dir, 'docs/guide/intro.md'), 0o600);
    t.deepEqual(await ws.changes(), { files: [], folders: [], skipped: [] });
    const before = fs.statSync(config, { bigint: true });
    // touch -r keeps nanoseconds (utimes from Node goes through a double).
    const reference = join(ws.dir, '..', 'reference');
    execFileSync('touch', ['-r', config, reference]);
    const bytes = Buffer.from(SEEDED_FILES['data/config.json']!.toString().replace('"b": 1', '"b": 2'));
    t.is(BigInt(bytes.length), before.size);
    fs.writeFileSync(config, bytes);
    execFileSync('touch', ['-r', reference, config]);
    t.is(fs.statSync(config, { bigint: true }).mtimeNs, before.mtimeNs);
    t.deepEqual((await ws.changes()).files, [{ path: 'data/config.json', action: 'modified' }]);
    // Touched or not, a folder that is not as it was handed out is not handed out again.
    await ws.release();
    t.not((await pool.acquire(P, '', commitId, mode.owner)).dir, ws.dir);
  });

  test(`[${mode.name}] what cannot come back is skipped, with the reason`, async (t) => {
    const { pool, commitId } = await setup(t, mode);
    const ws = await pool.acquire(P, '', commitId, mode.owner);
    const at = (p: string) => join(ws.dir, p);
    fs.symlinkSync('/etc/passwd', at('link'));
    fs.rmSync(at('docs/readme.md'));
    fs.symlinkSync('/etc/shadow', at('docs/readme.md'));
    execFileSync('mkfifo', [at('pipe')]);
    fs.mkdirSync(at('.git'));
    fs.writeFileSync(at('.git/config'), '[core]\n');
    fs.writeFileSync(at('empty/.cnskeep'), '');
    fs.writeFileSync(at('bad\u0001name.md'), 'x');
    fs.writeFileSync(Buffer.from(`${ws.dir}/f\xff.md`, 'latin1'), 'not utf-8');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(at('sock'), resolve));
    t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const changes = await ws.changes();
    t.deepEqual(changes.files, [{ path: 'docs/readme.md', action: 'deleted' }]);
    t.deepEqual(changes.folders, []);
    const reasons = Object.fromEntries(changes.skipped.map((s) => [s.path, s.reason]));
    t.deepEqual(Object.keys(reasons).sort(), ['.git', 'bad\u0001name.md', 'docs/readme.md', 'empty/.cnskeep', 'f\uFFFD.md', 'link', 'pipe', 'sock']);
    t.regex(reasons['link']!, /symbolic link/);
    t.regex(reasons['docs/readme.md']!, /symbolic link/);
    t.regex(reasons['pipe']!, /fifo/);
    t.regex(reasons['sock']!, /socket/);
    t.regex(reasons['.git']!, /\.git/);
    t.regex(reasons['empty/.cnskeep']!, /reserved/);
    t.regex(reasons['bad\u0001name.md']!, /control characters/);
    t.regex(reasons['f\uFFFD.md']!, /UTF-8/);
  });

  test(`[${mode.name}] a reused folder still reports what its next run changes`, async (t) => {
    const { pool, commitId } = await setup(t, mode);
    const first = await pool.acquire(P, 'docs', commitId, mode.owner);
    await first.release();
    const again = await pool.acquire(P, 'docs', commitId, mode.owner);
    t.is(again.dir, first.dir);
    const readme = join(again.dir, 'readme.md');
    fs.writeFileSync(readme, Buffer.from('# README\n'));
    t.deepEqual(await again.changes(), { files: [{ path: 'readme.md', action: 'modified' }], folders: [], skipped: [] });
    await again.release();
    await pool.settled();
    t.false(fs.existsSync(again.dir));
  });

  test(`[${mode.name}] the disk cap`, async (t) => {
    const { pool, commitId } = await setup(t, mode);
    const ws = await pool.acquire(P, '', commitId, mode.owner, { diskBytes: 1024 * 1024 });
    if (!mode.capped) {
      t.regex(pool.diskCapNote, /not capped/);
      return;
    }
    t.regex(pool.diskCapNote, /ENOSPC/);
    const error = t.throws(() => fs.writeFileSync(join(ws.dir, 'big.bin'), Buffer.alloc(2 * 1024 * 1024)));
    t.is((error as NodeJS.ErrnoException).code, 'ENOSPC');
    // Within the cap, writes go through.
    fs.rmSync(join(ws.dir, 'big.bin'), { force: true });
    fs.writeFileSync(join(ws.dir, 'small.bin'), Buffer.alloc(256 * 1024));
    t.deepEqual((await ws.changes()).files, [{ path: 'small.bin', action: 'created' }]);
  });

  if (mode.capped) {
    test(`[${mode.name}] the number of new files and folders is capped too`, async (t) => {
      const { pool, commitId } = await setup(t, mode, { maxNewEntries: 40 });
      const ws = await pool.acquire(P, '', commitId, mode.owner);
      const error = t.throws(() => {
        for (let i = 0; i < 100; i++) fs.writeFileSync(join(ws.dir, `empty-${i}`), '');
      });
      t.is((error as NodeJS.ErrnoException).code, 'ENOSPC');
    });
  }
}

test('close() leaves no mount and no folder behind', async (t) => {
  const { pool, root, commitId } = await setup(t, FIRST);
  const busy = await pool.acquire(P, '', commitId, FIRST.owner);
  const idle = await pool.acquire(P, 'docs', commitId, FIRST.owner);
  await idle.release();
  const changed = await pool.acquire(P, 'docs', commitId, FIRST.owner);
  fs.writeFileSync(join(changed.dir, 'x.md'), 'x');
  await changed.release();
  const holder = pool.namespace?.pid ?? null;
  if (FIRST.capped) {
    // The mounts are in the pool's own mount namespace, never in ours.
    t.true(mountsUnder(root, holder).length > 0);
    t.deepEqual(mountsUnder(root), []);
  }
  // Acquires under way when the pool closes fail; nothing they began is left over.
  const late = [pool.acquire(P, 'data', commitId, FIRST.owner), pool.acquire(P, 'docs', commitId, FIRST.owner)];
  await pool.close();
  for (const r of await Promise.allSettled(late)) t.is(r.status, 'rejected');
  t.deepEqual(mountsUnder(root, holder), []);
  if (holder) {
    // The namespace itself goes: its holder ends once the pool lets it go.
    const deadline = Date.now() + 10_000;
    while (alive(holder) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    t.false(alive(holder));
  }
  t.false(fs.existsSync(root));
  t.false(fs.existsSync(busy.dir));
  await busy.release();
  await t.throwsAsync(pool.acquire(P, '', commitId, FIRST.owner), { message: /closed/ });
});

test('a new pool clears what an earlier process left', async (t) => {
  const { f, pool, root, commitId } = await setup(t, FIRST);
  const left = await pool.acquire(P, '', commitId, FIRST.owner);
  fs.writeFileSync(join(left.dir, 'x.md'), 'x');
  // Someone else's folder under the root (the runtime's probe, say) is not the pool's to remove.
  fs.mkdirSync(join(root, 'neighbour'));
  // The earlier pool is never closed (a crash): a new one on the same root starts clean.
  const next = new WorkspacePool({ root, content: f.store, ...FIRST.options });
  t.teardown(() => next.close());
  await next.ready;
  t.false(fs.existsSync(left.dir));
  t.deepEqual(
    mountsUnder(root, next.namespace?.pid).filter((m) => m.startsWith(join(root, 'runs'))),
    [],
  );
  const ws = await next.acquire(P, '', commitId, FIRST.owner);
  t.deepEqual(listTree(ws.dir).files, SEEDED_FILES);
  const holder = next.namespace?.pid;
  await next.close();
  t.deepEqual(mountsUnder(root, holder), []);
  t.deepEqual(fs.readdirSync(root), ['neighbour']);
});

test('checkouts of an older commit go once a newer commit is asked for', async (t) => {
  const { f, pool, commitId } = await setup(t, FIRST);
  const old = await pool.acquire(P, '', commitId, FIRST.owner);
  await old.release();
  t.like(pool.counts(), { idle: 1, pristines: 1 });
  await f.store.write(P, alice, { path: 'docs/readme.md', type: 'markdown', content: 'newer\n' });
  const head = f.store.head(P)!;
  t.not(head.commitId, commitId);
  const ws = await pool.acquire(P, '', head.commitId, FIRST.owner);
  t.is(ws.commitId, head.commitId);
  t.deepEqual(fs.readFileSync(join(ws.dir, 'docs/readme.md'), 'utf8'), 'newer\n');
  await pool.settled();
  t.false(fs.existsSync(old.dir));
  t.like(pool.counts(), { busy: 1, idle: 0, pristines: 1 });
});

test('idle folders and checkouts are bounded', async (t) => {
  const { pool, commitId } = await setup(t, FIRST, { maxIdlePerKey: 2, maxPristines: 2 });
  const three = await Promise.all([1, 2, 3].map(() => pool.acquire(P, 'docs', commitId, FIRST.owner)));
  await Promise.all(three.map((w) => w.release()));
  await pool.settled();
  t.like(pool.counts(), { idle: 2, pristines: 1 });
  // Two more scopes: the least recently used checkout (with only idle folders) goes.
  for (const scope of ['data', 'notes']) await (await pool.acquire(P, scope, commitId, FIRST.owner)).release();
  await pool.settled();
  t.like(pool.counts(), { idle: 2, pristines: 2 });
  t.true(fs.existsSync((await pool.acquire(P, 'notes', commitId, FIRST.owner)).dir));
});

test('acquire refuses a missing scope and bad arguments; a project without commits is an empty folder', async (t) => {
  const { pool, commitId } = await setup(t, FIRST);
  t.is(await errorCode(pool.acquire(P, 'missing', commitId, FIRST.owner)), 'NOT_FOUND');
  t.is(await errorCode(pool.acquire(P, '../x', commitId, FIRST.owner)), 'VALIDATION_ERROR');
  t.is(await errorCode(pool.acquire(P, '', 'HEAD', FIRST.owner)), 'VALIDATION_ERROR');
  t.is(await errorCode(pool.acquire(P, '', commitId, FIRST.owner, { diskBytes: 0 })), 'VALIDATION_ERROR');
  await pool.settled();
  t.like(pool.counts(), { busy: 0, pristines: 0 });
  const empty = await pool.acquire('fresh', '', null, FIRST.owner);
  t.deepEqual(listTree(empty.dir), { files: {}, folders: [], other: [] });
  fs.writeFileSync(join(empty.dir, 'a.md'), 'a');
  t.deepEqual((await empty.changes()).files, [{ path: 'a.md', action: 'created' }]);
});

if (isRoot) {
  test('a checkout too big for the tmpfs of checkouts goes to disk', async (t) => {
    const { pool, root, commitId } = await setup(t, MODES[0]!, { pristineBytes: 8192 });
    const ws = await pool.acquire(P, '', commitId, NOBODY);
    t.deepEqual(listTree(ws.dir).files, SEEDED_FILES);
    t.is(fs.readdirSync(join(root, 'pristine-disk')).length, 1);
    fs.writeFileSync(join(ws.dir, 'x.md'), 'x');
    t.deepEqual((await ws.changes()).files, [{ path: 'x.md', action: 'created' }]);
  });
}

test('HostShell runs programs with their arguments as given and reports failures with their output', async (t) => {
  const host = new HostShell();
  t.teardown(() => host.close());
  const dir = fs.mkdtempSync(join(tmpdir(), 'cns-hostshell-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const odd = join(dir, `it's a "name" with $HOME and spaces`);
  await Promise.all([host.run('mkdir', [odd]), host.run('true', []), host.run('true', [])]);
  t.true(fs.statSync(odd).isDirectory());
  await t.throwsAsync(host.run('sh', ['-c', 'echo "went wrong" >&2; exit 3']), { message: /went wrong/ });
  await t.throwsAsync(host.run('mkdir', ['a\nb']), { message: /line break/ });
  // A failure does not stop the shell.
  await host.run('rmdir', [odd]);
  t.false(fs.existsSync(odd));
});
