/**
 * Issue 18, figure 1:
 *   a. GET /p/{key} of a rendered Markdown page, against the server's trivial route (GET /healthz)
 *      in the same run: the page must reach >= 0.5x its rate (the render is cached per version);
 *   b. API throughput (GET /content/{p}/cat) with analytics on and off differs by < 5 %.
 * Both servers run in their own processes and stay up together; the load alternates between them
 * round by round so that both see the same machine, and the median round counts.
 * Run: node --import=tsx scripts/bench-publish.ts [requests per round=10000] [rounds=5]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, runLoad, type LoadResult } from './lib/load.ts';
import { api, benchProject, startBenchServer, type BenchServer } from './lib/serverProcess.ts';

const N = Number(process.argv[2] ?? 10_000);
const ROUNDS = Number(process.argv[3] ?? 5);
const CONCURRENCY = 16;
const work = mkdtempSync(join(tmpdir(), 'cns-bench-publish-'));

/** A page of the size and shape of real documentation: headings, paragraphs, a table, code, links. */
function samplePage(): string {
  const parts = ['# Release notes', ''];
  for (let i = 1; i <= 12; i++) {
    parts.push(`## Section ${i}`, '', `Paragraph ${i} with **bold**, _emphasis_, \`code\` and a [link](https://example.com/${i}).`.repeat(3), '');
    if (i % 4 === 0) parts.push('| key | value |', '|---|---|', ...Array.from({ length: 8 }, (_, r) => `| k${r} | v${r} |`), '');
    if (i % 3 === 0) parts.push('```ts', 'export const answer = (x: number) => x * 42;', '```', '');
  }
  return parts.join('\n');
}

interface Target {
  name: string;
  server: BenchServer;
  token: string;
  projectId: string;
  key: string;
}

async function prepare(name: string, env: Record<string, string>): Promise<Target> {
  const dir = join(work, name);
  const server = await startBenchServer(dir, env);
  const { token, projectId } = await benchProject(server.url);
  const node = await api(server.url, 'POST', `/content/${projectId}/write`, token, { path: 'docs/release-notes.md', node_type: 'markdown', content: samplePage() });
  const published = await api(server.url, 'POST', '/publishes/', token, { project_id: projectId, node_id: node.id });
  return { name, server, token, projectId, key: published.publish_key };
}

const median = (xs: LoadResult[]) => [...xs].sort((a, b) => a.rps - b.rps)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const load = loadavg()[0]!;
  console.log(`load average (1 min) before the run: ${load.toFixed(2)} on 2 cores${load >= 1.5 ? ' (above 1.5: figures are indicative only)' : ''}`);
  const on = await prepare('analytics-on', {});
  servers.push(on.server);
  const off = await prepare('analytics-off', { CNS_ANALYTICS: 'false' });
  servers.push(off.server);
  const healthz = () => runLoad(on.server.url, CONCURRENCY, N, () => ({ method: 'GET', path: '/healthz' }));
  const page = () => runLoad(on.server.url, CONCURRENCY, N, () => ({ method: 'GET', path: `/api/v1/p/${on.key}`, headers: { 'user-agent': 'bench' } }));
  const cat = (t: Target) => () =>
    runLoad(t.server.url, CONCURRENCY, N, () => ({
      method: 'GET',
      path: `/api/v1/content/${t.projectId}/cat?path=docs/release-notes.md`,
      headers: { authorization: `Bearer ${t.token}` },
    }));
  // Warm-up, not counted: JIT, caches, and the first render (jsdom and DOMPurify load) on BOTH servers, so
  // that they differ only in CNS_ANALYTICS (jsdom's heap alone makes every garbage collection dearer).
  const pageOf = (t: Target) => () => runLoad(t.server.url, CONCURRENCY, N, () => ({ method: 'GET', path: `/api/v1/p/${t.key}`, headers: { 'user-agent': 'bench' } }));
  for (const run of [healthz, page, pageOf(off), cat(on), cat(off)]) await run();

  const results: Record<string, LoadResult[]> = { healthz: [], page: [], on: [], off: [] };
  for (let r = 0; r < ROUNDS; r++) {
    // Alternate the order every round so neither side always runs first.
    const order: [string, () => Promise<LoadResult>][] =
      r % 2 === 0
        ? [['healthz', healthz], ['page', page], ['on', cat(on)], ['off', cat(off)]]
        : [['off', cat(off)], ['on', cat(on)], ['page', page], ['healthz', healthz]];
    for (const [name, run] of order) {
      const res = await run();
      if (res.errors) throw new Error(`${name}: ${res.errors} of ${res.requests} requests failed`);
      results[name]!.push(res);
    }
    console.log(`round ${r + 1}: ${Object.entries(results).map(([k, v]) => `${k} ${fmt(v.at(-1)!.rps, 0)}/s`).join(', ')}`);
  }
  const h = median(results.healthz!);
  const p = median(results.page!);
  const a = median(results.on!);
  const b = median(results.off!);
  const ratio = p.rps / h.rps;
  const diff = (b.rps - a.rps) / b.rps;
  const rows = [
    [`GET /healthz (trivial route), ${CONCURRENCY} connections`, `${fmt(h.rps, 0)} req/s`, `p50 ${fmt(h.p50)} ms, p99 ${fmt(h.p99)} ms`],
    [`1a. GET /p/{key}, rendered Markdown page (${Buffer.byteLength(samplePage())} B of Markdown)`, `${fmt(p.rps, 0)} req/s`, `p50 ${fmt(p.p50)} ms, p99 ${fmt(p.p99)} ms; ${fmt(ratio)}x /healthz (target >= 0.5x) ${ratio >= 0.5 ? 'OK' : 'MISSED'}`],
    ['1b. GET /content/{p}/cat, analytics on', `${fmt(a.rps, 0)} req/s`, `p50 ${fmt(a.p50)} ms, p99 ${fmt(a.p99)} ms`],
    ['1b. GET /content/{p}/cat, analytics off (CNS_ANALYTICS=false)', `${fmt(b.rps, 0)} req/s`, `p50 ${fmt(b.p50)} ms, p99 ${fmt(b.p99)} ms; on is ${fmt(diff * 100, 1)} % slower (target < 5 %) ${Math.abs(diff) < 0.05 ? 'OK' : 'MISSED'}`],
  ];
  console.log(`\nmedian of ${ROUNDS} rounds of ${N} requests; load average (1 min) after: ${loadavg()[0]!.toFixed(2)}`);
  console.log('| figure | rate | detail |\n|---|---|---|');
  for (const r of rows) console.log(`| ${r.join(' | ')} |`);
}

const servers: BenchServer[] = [];
try {
  await main();
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(work, { recursive: true, force: true });
}
