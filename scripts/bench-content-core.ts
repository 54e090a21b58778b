/**
 * Store-level benchmark of the content core (the HTTP benchmark lives elsewhere):
 *   1. single-file writes to ONE project from 16 concurrent writers, fsync off and on, against a
 *      plain isomorphic-git plumbing loop (blob, trees, commit, ref per write) in the same run;
 *   2. bulk-write of 10,000 small files in one call;
 *   3. versions of a node with 100 versions in projects of 1,000 and 100,000 commits (history
 *      built with `git fast-import`, then indexed by reconcile);
 *   4. resident memory after writing to 1,000 different projects.
 * Run: node --expose-gc --import=tsx scripts/bench-content-core.ts [seconds per write run, default 5] [writes]
 * (`writes` stops after the write figures).
 * (the memory figure is measured in a fresh child process, so earlier steps do not inflate it).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContentStore, type Actor } from '../src/content/contentStore.ts';
import { openDatabase } from '../src/db/database.ts';
import { plumbingCommitsPerSecond } from './lib/plumbingBaseline.ts';

const MANY = process.argv[2] === '--many-projects';
const SECONDS = MANY ? 0 : Number(process.argv[2] ?? 5);
const WRITERS = 16;
const actor: Actor = { type: 'user', id: 'u_bench', author: 'bench@example.com' };
const root = fs.mkdtempSync(join(tmpdir(), 'cns-bench-'));
const rows: [string, string][] = [];
const report = (name: string, value: string) => {
  rows.push([name, value]);
  console.log(`${name}: ${value}`);
};

function open(name: string, fsync = false) {
  const dir = join(root, name);
  const db = openDatabase(join(dir, 'cns.db'), { fsync });
  const store = new ContentStore({ dataDir: dir, db, fsync, repackEvery: 5000 });
  return { dir, db, store };
}

async function storeWrites(fsync: boolean): Promise<number> {
  const { store, db } = open(`writes-${fsync}`, fsync);
  const P = 'one';
  // Like the HTTP benchmark: one folder of 1,000 files, each writer cycling through its own.
  await store.bulkWrite(P, actor, Array.from({ length: 1000 }, (_, i) => ({ path: `bench/sub/f${i}.md`, type: 'markdown' as const, content: 'seed' })));
  let n = 0;
  const t0 = performance.now();
  const end = t0 + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; performance.now() < end; i++) {
        await store.write(P, actor, { path: `bench/sub/f${(w * 61 + i) % 1000}.md`, type: 'markdown', content: `writer ${w} write ${i}\n` });
        n++;
      }
    }),
  );
  const rate = n / ((performance.now() - t0) / 1000);
  await store.close();
  db.close();
  return rate;
}

async function bulk(): Promise<number> {
  const { store, db } = open('bulk');
  const files = Array.from({ length: 10_000 }, (_, i) => ({ path: `bulk/d${i % 100}/f${i}.json`, type: 'json' as const, content: { i, name: `file ${i}` } }));
  const t0 = performance.now();
  await store.bulkWrite('bulk', actor, files);
  const rate = files.length / ((performance.now() - t0) / 1000);
  await store.close();
  db.close();
  return rate;
}

/**
 * A history of `commits` commits made with git fast-import, carrying the store's trailers: one
 * node `hot.md` gets 100 versions spread over the history, the others touch 1,000 files.
 */
function buildHistory(gitdir: string, commits: number): void {
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', gitdir]);
  const parts: string[] = [];
  const ids = Array.from({ length: 1000 }, (_, i) => `n${String(i).padStart(14, '0')}`);
  const versions = new Map<string, number>();
  const every = Math.floor(commits / 100);
  for (let c = 1; c <= commits; c++) {
    const hot = c % every === 0 && (versions.get('hot') ?? 0) < 100;
    const id = hot ? 'hot00000000000000' : ids[c % 1000];
    const path = hot ? 'hot.md' : `f${c % 1000}.md`;
    const content = `${path} at commit ${c}\n`;
    const oid = createHash('sha1').update(`blob ${Buffer.byteLength(content)}\0${content}`).digest('hex');
    const v = (versions.get(hot ? 'hot' : id) ?? 0) + 1;
    versions.set(hot ? 'hot' : id, v);
    const msg = `write ${path}\n\nCns-Actor: user u_bench bench@example.com\nCns-Node: ${id} ${v} markdown ${v === 1 ? 'create' : 'update'} - ${Buffer.byteLength(content)} ${oid} ${path}\n`;
    const time = 1_700_000_000 + c;
    parts.push(
      `commit refs/heads/main\nmark :${c}\nauthor bench@example.com <bench@example.com> ${time} +0000\ncommitter bench@example.com <bench@example.com> ${time} +0000\n` +
        `data ${Buffer.byteLength(msg)}\n${msg}${c > 1 ? `from :${c - 1}\n` : ''}M 100644 inline ${path}\ndata ${Buffer.byteLength(content)}\n${content}\n`,
    );
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: gitdir, input: parts.join(''), maxBuffer: 1 << 30 });
}

