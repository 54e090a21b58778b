/**
 * Issue 3's HTTP figures, each against a baseline measured in the same run:
 *   1. single-file writes over HTTP, 16 clients, one project (with and without CNS_FSYNC)
 *      vs a plain isomorphic-git plumbing loop;
 *   2. cat and stat on a 10,000-file project at 16 connections vs GET /healthz;
 *   4. bulk-write of 10,000 small files in one call.
 * Run: node --import=tsx scripts/bench-content-http.ts [writes=8000]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, runLoad } from './lib/load.ts';
import { plumbingCommitsPerSecond } from './lib/plumbingBaseline.ts';
import { api, benchProject, startBenchServer } from './lib/serverProcess.ts';

const WRITES = Number(process.argv[2] ?? 8000);
const CONCURRENCY = 16;
const work = mkdtempSync(join(tmpdir(), 'cns-bench-http-'));
const rows: string[][] = [];

async function writeFigure(fsync: boolean): Promise<number> {
  const dataDir = join(work, fsync ? 'fsync' : 'nofsync');
  const server = await startBenchServer(dataDir, { CNS_FSYNC: String(fsync) });
  try {
    const { token, projectId } = await benchProject(server.url);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const r = await runLoad(server.url, CONCURRENCY, WRITES, (i) => ({
      method: 'POST',
      path: `/api/v1/content/${projectId}/write`,
      headers,
      body: JSON.stringify({ path: `bench/sub/f${i % 1000}.md`, content: `write ${i}\n`, node_type: 'markdown' }),
    }));
    const versions = await api(server.url, 'GET', `/content/${projectId}/versions?path=bench/sub/f0.md&limit=1`, token);
    if (r.errors > 0) throw new Error(`${r.errors} writes failed`);
    if (versions.total !== Math.ceil(WRITES / 1000)) throw new Error(`expected ${Math.ceil(WRITES / 1000)} versions of f0, got ${versions.total}`);
    rows.push([`1. HTTP writes/s, ${CONCURRENCY} clients, fsync=${fsync}`, fmt(r.rps, 0), `p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms`]);
    return r.rps;
  } finally {
    await server.stop();
  }
}

async function readFigures(): Promise<void> {
  const server = await startBenchServer(join(work, 'reads'));
  try {
    const { token, projectId } = await benchProject(server.url);
    const files = Array.from({ length: 10_000 }, (_, i) => ({ path: `docs/d${i % 100}/f${i}.md`, content: `# file ${i}\n`, node_type: 'markdown' }));
    const t0 = process.hrtime.bigint();
    await api(server.url, 'POST', `/content/${projectId}/bulk-write`, token, { files, message: 'bulk import' });
    const bulkSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    rows.push(['4. bulk-write of 10,000 files in one call, files/s', fmt(10_000 / bulkSeconds, 0), `${fmt(bulkSeconds * 1000, 0)} ms for the call`]);

    const headers = { authorization: `Bearer ${token}` };
    const n = 20_000;
    await runLoad(server.url, CONCURRENCY, 2000, () => ({ method: 'GET', path: '/healthz' })); // warm-up
    const trivial = await runLoad(server.url, CONCURRENCY, n, () => ({ method: 'GET', path: '/healthz' }));
    // Spread reads over the whole project so caches do not flatter the figure.
    const fixed = (i: number) => `docs/d${((i * 7919) % 10_000) % 100}/f${(i * 7919) % 10_000}.md`;
    const cat = await runLoad(server.url, CONCURRENCY, n, (i) => ({ method: 'GET', path: `/api/v1/content/${projectId}/cat?path=${fixed(i)}`, headers }));
    const stat = await runLoad(server.url, CONCURRENCY, n, (i) => ({ method: 'GET', path: `/api/v1/content/${projectId}/stat?path=${fixed(i)}`, headers }));
    if (cat.errors + stat.errors > 0) throw new Error(`read errors: cat ${cat.errors}, stat ${stat.errors}`);
    rows.push(['2. trivial route (GET /healthz) req/s', fmt(trivial.rps, 0), `p50 ${fmt(trivial.p50)} ms, p99 ${fmt(trivial.p99)} ms`]);
    rows.push(['2. cat req/s (ratio to trivial)', `${fmt(cat.rps, 0)} (${fmt(cat.rps / trivial.rps)})`, `p50 ${fmt(cat.p50)} ms, p99 ${fmt(cat.p99)} ms`]);
    rows.push(['2. stat req/s (ratio to trivial)', `${fmt(stat.rps, 0)} (${fmt(stat.rps / trivial.rps)})`, `p50 ${fmt(stat.p50)} ms, p99 ${fmt(stat.p99)} ms`]);
    const single = await runLoad(server.url, 1, 5000, (i) => ({ method: 'GET', path: `/api/v1/content/${projectId}/cat?path=${fixed(i)}`, headers }));
    rows.push(['2. cat at 1 connection (service time)', fmt(single.rps, 0), `p50 ${fmt(single.p50)} ms, p99 ${fmt(single.p99)} ms`]);
  } finally {
    await server.stop();
  }
}

try {
  const baseline = await plumbingCommitsPerSecond(work, 1500);
  rows.push(['baseline: isomorphic-git plumbing loop, commits/s', fmt(baseline, 0), '']);
  const plain = await writeFigure(false);
  rows[rows.length - 1]![1] += ` (${fmt(plain / baseline, 1)}x baseline)`;
  const synced = await writeFigure(true);
  rows[rows.length - 1]![1] += ` (${fmt(synced / baseline, 1)}x baseline)`;
  await readFigures();
  const width = Math.max(...rows.map((r) => r[0]!.length));
  console.log(`\nfigure${' '.repeat(width - 6)} | value | latency`);
  for (const [name, value, extra] of rows) console.log(`${name!.padEnd(width)} | ${value} | ${extra}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
