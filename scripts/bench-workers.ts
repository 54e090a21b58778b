/**
 * Issue 29: `cns serve --workers N` against one process (`--workers 1`), in one run, back to back.
 *
 * 1. `cat` of a small file at 16 keep-alive connections: throughput ratio ≥ 1.6 at 2 workers (≥ 8 at
 *    16 workers on 16 cores; the ratio is printed whatever N), p50 not worse.
 * 2. Writes of small Markdown files from 16 clients (each on its own keep-alive connection) to 4
 *    projects (client c writes to project c mod 4): ratio ≥ 1.5; to one project: ratio ≥ 0.9.
 * 3. Several workers only: writes at a steady rate (default 20/s, open loop) spread over several
 *    projects, one connection pool per project; the worker that owns the most of them (the lease
 *    table in cns.db) is killed with SIGKILL. Every acknowledged write is read back (path, content,
 *    version); the gap is the time from the kill to the first successful write to a project the
 *    killed worker owned (≤ 2 s); the other projects' p99 after the kill against before (≤ +500 ms).
 * 4. Resident memory of the whole service (the server process and all its descendants, VmRSS from
 *    /proc) after creating 1,000 projects with a file each and reading each once: ratio < 2.
 *
 * Figures 1 and 2 run all the settings' servers side by side and alternate between them in each
 * round (the machine's speed drifts, the median of the rounds is the figure; each measurement
 * waits until the servers' processes are idle first, so indexing left by a write measurement does
 * not slow the next). Figures 3 and 4 start a fresh server for each setting.
 *
 * The load generator runs in this process, on the same cores as the server.
 *
 * Run: node --import=tsx scripts/bench-workers.ts [rounds=3] [seconds=5]
 *   --rounds R --seconds S       rounds of figures 1-2, seconds per measured run
 *   --workers-list 1,2           the settings (or BENCH_WORKERS=1,16); the first is the baseline
 *   --figures 1,2,3,4            which figures to run
 *   --projects 1000              projects of figure 4
 *   --kill-rate 20 --kill-before 10 --kill-after 10   figure 3: writes/s, seconds before and after the kill
 * BENCH_SERVER_LOG=1 shows the servers' output.
 */
import Database from 'better-sqlite3';
import { Agent, request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { fmt, runLoad, type LoadOptions, type LoadResult, type RequestSpec } from './lib/load.ts';
import { commandName, cpuTicksByProcess, processTree, rssBytes, waitIdle } from './lib/processTree.ts';
import { api, benchProject, startBenchServer, type BenchServer } from './lib/serverProcess.ts';

const { values: opt, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    'workers-list': { type: 'string' },
    figures: { type: 'string' },
    projects: { type: 'string' },
    'kill-rate': { type: 'string' },
    'kill-before': { type: 'string' },
    'kill-after': { type: 'string' },
  },
});
const ROUNDS = Number(opt.rounds ?? positionals[0] ?? 3);
const SECONDS = Number(opt.seconds ?? positionals[1] ?? 5);
const SETTINGS = (opt['workers-list'] ?? process.env.BENCH_WORKERS ?? '1,2').split(',').map((s) => Number(s.trim()));
const FIGURES = new Set((opt.figures ?? '1,2,3,4').split(',').map((s) => Number(s.trim())));
const PROJECTS = Number(opt.projects ?? 1000);
const KILL_RATE = Number(opt['kill-rate'] ?? 20);
const KILL_BEFORE = Number(opt['kill-before'] ?? 10);
const KILL_AFTER = Number(opt['kill-after'] ?? 10);
const CONCURRENCY = 16;
const BASE = SETTINGS[0]!;
if (SETTINGS.some((n) => !Number.isInteger(n) || n < 1) || !(ROUNDS >= 1) || !(SECONDS > 0)) throw new Error('usage: bench-workers.ts [rounds] [seconds] [--workers-list 1,2] …');

