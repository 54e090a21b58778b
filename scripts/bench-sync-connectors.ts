/**
 * Platform sync connector figures (issue 16), against `cns serve` in its own process pulling from
 * a fake Notion API over real HTTP (scripts/fakes/notionServer.ts, CNS_NOTION_API_URL):
 *   1. a first pull of 10,000 Notion-sized pages: >= 500 items/s of our own throughput, that is
 *      items / (the run's time − the time the fake spent answering);
 *   2. an incremental run with 10 changed pages among them: fewer than 5 HTTP calls beyond those
 *      the changed pages need (their blocks calls, counted from the fake's model), and < 500 ms
 *      of our own time;
 *   3. 100 syncs (a small root page of 5 pages each) on 30-second intervals for 5 minutes: no two
 *      runs of a sync overlapping, no run missed, and the API's p99 latency (a probe in a second
 *      process) within 10% of a baseline measured just before with no sync scheduled.
 * Prints a table with PASS/FAIL and exits 1 on a FAIL. Takes about 9 minutes; run it alone on the
 * machine. Smaller and quicker (every knob has an environment variable):
 *
 *   node --import=tsx scripts/bench-sync-connectors.ts
 *   BENCH_ITEMS=1000 BENCH_SYNCS=10 BENCH_MINUTES=1 BENCH_BASELINE_S=20 node --import=tsx scripts/bench-sync-connectors.ts
 *
 * BENCH_ITEMS=0 skips figures 1-2, BENCH_SYNCS=0 figure 3. BENCH_SERVER_LOG=1 shows the service's log;
 * BENCH_KEEP=1 keeps its data folder; BENCH_SERVER_NODE_OPTIONS is the service's NODE_OPTIONS (a profiling hook).
 * (Internally the script also runs as the latency probe: `--probe <json>`.)
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startNotionServer, type NotionServer, type NotionWorkspace } from './fakes/notionServer.ts';
import { api, benchProject, startBenchServer, type BenchServer } from './lib/serverProcess.ts';

const num = (name: string, fallback: number) => {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a number >= 0`);
  return v;
};

const ITEMS = num('BENCH_ITEMS', 10_000);
const CHANGED = num('BENCH_CHANGED', 10);
const SYNCS = num('BENCH_SYNCS', 100);
const SYNC_PAGES = num('BENCH_SYNC_PAGES', 5);
const MINUTES = num('BENCH_MINUTES', 5);
const INTERVAL_S = num('BENCH_INTERVAL_S', 30);
const BASELINE_S = num('BENCH_BASELINE_S', 60);
const PROBE_RPS = num('BENCH_PROBE_RPS', 50);
// Pages edited in Notion per minute while the syncs run, so that some runs have something to commit.
const EDITS_PER_MIN = num('BENCH_EDITS_PER_MIN', 10);
const RUN_DEADLINE_MS = num('BENCH_RUN_DEADLINE_S', 1800) * 1000;
/** Other processes using more than this (in cores) while latency is measured make the comparison unreliable. */
const QUIET_CORES = 0.25;

interface Run {
  id: string;
  sync_id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed' | 'interrupted';
  trigger: string;
  started_at: string;
  finished_at: string | null;
  pulled: { created: number; updated: number; deleted: number };
  error: string | null;
  errors: string[];
  http_calls: number;
}

interface ProbeJob {
  url: string;
  token: string;
  projectId: string;
  nodePath: string;
  seconds: number;
  rps: number;
}

interface Sample {
  /** When it was sent (ms since the epoch, to compare with run records). */
  at: number;
  ms: number;
  route: 'node' | 'status';
}

