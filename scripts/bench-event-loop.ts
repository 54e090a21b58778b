/**
 * Issue 9, item 1: is the server still responsive while one request does heavy work?
 * Measures GET /healthz latency (open loop: one probe every 10 ms, whatever the answers do) on
 * loopback against `cns serve` in its own process:
 *   baseline  the server idle;
 *   bulk      while one bulk-write of 100,000 small files (one commit) runs;
 *   tree      while the whole 100,101-node tree is read page by page (the default limit, 2,000).
 * The figure of the issue: healthz p99 < 100 ms during the bulk write.
 * Bounded: the whole run is stopped after 10 minutes. Run once; other people share the cores.
 * Run: node --import=tsx scripts/bench-event-loop.ts [files=100000]
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt } from './lib/load.ts';
import { api, benchProject, startBenchServer, type BenchServer } from './lib/serverProcess.ts';

const FILES = Number(process.argv[2] ?? 100_000);
const PROBE_EVERY_MS = 10;
const BASELINE_MS = 5_000;
const RUN_LIMIT_MS = 10 * 60_000;

const work = mkdtempSync(join(tmpdir(), 'cns-bench-loop-'));
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
let server: BenchServer | null = null;

const limit = setTimeout(() => {
  console.error(`stopped: the run took longer than ${RUN_LIMIT_MS / 1000} s`);
  void server?.stop().finally(() => process.exit(2));
}, RUN_LIMIT_MS);
limit.unref();

/** Probes that failed (connection error, status other than 200, no answer within 30 s), by reason. */
const failures = new Map<string, number>();

/** One GET /healthz; resolves with its latency in ms from `sentAt`, or null (counted in `failures`). */
function probe(base: URL, sentAt: number): Promise<number | null> {
  return new Promise((resolve) => {
    const fail = (why: string) => {
      failures.set(why, (failures.get(why) ?? 0) + 1);
      resolve(null);
    };
    const req = http.get({ host: base.hostname, port: base.port, path: '/healthz', agent, timeout: 30_000 }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - sentAt) : fail(`status ${res.statusCode}`)));
      res.on('error', (e) => fail(e.message));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 30 s')));
    req.on('error', (e) => fail((e as NodeJS.ErrnoException).code ?? e.message));
  });
}

/** Probes every PROBE_EVERY_MS until `done` settles (or for `ms` when given); returns the latencies. */
async function probeWhile(url: string, done: Promise<unknown> | null, ms = 0): Promise<number[]> {
  const base = new URL(url);
  const latencies: Promise<number | null>[] = [];
  let running = true;
  const start = performance.now();
  let n = 0;
  const tick = () => {
    if (!running) return;
    // Open loop: each probe is due at a fixed time; a late timer counts against the server too.
    const due = start + n * PROBE_EVERY_MS;
    latencies.push(probe(base, due));
    n++;
    setTimeout(tick, Math.max(0, start + n * PROBE_EVERY_MS - performance.now()));
  };
  tick();
  if (done) await done;
  else await new Promise((r) => setTimeout(r, ms));
  running = false;
  return (await Promise.all(latencies)).filter((x): x is number => x !== null);
}

function stats(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { n: s.length, p50: at(0.5), p99: at(0.99), max: s[s.length - 1]! };
}

async function main(): Promise<void> {
  server = await startBenchServer(join(work, 'data'));
  const { token, projectId } = await benchProject(server.url);
  await probeWhile(server.url, null, 1000); // warm-up
  const idle = stats(await probeWhile(server.url, null, BASELINE_MS));

  const files = Array.from({ length: FILES }, (_, i) => ({ path: `bulk/d${i % 100}/f${i}.md`, content: `# file ${i}\n`, node_type: 'markdown' }));
  const body = JSON.stringify({ files, message: 'bulk import' });
  const t0 = performance.now();
  const bulk = fetch(`${server.url}/api/v1/content/${projectId}/bulk-write`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  }).then(async (res) => {
    const json = (await res.json()) as { data: { changed_count: number; project_version: number } };
    if (!res.ok) throw new Error(`bulk-write: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return { ms: performance.now() - t0, ...json.data, bytes: body.length };
  });
  const during = stats(await probeWhile(server.url, bulk));
  const b = await bulk;
  if (b.changed_count !== FILES + 100 + 1) throw new Error(`expected ${FILES + 101} changed nodes, got ${b.changed_count}`);

  let nodes = 0;
  let pages = 0;
  const t1 = performance.now();
  const walk = (async () => {
    let cursor: string | null = null;
    do {
      const page: { node_count: number; next_cursor: string | null } = await api(
        server!.url,
        'GET',
        `/content/${projectId}/tree${cursor ? `?cursor=${cursor}` : ''}`,
        token,
      );
      nodes += page.node_count;
      pages++;
      cursor = page.next_cursor;
    } while (cursor);
  })();
  const treeLat = stats(await probeWhile(server.url, walk));
  const treeMs = performance.now() - t1;
  if (nodes !== FILES + 101) throw new Error(`tree pages gave ${nodes} nodes, expected ${FILES + 101}`);

  const row = (name: string, s: ReturnType<typeof stats>) => `| ${name} | ${s.n} | ${fmt(s.p50, 1)} | ${fmt(s.p99, 1)} | ${fmt(s.max, 1)} |`;
  console.log(`\nGET /healthz, one probe every ${PROBE_EVERY_MS} ms (open loop), ms:\n`);
  console.log('| phase | probes | p50 | p99 | max |');
  console.log('|---|---|---|---|---|');
  console.log(row('baseline: idle', idle));
  console.log(row(`during a bulk-write of ${FILES.toLocaleString('en')} files`, during));
  console.log(row(`during tree paging (${pages} pages)`, treeLat));
  console.log(`\nbulk-write: ${fmt(b.ms / 1000, 1)} s for the call (${(b.bytes / 1e6).toFixed(1)} MB body, ${b.changed_count} nodes, one commit)`);
  console.log(`tree: ${nodes} nodes in ${pages} pages, ${fmt(treeMs / 1000, 1)} s`);
  console.log(`failed probes: ${failures.size === 0 ? 'none' : [...failures].map(([why, n]) => `${n} × ${why}`).join(', ')}`);
  console.log(`figure (healthz p99 < 100 ms during the bulk write): ${during.p99 < 100 && failures.size === 0 ? 'reached' : 'NOT reached'}`);
}

process.on('unhandledRejection', (e) => {
  console.error('unexpected:', e);
  void server?.stop().finally(() => process.exit(1));
});

main()
  .catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(async () => {
    agent.destroy();
    await server?.stop();
    rmSync(work, { recursive: true, force: true });
  });