const work = mkdtempSync(join(tmpdir(), 'cns-bench-workers-'));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? NaN;
};
const log = (line: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`);

interface Box {
  n: number;
  server: BenchServer;
  dataDir: string;
  token: string;
  orgId: string;
  firstProject: string;
}

let boxes = 0;
async function startBox(n: number): Promise<Box> {
  const dataDir = join(work, `data-${++boxes}-w${n}`);
  const server = await startBenchServer(dataDir, { CNS_WORKERS: String(n) });
  const { token, projectId } = await benchProject(server.url);
  const project = await api(server.url, 'GET', `/projects/${projectId}`, token);
  return { n, server, dataDir, token, orgId: project.org_id as string, firstProject: projectId };
}

async function stopBox(box: Box): Promise<void> {
  await box.server.stop();
  rmSync(box.dataDir, { recursive: true, force: true });
}

const createProject = async (box: Box, name: string): Promise<string> => (await api(box.server.url, 'POST', '/projects/', box.token, { name, org_id: box.orgId })).id as string;

function writeSpec(token: string, projectId: string, path: string, content: string): RequestSpec {
  const body = JSON.stringify({ path, content, node_type: 'markdown' });
  return {
    method: 'POST',
    path: `/api/v1/content/${projectId}/write`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
    body,
  };
}

const catPath = (projectId: string, path: string) => `/api/v1/content/${projectId}/cat?path=${encodeURIComponent(path)}`;

/** Runs `count` jobs, `concurrency` at a time. */
async function pool<T>(count: number, concurrency: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await job(i);
      }
    }),
  );
  return out;
}

// ---------------------------------------------------------------- figures 1 and 2

/** A measured run with where the CPU went, in cores (CPU seconds per second): the primary (or the one process), the workers, this load generator. */
interface Measured extends LoadResult {
  primaryCores: number;
  workerCores: number;
  benchCores: number;
}

/** Warms up, estimates the rate, then runs for about SECONDS (closed loop). */
async function measure(box: Box, spec: (i: number, client: number) => RequestSpec, counts: { warm: number; probe: number; min: number }, options: LoadOptions = {}): Promise<Measured> {
  const pid = box.server.child.pid!;
  if (!(await waitIdle(pid))) log(`  (server w${box.n} did not get idle within 60 s)`);
  await runLoad(box.server.url, CONCURRENCY, counts.warm, spec, options);
  const probe = await runLoad(box.server.url, CONCURRENCY, counts.probe, spec, options);
  const total = Math.max(counts.min, Math.round(probe.rps * SECONDS));
  const ticks = cpuTicksByProcess(pid);
  const cpu = process.cpuUsage();
  const r = await runLoad(box.server.url, CONCURRENCY, total, spec, options);
  const spent = cpuTicksByProcess(pid);
  const own = process.cpuUsage(cpu);
  if (r.errors > 0) throw new Error(`${r.errors} of ${total} requests failed (workers ${box.n})`);
  let primary = 0;
  let workers = 0;
  for (const [p, t] of spent) {
    const used = (t - (ticks.get(p) ?? 0)) / 100;
    if (p === pid) primary += used;
    else workers += used;
  }
  return { ...r, primaryCores: primary / r.seconds, workerCores: workers / r.seconds, benchCores: (own.user + own.system) / 1e6 / r.seconds };
}

interface ThroughputSetup {
  box: Box;
  cat: RequestSpec;
  fourProjects: string[];
  oneProject: string;
}

let writes = 0;
/** 16 clients, client c writing to projects[c mod projects.length], each on its own connection; every write changes its file. */
function writesTo(token: string, projects: string[]) {
  return (i: number, client: number) => writeSpec(token, projects[client % projects.length]!, `w/c${client}/f${i % 20}.md`, `# write ${++writes} by client ${client}\n\nSome text.\n`);
}

async function throughputSetup(n: number): Promise<ThroughputSetup> {
  const box = await startBox(n);
  const file = 'docs/small.md';
  await api(box.server.url, 'POST', `/content/${box.firstProject}/write`, box.token, { path: file, content: '# a small file\n\nwith a line of text.\n', node_type: 'markdown' });
  const cat: RequestSpec = { method: 'GET', path: catPath(box.firstProject, file), headers: { authorization: `Bearer ${box.token}` } };
  const answer = (await (await fetch(box.server.url + cat.path, { headers: cat.headers })).json()) as { data?: { content?: unknown } };
  if (answer.data?.content !== '# a small file\n\nwith a line of text.\n') throw new Error(`cat answered ${JSON.stringify(answer)}`);
  const fourProjects = await Promise.all([1, 2, 3, 4].map((k) => createProject(box, `writes ${k}`)));
  const oneProject = await createProject(box, 'writes, one project');
  return { box, cat, fourProjects, oneProject };
}