interface ProbeResult {
  samples: Sample[];
  failures: number;
  /** The probe's own CPU time (s), to tell the machine's other load apart. */
  cpuS: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
const sortedOf = (xs: number[]) => [...xs].sort((a, b) => a - b);

/**
 * The latency probe, in its own process so that neither the fake's answers nor the bench's
 * bookkeeping delay what it measures: one request at a time at a steady rate, alternating a read
 * of a node (with its content) and `GET /sync/status`, each timed to its last byte.
 */
async function probe(job: ProbeJob): Promise<ProbeResult> {
  const out: ProbeResult = { samples: [], failures: 0, cpuS: 0 };
  const headers = { authorization: `Bearer ${job.token}` };
  const targets = [
    { route: 'node' as const, path: `/nodes/by-path?project_id=${job.projectId}&path=${encodeURIComponent(job.nodePath)}` },
    { route: 'status' as const, path: `/sync/status?project_id=${job.projectId}` },
  ];
  const started = performance.now();
  const end = started + job.seconds * 1000;
  for (let i = 0; ; i++) {
    // A fixed schedule: a slow answer is not followed by a pause, so the rate holds.
    const at = started + (i * 1000) / job.rps;
    if (at >= end) break;
    const wait = at - performance.now();
    if (wait > 0) await delay(wait);
    const target = targets[i % targets.length]!;
    const t0 = performance.now();
    try {
      const res = await fetch(`${job.url}/api/v1${target.path}`, { headers });
      await res.arrayBuffer();
      if (res.ok) out.samples.push({ at: performance.timeOrigin + t0, ms: performance.now() - t0, route: target.route });
      else out.failures++;
    } catch {
      out.failures++;
    }
  }
  const cpu = process.cpuUsage();
  out.cpuS = (cpu.user + cpu.system) / 1e6;
  return out;
}

function runProbe(job: ProbeJob): Promise<ProbeResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), '--probe', JSON.stringify(job)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(JSON.parse(out) as ProbeResult) : reject(new Error(`the latency probe exited with ${code}`))));
  });
}

/** What the figures share: the fake, the service, a signed-in user and the table of results. */
interface Bench {
  fake: NotionServer;
  serverUrl: string;
  token: string;
  projectId: string;
  call: (method: string, path: string, body?: unknown) => ReturnType<typeof api>;
  /** The service process's CPU time so far (s). */
  serviceCpu: () => number;
  /** A refresh of the sync, answered once its run finished (polled past the ~20 s a refresh waits). */
  refresh: (syncId: string) => Promise<Run>;
  report: (figure: string, measured: string, target: string, pass: boolean) => void;
}

async function bench(): Promise<void> {
  const fake = await startNotionServer();
  const work = mkdtempSync(join(tmpdir(), 'cns-bench-connectors-'));
  const rows: [string, string, string, boolean][] = [];
  let server: BenchServer | null = null;
  try {
    const service = await startBenchServer(join(work, 'data'), {
      CNS_NOTION_API_URL: fake.url,
      // The fake listens on loopback, which the outbound guard refuses unless told otherwise.
      CNS_URL_FETCH_ALLOW_PRIVATE: '1',
      // E.g. `--import=<a hook starting node:inspector's Profiler>` to see where the service's time goes (--cpu-prof is refused in NODE_OPTIONS).
      ...(process.env.BENCH_SERVER_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_SERVER_NODE_OPTIONS } : {}),
    });
    server = service;
    const { token, projectId } = await benchProject(service.url);
    const call = (method: string, path: string, body?: unknown) => api(service.url, method, path, token, body);
    const b: Bench = {
      fake,
      serverUrl: service.url,
      token,
      projectId,
      call,
      serviceCpu: cpuClock(service.child.pid!),
      async refresh(syncId) {
        let run = ((await call('POST', `/sync/syncs/${syncId}/refresh`)) as { run: Run }).run;
        const deadline = Date.now() + RUN_DEADLINE_MS;
        while (run.status === 'queued' || run.status === 'running') {
          if (Date.now() > deadline) throw new Error(`run ${run.id} still ${run.status} after ${RUN_DEADLINE_MS / 1000} s`);
          await delay(200);
          run = (await call('GET', `/sync/runs/${run.id}`)) as Run;
        }
        if (run.status !== 'succeeded') throw new Error(`run ${run.id} ${run.status}: ${run.error ?? run.errors.join('; ')}`);
        return run;
      },
      report(figure, measured, target, pass) {
        rows.push([figure, measured, target, pass]);
        console.log(`${pass ? 'PASS' : 'FAIL'}  ${figure}: ${measured} (target ${target})`);
      },
    };
    console.log(`fake Notion at ${fake.url}, service at ${service.url}`);
    if (ITEMS > 0) await pullFigures(b);
    if (SYNCS > 0 && MINUTES > 0) await manySyncs(b);
  } finally {
    await server?.stop();
    await fake.close();
    if (!process.env.BENCH_KEEP) rmSync(work, { recursive: true, force: true });
    else console.log(`data kept in ${work}`);
  }
  console.log('\n' + table(rows));
  if (rows.some((r) => !r[3])) process.exitCode = 1;
}

