/**
 * Issue 29, figure 5: one worker's read path. One `cns serve` process, a project of 10,000 small
 * files; in the same run, each round measures GET /healthz at 16 connections (the baseline),
 * `cat` of one small file at 16 connections with a user's bearer token and with a scoped read
 * key (X-Access-Key), and `cat` at 1 connection (service time). The figure: cat ≥ 0.5× /healthz
 * of the same round, p50 < 1 ms.
 *
 * Run: node --import=tsx scripts/bench-read-path.ts [rounds=3] [seconds=5]
 * BENCH_PROFILE=DIR also writes the server's CPU profile of each measured cat run (not of its
 * warm-up) and of /healthz to DIR/<round>-<name>.cpuprofile, taken over the inspector; the
 * profiler slows the server, so such a run's figures are not the benchmark's.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, Inspector } from './lib/inspector.ts';
import { fmt, runLoad, type LoadResult, type RequestSpec } from './lib/load.ts';
import { api, benchProject, startBenchServer } from './lib/serverProcess.ts';

const ROUNDS = Number(process.argv[2] ?? 3);
const SECONDS = Number(process.argv[3] ?? 5);
const CONCURRENCY = 16;
const FILE = 'docs/d42/f4242.md';

const profileDir = process.env.BENCH_PROFILE;
let inspector: Inspector | null = null;

/** Warms up, estimates the rate, then runs for about SECONDS (closed loop, `total` requests). */
async function measure(url: string, concurrency: number, spec: RequestSpec, profileAs?: string): Promise<LoadResult> {
  await runLoad(url, concurrency, 2000, () => spec);
  const probe = await runLoad(url, concurrency, 3000, () => spec);
  const total = Math.max(5000, Math.round(probe.rps * SECONDS));
  const profiling = inspector && profileAs ? inspector : null;
  if (profiling) await profiling.send('Profiler.start');
  const r = await runLoad(url, concurrency, total, () => spec);
  if (profiling) {
    const { profile } = await profiling.send<{ profile: unknown }>('Profiler.stop');
    writeFileSync(join(profileDir!, `${profileAs}.cpuprofile`), JSON.stringify(profile));
  }
  if (r.errors > 0) throw new Error(`${r.errors} of ${total} requests to ${spec.path} failed`);
  return r;
}

const work = mkdtempSync(join(tmpdir(), 'cns-bench-read-'));
const inspectPort = profileDir ? await freePort() : 0;
const server = await startBenchServer(join(work, 'data'), {}, profileDir ? [`--inspect=127.0.0.1:${inspectPort}`] : []);
try {
  if (profileDir) {
    mkdirSync(profileDir, { recursive: true });
    inspector = await Inspector.open(inspectPort);
    await inspector.send('Profiler.enable');
    await inspector.send('Profiler.setSamplingInterval', { interval: 100 });
  }
  const { token, projectId } = await benchProject(server.url);
  const files = Array.from({ length: 10_000 }, (_, i) => ({ path: `docs/d${i % 100}/f${i}.md`, content: `# file ${i}\n`, node_type: 'markdown' }));
  await api(server.url, 'POST', `/content/${projectId}/bulk-write`, token, { files, message: 'bulk import' });
  const { key } = await api(server.url, 'POST', '/connections/', token, { project_id: projectId, name: 'bench-reader', kind: 'api', scope_path: 'docs', mode: 'read' });
  const catPath = `/api/v1/content/${projectId}/cat?path=${encodeURIComponent(FILE)}`;
  const health: RequestSpec = { method: 'GET', path: '/healthz' };
  const byToken: RequestSpec = { method: 'GET', path: catPath, headers: { authorization: `Bearer ${token}` } };
  const byKey: RequestSpec = { method: 'GET', path: catPath, headers: { 'x-access-key': key } };

  const rows: { name: string; r: LoadResult; base?: LoadResult }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const trivial = await measure(server.url, CONCURRENCY, health, `${round}-healthz`);
    rows.push({ name: `${round}. GET /healthz, ${CONCURRENCY} connections`, r: trivial });
    rows.push({ name: `${round}. cat, bearer token, ${CONCURRENCY} connections`, r: await measure(server.url, CONCURRENCY, byToken, `${round}-token`), base: trivial });
    rows.push({ name: `${round}. cat, access key, ${CONCURRENCY} connections`, r: await measure(server.url, CONCURRENCY, byKey, `${round}-key`), base: trivial });
    rows.push({ name: `${round}. cat, bearer token, 1 connection`, r: await measure(server.url, 1, byToken) });
  }
  const width = Math.max(...rows.map((r) => r.name.length));
  if (profileDir) console.log(`\nprofiles in ${profileDir} (figures slowed by the profiler)`);
  console.log(`\n${'measurement'.padEnd(width)} | req/s | ratio to /healthz | p50 ms | p99 ms`);
  for (const { name, r, base } of rows) {
    console.log(`${name.padEnd(width)} | ${fmt(r.rps, 0).padStart(6)} | ${base ? fmt(r.rps / base.rps).padStart(5) : '    -'} | ${fmt(r.p50)} | ${fmt(r.p99)}`);
  }
} finally {
  await inspector?.close();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