const cores = (r: Measured) => `primary/process ${fmt(r.primaryCores)}, workers ${fmt(r.workerCores)}, load generator ${fmt(r.benchCores)}`;

type Kind = 'cat' | 'write4' | 'write1';
const KINDS: Kind[] = ['cat', 'write4', 'write1'];
const READS = { warm: 2000, probe: 3000, min: 5000 };
const WRITES = { warm: 300, probe: 500, min: 500 };

async function throughputFigures(): Promise<Map<string, Measured[]>> {
  const results = new Map<string, Measured[]>(); // `${kind}/${n}` → one per round
  const setups: ThroughputSetup[] = [];
  try {
    for (const n of SETTINGS) setups.push(await throughputSetup(n));
    for (let round = 1; round <= ROUNDS; round++) {
      for (const kind of KINDS) {
        if (kind !== 'cat' && !FIGURES.has(2)) continue;
        if (kind === 'cat' && !FIGURES.has(1)) continue;
        for (const s of setups) {
          const r =
            kind === 'cat'
              ? await measure(s.box, () => s.cat, READS)
              : await measure(s.box, writesTo(s.box.token, kind === 'write4' ? s.fourProjects : [s.oneProject]), WRITES, { connectionPerClient: true });
          log(`round ${round}, ${kind}, workers ${s.box.n}: ${fmt(r.rps, 0)}/s, p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms; cores: ${cores(r)}`);
          const key = `${kind}/${s.box.n}`;
          results.set(key, [...(results.get(key) ?? []), r]);
        }
      }
    }
  } finally {
    for (const s of setups) await stopBox(s.box);
  }
  return results;
}

// ---------------------------------------------------------------- figure 3

interface Sent {
  seq: number;
  project: string;
  path: string;
  content: string;
  start: number;
  end: number;
  status: number;
  version: number | null;
}

interface Member {
  name: string;
  pid: number;
  restarts: number;
}

function send(url: string, agent: Agent | false, spec: RequestSpec, timeoutMs = 30_000): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const req = request({ host: u.hostname, port: u.port, method: spec.method, path: spec.path, headers: spec.headers, agent, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve({ status: 0, body: '' }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.end(spec.body);
  });
}

async function members(url: string): Promise<Member[]> {
  // A connection of its own each time: the primary hands it to any live worker.
  const r = await send(url, false, { method: 'GET', path: '/healthz' }, 5000);
  if (r.status !== 200) return [];
  return ((JSON.parse(r.body) as { data: { workers?: Member[] } }).data.workers ?? []).map((w) => ({ name: w.name, pid: w.pid, restarts: w.restarts }));
}

interface KillResult {
  n: number;
  projects: number;
  victim: string;
  victimProjects: number;
  sent: number;
  acked: number;
  present: number;
  failedVictim: number;
  failedOthers: number;
  gapMs: number;
  restartMs: number;
  p99Before: number;
  p99During: number;
  p50Before: number;
  p50During: number;
}

