/**
 * Issue 29, figure 5: one worker's read path. One `cns serve` process, a project of 10,000 small
 * files; in the same run, each round measures GET /healthz at 16 connections (the baseline),
 * `cat` of one small file at 16 connections with a user's bearer token and with a scoped read
 * key (X-Access-Key), and `cat` at 1 connection (service time). The figure: cat ≥ 0.5× /healthz
 * of the same round, p50 < 1 ms.
 *
 * Run: node --import=tsx scripts/bench-read-path.ts [rounds=5] [seconds=5]; the figure is the
 * median of the rounds.
 * The server's CPU time per answer (user + system, from /proc, Linux only) is printed too: unlike
 * req/s it barely moves when other processes share the machine.
 * BENCH_PROFILE=DIR also writes the server's CPU profile of each measured cat run (not of its
 * warm-up) and of /healthz to DIR/<round>-<name>.cpuprofile, taken over the inspector; the
 * profiler slows the server, so such a run's figures are not the benchmark's.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, Inspector } from './lib/inspector.ts';
import { fmt, runLoad, type LoadResult, type RequestSpec } from './lib/load.ts';
import { api, benchProject, startBenchServer } from './lib/serverProcess.ts';

const ROUNDS = Number(process.argv[2] ?? 5);
const SECONDS = Number(process.argv[3] ?? 5);
const CONCURRENCY = 16;
const FILE = 'docs/d42/f4242.md';

const profileDir = process.env.BENCH_PROFILE;
let inspector: Inspector | null = null;

/** The server process's CPU seconds so far (utime + stime of /proc/PID/stat), or NaN off Linux. */
function serverCpuSeconds(): number {
  try {
    const fields = readFileSync(`/proc/${server.child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** Warms up, estimates the rate, then runs for about SECONDS (closed loop, `total` requests). */
async function measure(url: string, concurrency: number, spec: RequestSpec, profileAs?: string): Promise<LoadResult & { cpuUs: number }> {
  await runLoad(url, concurrency, 2000, () => spec);
  const probe = await runLoad(url, concurrency, 3000, () => spec);
  const total = Math.max(5000, Math.round(probe.rps * SECONDS));
  const profiling = inspector && profileAs ? inspector : null;
  if (profiling) await profiling.send('Profiler.start');
  const cpu0 = serverCpuSeconds();
  const r = await runLoad(url, concurrency, total, () => spec);
  const cpuUs = ((serverCpuSeconds() - cpu0) / total) * 1e6;
  if (profiling) {
    const { profile } = await profiling.send<{ profile: unknown }>('Profiler.stop');
    writeFileSync(join(profileDir!, `${profileAs}.cpuprofile`), JSON.stringify(profile));
  }
  if (r.errors > 0) throw new Error(`${r.errors} of ${total} requests to ${spec.path} failed`);
  return { ...r, cpuUs };
}

const work = mkdtempSync(join(tmpdir(), 'cns-bench-read-'));
const inspectPort = profileDir ? await freePort() : 0;
const server = await startBenchServer(join(work, 'data'), { CNS_WORKERS: '1' }, profileDir ? [`--inspect=127.0.0.1:${inspectPort}`] : []);
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
  // What is measured is a real read: both credentials get the file's content.
  for (const headers of [byToken.headers, byKey.headers]) {
    const answer = (await (await fetch(server.url + catPath, { headers })).json()) as { data?: { content?: unknown } };
    if (answer.data?.content !== '# file 4242\n') throw new Error(`cat answered ${JSON.stringify(answer)}`);
  }

  const kinds = [`GET /healthz, ${CONCURRENCY} connections`, `cat, bearer token, ${CONCURRENCY} connections`, `cat, access key, ${CONCURRENCY} connections`, 'cat, bearer token, 1 connection'];
  const rows: { name: string; rps: number; ratio?: number; p50: number; p99: number; cpuUs: number }[] = [];
  const row = (name: string, r: LoadResult & { cpuUs: number }, base?: LoadResult) =>
    rows.push({ name, rps: r.rps, ratio: base && r.rps / base.rps, p50: r.p50, p99: r.p99, cpuUs: r.cpuUs });
  for (let round = 1; round <= ROUNDS; round++) {
    const trivial = await measure(server.url, CONCURRENCY, health, `${round}-healthz`);
    row(`${round}. ${kinds[0]}`, trivial);
    row(`${round}. ${kinds[1]}`, await measure(server.url, CONCURRENCY, byToken, `${round}-token`), trivial);
    row(`${round}. ${kinds[2]}`, await measure(server.url, CONCURRENCY, byKey, `${round}-key`), trivial);
    row(`${round}. ${kinds[3]}`, await measure(server.url, 1, byToken));
  }
  // The machine's speed drifts between measurements; the median of the rounds is the figure.
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  for (const kind of kinds) {
    const of = rows.filter((r) => r.name.endsWith(`. ${kind}`));
    const ratios = of.flatMap((r) => (r.ratio === undefined ? [] : [r.ratio]));
    rows.push({ name: `median: ${kind}`, rps: median(of.map((r) => r.rps)), ratio: ratios.length ? median(ratios) : undefined, p50: median(of.map((r) => r.p50)), p99: median(of.map((r) => r.p99)), cpuUs: median(of.map((r) => r.cpuUs)) });
  }
  const width = Math.max(...rows.map((r) => r.name.length));
  if (profileDir) console.log(`\nprofiles in ${profileDir} (figures slowed by the profiler)`);
  console.log(`\n${'measurement'.padEnd(width)} |  req/s | ratio to /healthz | p50 ms | p99 ms | server CPU µs/answer`);
  for (const r of rows) {
    console.log(`${r.name.padEnd(width)} | ${fmt(r.rps, 0).padStart(6)} | ${(r.ratio === undefined ? '-' : fmt(r.ratio)).padStart(17)} | ${fmt(r.p50).padStart(6)} | ${fmt(r.p99).padStart(6)} | ${fmt(r.cpuUs, 0).padStart(6)}`);
  }
} finally {
  await inspector?.close();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