const runMs = (run: Run) => Date.parse(run.finished_at!) - Date.parse(run.started_at);

/** Figures 1 and 2: a first pull of ITEMS pages, then an incremental run after CHANGED edits. */
async function pullFigures(b: Bench): Promise<void> {
  const ws = b.fake.addWorkspace('secret_bench_wiki', 'Bench wiki', 1);
  const t0 = performance.now();
  const wiki = ws.addTree({ title: 'Wiki', pages: ITEMS });
  console.log(`${ITEMS} pages generated in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  await b.call('POST', '/oauth/notion/token', { project_id: b.projectId, token: ws.token });
  const { sync } = (await b.call('POST', '/sync/bootstrap', { project_id: b.projectId, provider: 'notion', config: { path: '/wiki', root_page_id: wiki.root } })) as { sync: { id: string } };

  b.fake.resetStats();
  let cpuAt = b.serviceCpu();
  const wall0 = performance.now();
  const first = await b.refresh(sync.id);
  const wall = performance.now() - wall0;
  const firstStats = b.fake.stats();
  const firstCpu = b.serviceCpu() - cpuAt;
  const firstMs = runMs(first);
  const ownMs = firstMs - firstStats.handlingMs;
  const items = first.pulled.created;
  console.log(
    `first pull: ${items} items in ${(firstMs / 1000).toFixed(1)} s (run record; ${(wall / 1000).toFixed(1)} s seen by the client), ` +
      `${first.http_calls} HTTP calls (the fake saw ${firstStats.requests}; ${firstStats.connections} new TCP connections), the fake answering ${(firstStats.handlingMs / 1000).toFixed(1)} s, ` +
      `service CPU ${firstCpu.toFixed(1)} s; raw ${(items / (firstMs / 1000)).toFixed(0)} items/s`,
  );
  b.report(
    '1. first pull, own throughput',
    `${(items / (ownMs / 1000)).toFixed(0)} items/s (${items} items, ${(ownMs / 1000).toFixed(1)} s own of ${(firstMs / 1000).toFixed(1)} s)`,
    '>= 500 items/s',
    items === ITEMS && items / (ownMs / 1000) >= 500,
  );

  const changed = spread(wiki.leaves, CHANGED);
  for (const id of changed) ws.editPage(id);
  // What a changed page costs the connector: its blocks calls (1, or 2 with a nested list); the listing is the rest.
  const needed = changed.reduce((n, id) => n + ws.contentCalls(id), 0);
  b.fake.resetStats();
  cpuAt = b.serviceCpu();
  const incremental = await b.refresh(sync.id);
  const incStats = b.fake.stats();
  const incCpu = b.serviceCpu() - cpuAt;
  const incMs = runMs(incremental);
  const incOwn = incMs - incStats.handlingMs;
  const beyond = incremental.http_calls - needed;
  console.log(
    `incremental: pulled ${JSON.stringify(incremental.pulled)}, ${incremental.http_calls} HTTP calls (${JSON.stringify(incStats.byRoute)}), ` +
      `${incMs} ms run, the fake answering ${incStats.handlingMs.toFixed(1)} ms, service CPU ${(incCpu * 1000).toFixed(0)} ms`,
  );
  b.report(
    '2. incremental, calls beyond the changed items',
    `${beyond} (${incremental.http_calls} calls − ${needed} blocks calls of the ${CHANGED} changed pages)`,
    '< 5',
    beyond < 5 && incremental.pulled.updated === CHANGED && incremental.pulled.created === 0 && incremental.pulled.deleted === 0,
  );
  b.report('2. incremental, own time', `${incOwn.toFixed(0)} ms (${incMs} ms run − ${incStats.handlingMs.toFixed(0)} ms in the fake)`, '< 500 ms', incOwn < 500);
}

/** A latency probe run, with what the service and the rest of the machine used meanwhile (in cores). */
interface Measured extends ProbeResult {
  serviceCores: number;
  otherCores: number;
}

/**
 * Figure 3: SYNCS syncs on INTERVAL_S intervals for MINUTES, the API's latency probed from a
 * second process meanwhile, and before and after with no sync scheduled.
 */
async function manySyncs(b: Bench): Promise<void> {
  // Their own project and workspace: the wiki's pages stay out of their searches.
  const { org_id } = (await b.call('GET', `/projects/${b.projectId}`)) as { org_id: string };
  const project = (await b.call('POST', '/projects', { name: 'bench many syncs', org_id })) as { id: string };
  const ws: NotionWorkspace = b.fake.addWorkspace('secret_bench_teams', 'Bench teams', 2);
  const trees = Array.from({ length: SYNCS }, (_, i) => ws.addTree({ title: `Team ${i}`, pages: SYNC_PAGES }));
  await b.call('POST', '/oauth/notion/token', { project_id: project.id, token: ws.token });
  const syncIds: string[] = [];
  const setup0 = performance.now();
  for (const [i, tree] of trees.entries()) {
    const { sync } = (await b.call('POST', '/sync/bootstrap', { project_id: project.id, provider: 'notion', config: { path: `/team-${i}`, root_page_id: tree.root } })) as { sync: { id: string } };
    syncIds.push(sync.id);
    await b.refresh(sync.id);
  }
  console.log(`${SYNCS} syncs of ${SYNC_PAGES} pages created and pulled once in ${((performance.now() - setup0) / 1000).toFixed(1)} s`);
  const job = { url: b.serverUrl, token: b.token, projectId: project.id, nodePath: 'team-0/Team 0.md', rps: PROBE_RPS };
  // The probed node must exist, or the probe would time 404s.
  await b.call('GET', `/nodes/by-path?project_id=${project.id}&path=${encodeURIComponent(job.nodePath)}`);
  const measure = async (seconds: number): Promise<Measured> => {
    const [machine0, service0, own0, t0] = [machineBusyS(), b.serviceCpu(), ownCpuS(), performance.now()];
    const r = await runProbe({ ...job, seconds });
    const elapsed = (performance.now() - t0) / 1000;
    const service = b.serviceCpu() - service0;
    return { ...r, serviceCores: service / elapsed, otherCores: (machineBusyS() - machine0 - service - r.cpuS - (ownCpuS() - own0)) / elapsed };
  };

  const baseline = await measure(BASELINE_S);
  console.log(`baseline (no sync scheduled, ${BASELINE_S} s): ${latency(baseline)}`);

  const interval = INTERVAL_S * 1000;
  const switched = new Map<string, number>();
  for (const id of syncIds) {
    await b.call('PATCH', `/sync/syncs/${id}/trigger`, { mode: 'interval', interval_s: INTERVAL_S });
    switched.set(id, Date.now());
  }
  const windowStart = Math.min(...switched.values());
  const editTimer = EDITS_PER_MIN > 0 ? setInterval(() => ws.editPage(pick(pick(trees).pages)), 60_000 / EDITS_PER_MIN) : null;
  let loaded: Measured;
  try {
    loaded = await measure(MINUTES * 60);
  } finally {
    if (editTimer) clearInterval(editTimer);
  }
  const windowEnd = Date.now();
  for (const id of syncIds) await b.call('PATCH', `/sync/syncs/${id}/trigger`, { mode: 'manual' });
  console.log(`under ${SYNCS} interval syncs (${MINUTES} min): ${latency(loaded)}`);

  // Runs still going when the schedule stopped finish first, within a deadline.
  const runsOf = async (id: string) => ((await b.call('GET', `/sync/syncs/${id}/runs?limit=200`)) as { runs: Run[] }).runs;
  const drained = Date.now() + 120_000;
  let all = await Promise.all(syncIds.map(runsOf));
  while (all.some((runs) => runs.some((r) => r.status === 'queued' || r.status === 'running'))) {
    if (Date.now() > drained) throw new Error('interval runs still going 120 s after the schedule stopped');
    await delay(500);
    all = await Promise.all(syncIds.map(runsOf));
  }
  const after = BASELINE_S > 0 ? await measure(BASELINE_S) : null;
  if (after) console.log(`after (schedule stopped, ${BASELINE_S} s; how much the baseline itself varies): ${latency(after)}`);

  // Overlap: a run of a sync starting before the previous one of the same sync finished.
  let overlaps = 0;
  // Missed: with runs due every interval ± 5% (src/platform/runtime/schedule.ts), a sync's interval
  // runs started since its switch must begin within 1.5 intervals of the switch, follow each
  // other within 1.5 intervals, and the last must start within 1.5 intervals of the window's
  // end; a skipped due time shows as a gap of about two intervals.
  let missed = 0;
  let failed = 0;
  const counts: number[] = [];
  const gaps: number[] = [];
  for (const [i, runs] of all.entries()) {
    const ordered = [...runs].sort((x, y) => Date.parse(x.started_at) - Date.parse(y.started_at));
    for (let k = 1; k < ordered.length; k++) if (Date.parse(ordered[k]!.started_at) < Date.parse(ordered[k - 1]!.finished_at!)) overlaps++;
    const since = switched.get(syncIds[i]!)!;
    const inWindow = ordered.filter((r) => r.trigger === 'interval' && Date.parse(r.started_at) >= since && Date.parse(r.started_at) <= windowEnd);
    failed += inWindow.filter((r) => r.status !== 'succeeded').length;
    counts.push(inWindow.length);
    const points = [since, ...inWindow.map((r) => Date.parse(r.started_at)), windowEnd];
    for (let k = 1; k < points.length; k++) {
      const gap = points[k]! - points[k - 1]!;
      if (k > 1 && k < points.length - 1) gaps.push(gap);
      if (gap > 1.5 * interval) missed++;
    }
  }
  const g = sortedOf(gaps);
  console.log(
    `interval runs: ${counts.reduce((x, y) => x + y, 0)} (${Math.min(...counts)}-${Math.max(...counts)} a sync, ${((MINUTES * 60) / INTERVAL_S).toFixed(0)} expected), ` +
      `gaps between a sync's runs min ${(g[0]! / 1000).toFixed(1)} s, p50 ${(percentile(g, 50) / 1000).toFixed(1)} s, max ${(g.at(-1)! / 1000).toFixed(1)} s; failed runs ${failed}`,
  );
  console.log(attribution(loaded, all.flat(), syncIds, windowStart, windowEnd));
  b.report('3. overlapping runs of one sync', String(overlaps), '0', overlaps === 0);
  b.report(
    '3. missed runs',
    `${missed} gaps > ${(1.5 * INTERVAL_S).toFixed(0)} s (${Math.min(...counts)}-${Math.max(...counts)} runs a sync in ${MINUTES} min; ${failed} failed)`,
    `0, every gap <= 1.5 x ${INTERVAL_S} s`,
    missed === 0 && failed === 0,
  );
  const b99 = p99(baseline.samples);
  const l99 = p99(loaded.samples);
  const busy = [baseline, loaded, ...(after ? [after] : [])].map((m) => m.otherCores);
  const noisy = Math.max(...busy) > QUIET_CORES ? ` (not a quiet machine: other processes used ${busy.map((x) => x.toFixed(2)).join(' / ')} cores during baseline / syncs${after ? ' / after' : ''})` : '';
  b.report('3. API p99 under the syncs / baseline', `${l99.toFixed(1)} ms / ${b99.toFixed(1)} ms = ${(l99 / b99).toFixed(2)}${noisy}`, '<= 1.10', l99 <= 1.1 * b99 && loaded.failures === 0);
}