async function killFigure(n: number): Promise<KillResult> {
  const box = await startBox(n);
  try {
    const url = box.server.url;
    const count = Math.max(6, 2 * n);
    const projects = [box.firstProject, ...(await pool(count - 1, 4, (i) => createProject(box, `kill ${i + 1}`)))];
    const agents = new Map(projects.map((p) => [p, new Agent({ keepAlive: true, maxSockets: 8 })]));
    // Each project's first write takes its lease on the worker the primary places it on.
    for (const p of projects) {
      const r = await send(url, agents.get(p)!, writeSpec(box.token, p, 'kill/first.md', '# first\n'));
      if (r.status >= 300) throw new Error(`first write to ${p}: ${r.status} ${r.body}`);
    }
    const db = new Database(join(box.dataDir, 'cns.db'), { readonly: true, fileMustExist: true });
    const ownerOf = (p: string) => {
      const row = db.prepare('SELECT holder FROM project_leases WHERE project_id = ?').get(p) as { holder: string } | undefined;
      return row?.holder.split('.')[1] ?? '';
    };
    const owners = new Map(projects.map((p) => [p, ownerOf(p)]));
    const live = await members(url);
    const held = new Map<string, number>();
    for (const o of owners.values()) held.set(o, (held.get(o) ?? 0) + 1);
    // The worker owning the most of the projects; among equals the last named (w1 also runs the box's duties).
    const victim = [...held.entries()].sort((a, b) => b[1] - a[1] || b[0].localeCompare(a[0], 'en', { numeric: true }))[0]![0];
    const victimPid = live.find((m) => m.name === victim)?.pid;
    if (!victimPid) throw new Error(`no pid for ${victim} in ${JSON.stringify(live)}`);
    const victimProjects = new Set(projects.filter((p) => owners.get(p) === victim));
    log(`figure 3, workers ${n}: ${projects.length} projects, owners ${JSON.stringify(Object.fromEntries(held))}; killing ${victim} (pid ${victimPid}) after ${KILL_BEFORE} s`);

    const sent: Sent[] = [];
    const inFlight: Promise<void>[] = [];
    const interval = 1000 / KILL_RATE;
    const total = Math.round((KILL_BEFORE + KILL_AFTER) * KILL_RATE);
    const t0 = performance.now();
    let killAt = -1;
    let restartAt = -1;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        if (killAt >= 0 && restartAt < 0) {
          const m = (await members(url)).find((w) => w.name === victim);
          if (m && m.pid !== victimPid) restartAt = performance.now();
        }
        await sleep(100);
      }
    })();
    for (let seq = 0; seq < total; seq++) {
      const wait = t0 + seq * interval - performance.now();
      if (wait > 0) await sleep(wait);
      if (killAt < 0 && performance.now() - t0 >= KILL_BEFORE * 1000) {
        process.kill(victimPid, 'SIGKILL');
        killAt = performance.now();
      }
      const project = projects[seq % projects.length]!;
      const s: Sent = { seq, project, path: `kill/w${seq}.md`, content: `# write ${seq}\n\nto ${project}\n`, start: performance.now(), end: 0, status: 0, version: null };
      sent.push(s);
      inFlight.push(
        send(url, agents.get(project)!, writeSpec(box.token, project, s.path, s.content)).then((r) => {
          s.end = performance.now();
          s.status = r.status;
          if (r.status >= 200 && r.status < 300) s.version = (JSON.parse(r.body) as { data: { version: number } }).data.version;
        }),
      );
    }
    await Promise.all(inFlight);
    polling = false;
    await poller;
    for (const a of agents.values()) a.destroy();
    db.close();

    const acked = sent.filter((s) => s.version !== null);
    const reader = new Agent({ keepAlive: true, maxSockets: 8 });
    const present = await pool(acked.length, 8, async (i) => {
      const s = acked[i]!;
      const r = await send(url, reader, { method: 'GET', path: catPath(s.project, s.path), headers: { authorization: `Bearer ${box.token}` } });
      if (r.status !== 200) return false;
      const d = (JSON.parse(r.body) as { data: { content: string; version: number } }).data;
      return d.content === s.content && d.version === s.version;
    });
    reader.destroy();
    const firstAfter = acked.filter((s) => victimProjects.has(s.project) && s.start >= killAt).sort((a, b) => a.end - b.end)[0];
    const others = sent.filter((s) => !victimProjects.has(s.project) && s.start >= t0 + 2000);
    const before = others.filter((s) => s.start < killAt).map((s) => s.end - s.start);
    const during = others.filter((s) => s.start >= killAt).map((s) => s.end - s.start);
    const failed = (inVictim: boolean) => sent.filter((s) => s.version === null && victimProjects.has(s.project) === inVictim).length;
    return {
      n,
      projects: projects.length,
      victim,
      victimProjects: victimProjects.size,
      sent: sent.length,
      acked: acked.length,
      present: present.filter(Boolean).length,
      failedVictim: failed(true),
      failedOthers: failed(false),
      gapMs: firstAfter ? firstAfter.end - killAt : NaN,
      restartMs: restartAt >= 0 ? restartAt - killAt : NaN,
      p99Before: pct(before, 0.99),
      p99During: pct(during, 0.99),
      p50Before: pct(before, 0.5),
      p50During: pct(during, 0.5),
    };
  } finally {
    await stopBox(box);
  }
}

