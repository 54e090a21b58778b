/**
 * Sandbox workspaces (src/sandbox/workspace): what handing out, comparing and giving back a
 * working folder costs for subtrees of 1,000 and 10,000 files, per strategy available here
 * (overlay and copy-on-tmpfs need root; copy without mounts always runs):
 *   - cold: the first acquire at a commit (export of the checkout + a folder);
 *   - fresh: a new folder from a cached checkout (all idle ones busy);
 *   - reused: an unchanged folder handed out again;
 *   - changes() with nothing changed and with 100 files rewritten; release unchanged / changed
 *     (the caller's wait; the removal runs in the background and is timed apart);
 *   - the longest event-loop stall seen during the cold acquires.
 * Run: node --import=tsx scripts/bench-workspace.ts [rounds, default 7]
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ContentStore, type Actor } from '../src/content/contentStore.ts';
import { openDatabase } from '../src/db/database.ts';
import { scanFolder } from '../src/sandbox/workspace/folderScan.ts';
import { WorkspacePool, type WorkspacePoolOptions } from '../src/sandbox/workspace/workspacePool.ts';

const ROUNDS = Number(process.argv[2] ?? 7);
const actor: Actor = { type: 'user', id: 'u_bench', author: 'bench@example.com' };
const isRoot = process.getuid?.() === 0;
const owner = isRoot ? { uid: 65534, gid: 65534 } : null;

const dir = fs.mkdtempSync(join(tmpdir(), 'cns-bench-ws-'));
const db = openDatabase(join(dir, 'cns.db'));
const store = new ContentStore({ dataDir: dir, db });

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (xs: number[]) => `${p50(xs).toFixed(1)} ms (min ${Math.min(...xs).toFixed(1)})`;
async function time<T>(f: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const r = await f();
  return [performance.now() - t, r];
}

async function seed(project: string, files: number): Promise<void> {
  const list = Array.from({ length: files }, (_, i) => ({
    path: `d${i % 50}/s${i % 7}/f${i}.md`,
    type: 'markdown' as const,
    content: `# file ${i}\n\n${'lorem ipsum dolor sit amet '.repeat(10 + (i % 20))}\n`,
  }));
  for (let i = 0; i < list.length; i += 5000) await store.bulkWrite(project, actor, list.slice(i, i + 5000));
}

async function benchPool(label: string, options: Partial<WorkspacePoolOptions>, project: string, files: number): Promise<void> {
  const rounds = files > 5000 ? Math.max(3, Math.ceil(ROUNDS / 2)) : ROUNDS;
  const pool = new WorkspacePool({ root: join(dir, `sandbox-${label.replace(/\W+/g, '-')}`), content: store, ...options });
  await pool.ready;
  const cold: number[] = [];
  const delay = monitorEventLoopDelay({ resolution: 1 });
  for (let i = 0; i < rounds; i++) {
    // A new commit each round, so each first acquire exports its checkout.
    await store.write(project, actor, { path: 'round.md', type: 'markdown', content: `round ${i} ${label}\n` });
    const head = store.head(project)!;
    delay.enable();
    const [ms, ws] = await time(() => pool.acquire(project, '', head.commitId, owner));
    delay.disable();
    cold.push(ms);
    await ws.release();
  }
  const { commitId } = store.head(project)!;
  // Fresh folders: hold every one so none is idle (the first takes the idle one the last cold round left).
  const held = [await pool.acquire(project, '', commitId, owner)];
  const fresh: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const [ms, ws] = await time(() => pool.acquire(project, '', commitId, owner));
    fresh.push(ms);
    held.push(ws);
  }
  const unchangedScan: number[] = [];
  const releaseKept: number[] = [];
  for (const ws of held) {
    unchangedScan.push((await time(() => ws.changes()))[0]);
    releaseKept.push((await time(() => ws.release()))[0]);
  }
  await pool.settled();
  const reused: number[] = [];
  const changed: number[] = [];
  const releaseDropped: number[] = [];
  const removal: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const [ms, ws] = await time(() => pool.acquire(project, '', commitId, owner));
    reused.push(ms);
    for (let k = 0; k < 100; k++) fs.appendFileSync(join(ws.dir, `d${k % 50}/s${k % 7}/f${k}.md`), 'changed\n');
    const [cms, c] = await time(() => ws.changes());
    if (c.files.length !== 100) throw new Error(`expected 100 changed files, got ${c.files.length}`);
    changed.push(cms);
    releaseDropped.push((await time(() => ws.release()))[0]);
    removal.push((await time(() => pool.settled()))[0]);
    // Back to one idle folder for the next round.
    await (await pool.acquire(project, '', commitId, owner)).release();
  }
  console.log(`\n${label}, ${files} files (${pool.strategy}; ${rounds} rounds, p50)`);
  console.log(`  cold acquire (export + folder):  ${fmt(cold)}   longest event-loop stall ${(delay.max / 1e6).toFixed(1)} ms`);
  console.log(`  fresh acquire (cached checkout): ${fmt(fresh)}`);
  console.log(`  reused acquire:                  ${fmt(reused)}`);
  console.log(`  changes(), nothing changed:      ${fmt(unchangedScan)}`);
  console.log(`  changes(), 100 files changed:    ${fmt(changed)}`);
  console.log(`  release, unchanged (kept):       ${fmt(releaseKept)}`);
  console.log(`  release, changed (dropped):      ${fmt(releaseDropped)}   removal in the background ${fmt(removal)}`);
  await pool.close();
}

async function benchScan(files: number, project: string): Promise<void> {
  const out = fs.mkdtempSync(join(dir, 'scan-'));
  await store.exportTree(project, store.head(project)!.commitId, '', out);
  const sliced: number[] = [];
  for (let i = 0; i < ROUNDS; i++) sliced.push((await time(() => scanFolder(out)))[0]);
  const promised: number[] = [];
  for (let i = 0; i < ROUNDS; i++) promised.push((await time(() => promiseScan(out)))[0]);
  console.log(`\nscan of ${files} files: readdir + lstat in 4 ms slices (number stats) ${fmt(sliced)}; the same with fs.promises ${fmt(promised)}`);
}

/** The promise form of the walk (one thread-pool hop per call), for comparison. */
async function promiseScan(root: string): Promise<number> {
  let n = 0;
  const dirs = [''];
  while (dirs.length) {
    const rels = dirs.splice(0);
    const listings = await Promise.all(rels.map((r) => fs.promises.readdir(join(root, r), { withFileTypes: true })));
    const paths: string[] = [];
    rels.forEach((r, i) => {
      for (const d of listings[i]!) {
        const p = r ? `${r}/${d.name}` : d.name;
        paths.push(p);
        if (d.isDirectory()) dirs.push(p);
      }
    });
    for (let i = 0; i < paths.length; i += 256) {
      await Promise.all(paths.slice(i, i + 256).map((p) => fs.promises.lstat(join(root, p), { bigint: true })));
      n += Math.min(256, paths.length - i);
    }
  }
  return n;
}

try {
  await seed('p1k', 1000);
  await seed('p10k', 10_000);
  for (const [files, project] of [
    [1000, 'p1k'],
    [10_000, 'p10k'],
  ] as const) {
    await benchScan(files, project);
    if (isRoot) {
      await benchPool('overlay', { strategy: 'overlay' }, project, files);
      await benchPool('copy on tmpfs', { strategy: 'copy' }, project, files);
    }
    await benchPool('copy without mounts', { strategy: 'copy', mounts: false }, project, files);
  }
} finally {
  await store.close();
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
}