const p99 = (samples: Sample[]) => percentile(sortedOf(samples.map((s) => s.ms)), 99);

function latency(r: Measured): string {
  const line = (name: string, xs: Sample[]) => {
    const s = sortedOf(xs.map((x) => x.ms));
    return `${name} p50 ${percentile(s, 50).toFixed(1)} / p99 ${percentile(s, 99).toFixed(1)} / max ${(s.at(-1) ?? NaN).toFixed(1)} ms`;
  };
  return (
    `${r.samples.length} requests, ${line('all', r.samples)}; ${line('node', r.samples.filter((s) => s.route === 'node'))}; ` +
    `${line('status', r.samples.filter((s) => s.route === 'status'))}; ${r.failures} failed; service ${r.serviceCores.toFixed(2)} cores, other processes ${r.otherCores.toFixed(2)} cores`
  );
}

/**
 * Where the slow answers under the syncs come from: the probe's requests made while some run was
 * going on against those made while none was, and the slowest few with the run they met.
 */
function attribution(loaded: Measured, runs: Run[], syncIds: string[], from: number, to: number): string {
  const spans = runs
    .filter((r) => r.finished_at && Date.parse(r.finished_at) >= from && Date.parse(r.started_at) <= to)
    .map((r) => ({ run: r, start: Date.parse(r.started_at), end: Date.parse(r.finished_at!) }))
    .sort((x, y) => x.start - y.start);
  const meeting = (s: Sample) => spans.filter((x) => x.start <= s.at + s.ms && x.end >= s.at);
  const during = loaded.samples.filter((s) => meeting(s).length > 0);
  const outside = loaded.samples.filter((s) => meeting(s).length === 0);
  // The share of the window with a run going on: the union of the runs' spans.
  let covered = 0;
  let reach = from;
  for (const x of spans) {
    const start = Math.max(x.start, reach);
    const end = Math.min(x.end, to);
    if (end > start) covered += end - start;
    reach = Math.max(reach, x.end);
  }
  const slowest = [...loaded.samples].sort((x, y) => y.ms - x.ms).slice(0, 5);
  const describe = (s: Sample) => {
    const met = meeting(s);
    const what = met.length
      ? met.map((x) => `sync ${syncIds.indexOf(x.run.sync_id)} run ${x.end - x.start} ms, pulled ${x.run.pulled.created + x.run.pulled.updated + x.run.pulled.deleted}, ${x.run.http_calls} calls`).join('; ')
      : 'no run going on';
    return `  +${((s.at - from) / 1000).toFixed(1)} s ${s.route} ${s.ms.toFixed(1)} ms: ${what}`;
  };
  return [
    `runs going on ${((100 * covered) / (to - from)).toFixed(1)}% of the window; probe requests meeting a run: ${during.length}, p99 ${p99(during).toFixed(1)} ms; meeting none: ${outside.length}, p99 ${p99(outside).toFixed(1)} ms`,
    'slowest answers under the syncs:',
    ...slowest.map(describe),
  ].join('\n');
}