// ---------------------------------------------------------------- figure 4

interface MemoryResult {
  n: number;
  rss: number;
  processes: number;
  perProcess: number[];
  names: string[];
  seconds: number;
}

async function memoryFigure(n: number): Promise<MemoryResult> {
  const started = performance.now();
  const box = await startBox(n);
  try {
    const url = box.server.url;
    const more = await pool(PROJECTS - 1, 8, (i) => createProject(box, `memory ${i + 1}`));
    const projects = [box.firstProject, ...more];
    log(`figure 4, workers ${n}: ${projects.length} projects created`);
    await pool(projects.length, 8, (i) => api(url, 'POST', `/content/${projects[i]}/write`, box.token, { path: 'readme.md', content: `# project ${i}\n`, node_type: 'markdown' }));
    const read = await pool(projects.length, 8, async (i) => {
      const r = await fetch(url + catPath(projects[i]!, 'readme.md'), { headers: { authorization: `Bearer ${box.token}` } });
      const d = (await r.json()) as { data?: { content?: string } };
      return d.data?.content === `# project ${i}\n`;
    });
    if (read.some((ok) => !ok)) throw new Error(`${read.filter((ok) => !ok).length} reads did not answer their file`);
    const pid = box.server.child.pid!;
    if (!(await waitIdle(pid))) log(`  (server w${n} did not get idle within 60 s)`);
    const pids = processTree(pid);
    const perProcess = pids.map(rssBytes);
    return { n, rss: perProcess.reduce((a, b) => a + b, 0), processes: pids.length, perProcess, names: pids.map(commandName), seconds: (performance.now() - started) / 1000 };
  } finally {
    await stopBox(box);
  }
}

// ---------------------------------------------------------------- the run

interface Row {
  figure: string;
  measurement: string;
  workers: string;
  value: string;
  ratio: string;
  target: string;
  met: string;
}