async function versionsLatency(commits: number): Promise<{ p50: number; p99: number; syncSeconds: number }> {
  const { store, db, dir } = open(`history-${commits}`);
  fs.mkdirSync(dir, { recursive: true });
  buildHistory(join(dir, 'hist.git'), commits);
  const t0 = performance.now();
  await store.reconcile('hist');
  const syncSeconds = (performance.now() - t0) / 1000;
  const hot = store.getByPath('hist', 'hot.md');
  if (hot.version !== 100) throw new Error(`hot.md has ${hot.version} versions`);
  const samples: number[] = [];
  for (let i = 0; i < 3000; i++) {
    const s = performance.now();
    const list = store.listVersions('hist', { path: 'hot.md' }, { limit: 50 });
    samples.push(performance.now() - s);
    if (list.versions.length !== 50) throw new Error('short version list');
  }
  samples.sort((a, b) => a - b);
  await store.close();
  db.close();
  return { p50: samples[Math.floor(samples.length / 2)], p99: samples[Math.floor(samples.length * 0.99)], syncSeconds };
}

async function manyProjects(): Promise<{ before: number; after: number }> {
  const { store, db } = open('many');
  global.gc?.();
  const before = process.memoryUsage().rss;
  let next = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async () => {
      while (next < 1000) {
        const p = `p${next++}`;
        await store.write(p, actor, { path: 'docs/readme.md', type: 'markdown', content: `# ${p}\n` });
        await store.write(p, actor, { path: 'data/config.json', type: 'json', content: { project: p } });
      }
    }),
  );
  global.gc?.();
  const after = process.memoryUsage().rss;
  await store.close();
  db.close();
  return { before, after };
}

const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`;
if (MANY) {
  const mem = await manyProjects();
  console.log(JSON.stringify(mem));
  fs.rmSync(root, { recursive: true, force: true });
  process.exit(0);
}
try {
  // The same baseline loop as the HTTP benchmark (bench/sub/f<i % 1000>.md, one commit per write).
  const base = await plumbingCommitsPerSecond(root, 1500);
  report('isomorphic-git plumbing loop (baseline)', `${base.toFixed(0)} commits/s`);
  const w = await storeWrites(false);
  report(`store writes, ${WRITERS} writers, one project, fsync off`, `${w.toFixed(0)} writes/s (${(w / base).toFixed(1)}x baseline)`);
  const wf = await storeWrites(true);
  report(`store writes, ${WRITERS} writers, one project, fsync on`, `${wf.toFixed(0)} writes/s (${(wf / base).toFixed(1)}x baseline)`);
  if (process.argv[3] !== 'writes') await slowFigures();
  console.log('\n| measure | result |\n| --- | --- |');
  for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
} finally {
  fs.rmSync(root, { recursive: true, force: true });
}

async function slowFigures(): Promise<void> {
  report('bulk-write 10,000 files in one call', `${(await bulk()).toFixed(0)} files/s`);
  const small = await versionsLatency(1_000);
  const large = await versionsLatency(100_000);
  report('versions (limit 50) of a 100-version node, 1,000 commits', `p50 ${small.p50.toFixed(3)} ms, p99 ${small.p99.toFixed(3)} ms`);
  report('versions (limit 50) of a 100-version node, 100,000 commits', `p50 ${large.p50.toFixed(3)} ms, p99 ${large.p99.toFixed(3)} ms`);
  report('versions p50 ratio 100k/1k commits', (large.p50 / small.p50).toFixed(2));
  report('reconcile of 100,000 trailer commits', `${large.syncSeconds.toFixed(1)} s`);
  const child = execFileSync(process.execPath, ['--expose-gc', '--import=tsx', import.meta.filename, '--many-projects']);
  const mem = JSON.parse(child.toString().trim().split('\n').pop()!) as { before: number; after: number };
  report('RSS after writing to 1,000 projects', `${mb(mem.after)} (before: ${mb(mem.before)})`);
}