/** `n` items spread evenly over `list` (changes in different sections, not one neighbourhood). */
function spread<T>(list: T[], n: number): T[] {
  if (n > list.length) throw new Error(`asked for ${n} of ${list.length}`);
  return Array.from({ length: n }, (_, i) => list[Math.floor((i * list.length) / n)]!);
}

function pick<T>(list: T[]): T {
  return list[Math.floor(Math.random() * list.length)]!;
}

/** This process's CPU time (s): the bench and the fake Notion. */
function ownCpuS(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** CPU time the whole machine spent busy (s, all cores together) from /proc/stat, or NaN where there is none. */
function machineBusyS(): number {
  if (!existsSync('/proc/stat')) return NaN;
  // cpu  user nice system idle iowait irq softirq steal …, in ticks of 1/100 s.
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  return (f[0]! + f[1]! + f[2]! + f[5]! + f[6]! + f[7]!) / 100;
}

/** A process's CPU time (user + system, seconds) from /proc, or NaN where there is none. */
function cpuClock(pid: number): () => number {
  const file = `/proc/${pid}/stat`;
  return () => {
    if (!existsSync(file)) return NaN;
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th, in ticks of 1/100 s.
    const fields = readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  };
}

function table(rows: [string, string, string, boolean][]): string {
  const head: [string, string, string, string] = ['figure', 'measured', 'target', 'result'];
  const body = rows.map(([f, m, t, p]) => [f, m, t, p ? 'PASS' : 'FAIL'] as const);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i]!.length)));
  const line = (cells: readonly string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('-|-'), ...body.map(line)].join('\n');
}

// Last, once every constant above is set: the bench, or the probe it runs in a second process.
if (process.argv[2] === '--probe') {
  const result = await probe(JSON.parse(process.argv[3]!) as ProbeJob);
  process.stdout.write(JSON.stringify(result));
} else {
  await bench();
}