const rows: Row[] = [];
const yes = (ok: boolean) => (ok ? 'yes' : 'NO');
const loadAtStart = loadavg();
log(`settings ${SETTINGS.join(', ')} workers; ${cpus().length} cores; load average ${loadAtStart.map((l) => fmt(l)).join(' ')}; rounds ${ROUNDS}, ${SECONDS} s each`);
const started = performance.now();
try {
  if (FIGURES.has(1) || FIGURES.has(2)) {
    const results = await throughputFigures();
    const targets: Record<Kind, { figure: string; name: string; target: number; p50: boolean }> = {
      cat: { figure: '1', name: `cat of a small file, ${CONCURRENCY} connections`, target: 1.6, p50: true },
      write4: { figure: '2', name: `writes, 4 projects, ${CONCURRENCY} clients`, target: 1.5, p50: false },
      write1: { figure: '2', name: `writes, 1 project, ${CONCURRENCY} clients`, target: 0.9, p50: false },
    };
    for (const kind of KINDS) {
      const base = results.get(`${kind}/${BASE}`);
      if (!base) continue;
      const t = targets[kind];
      for (const n of SETTINGS) {
        const rs = results.get(`${kind}/${n}`)!;
        const ratios = rs.map((r, i) => r.rps / base[i]!.rps);
        const ratio = median(ratios);
        const p50 = median(rs.map((r) => r.p50));
        const p50Base = median(base.map((r) => r.p50));
        const isBase = n === BASE;
        // The issue's targets are for 2 workers on 2 cores (figure 1 also ≥ 8× at 16 workers on 16 cores).
        const target = isBase ? 'baseline' : `≥ ${t.target}×${t.p50 ? ', p50 not worse' : ''}`;
        rows.push({
          figure: t.figure,
          measurement: t.name,
          workers: String(n),
          value: `${fmt(median(rs.map((r) => r.rps)), 0)}/s, p50 ${fmt(p50)} ms, p99 ${fmt(median(rs.map((r) => r.p99)))} ms; cores: ${n === 1 ? `server ${fmt(median(rs.map((r) => r.primaryCores)))}` : `primary ${fmt(median(rs.map((r) => r.primaryCores)))}, workers ${fmt(median(rs.map((r) => r.workerCores)))}`}, load gen. ${fmt(median(rs.map((r) => r.benchCores)))}`,
          ratio: isBase ? '' : `${fmt(ratio)}× (rounds ${ratios.map((x) => fmt(x)).join(', ')})`,
          target,
          met: isBase ? '' : yes(ratio >= t.target && (!t.p50 || p50 <= p50Base)),
        });
      }
    }
  }
  if (FIGURES.has(3)) {
    for (const n of SETTINGS.filter((k) => k > 1)) {
      const k = await killFigure(n);
      const m = `kill -9 of ${k.victim} (${k.victimProjects} of ${k.projects} projects), ${KILL_RATE} writes/s`;
      rows.push({ figure: '3', measurement: `${m}: acknowledged writes read back`, workers: String(n), value: `${k.present} of ${k.acked} (${k.sent} sent; failed: ${k.failedVictim} to its projects, ${k.failedOthers} to others)`, ratio: '', target: 'all', met: yes(k.present === k.acked && k.acked > 0) });
      rows.push({ figure: '3', measurement: `${m}: kill → first write to its projects`, workers: String(n), value: `${fmt(k.gapMs, 0)} ms (worker back after ${fmt(k.restartMs, 0)} ms)`, ratio: '', target: '≤ 2000 ms', met: yes(k.gapMs <= 2000) });
      rows.push({ figure: '3', measurement: `${m}: other projects' latency`, workers: String(n), value: `p99 ${fmt(k.p99Before, 1)} → ${fmt(k.p99During, 1)} ms (p50 ${fmt(k.p50Before, 1)} → ${fmt(k.p50During, 1)})`, ratio: '', target: '≤ +500 ms', met: yes(k.p99During <= k.p99Before + 500) });
    }
  }
  if (FIGURES.has(4)) {
    const mem = new Map<number, MemoryResult>();
    for (const n of SETTINGS) {
      const r = await memoryFigure(n);
      mem.set(n, r);
      log(`figure 4, workers ${n}: ${fmt(r.rss / 2 ** 20, 0)} MB in ${r.processes} processes (${r.perProcess.map((b, i) => `${r.names[i]} ${fmt(b / 2 ** 20, 0)}`).join(' + ')}), ${fmt(r.seconds, 0)} s`);
    }
    const base = mem.get(BASE)!;
    for (const [n, r] of mem) {
      const ratio = r.rss / base.rss;
      rows.push({
        figure: '4',
        measurement: `RSS, ${PROJECTS} projects with a file, each read once`,
        workers: String(n),
        value: `${fmt(r.rss / 2 ** 20, 0)} MB (${r.perProcess.map((b) => fmt(b / 2 ** 20, 0)).join(' + ')})`,
        ratio: n === BASE ? '' : `${fmt(ratio)}×`,
        target: n === BASE ? 'baseline' : '< 2×',
        met: n === BASE ? '' : yes(ratio < 2),
      });
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}

const cols: (keyof Row)[] = ['figure', 'measurement', 'workers', 'value', 'ratio', 'target', 'met'];
const width = Object.fromEntries(cols.map((c) => [c, Math.max(c.length, ...rows.map((r) => r[c].length))])) as Record<keyof Row, number>;
console.log(`\nissue 29, --workers ${SETTINGS.join(' vs ')} (ratios against ${BASE}); ${cpus().length} cores; the load generator runs in the bench process on the same cores`);
console.log(`load average at the start ${loadAtStart.map((l) => fmt(l)).join(' ')}, at the end ${loadavg().map((l) => fmt(l)).join(' ')}; ${fmt((performance.now() - started) / 60000, 1)} min; rounds ${ROUNDS} × ${SECONDS} s (median of the rounds)\n`);
console.log(cols.map((c) => c.padEnd(width[c])).join(' | '));
for (const r of rows) console.log(cols.map((c) => r[c].padEnd(width[c])).join(' | '));
