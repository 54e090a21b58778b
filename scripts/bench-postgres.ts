/**
 * Issue 30: SQLite against PostgreSQL as the metadata store, in one run on this machine. Two
 * `cns serve` processes side by side, with the same settings (one process each, CNS_WORKERS=1, so
 * the figures compare engines and not process counts; rate limits off): one on a fresh data folder
 * (SQLite), one on a fresh data folder plus a fresh PostgreSQL database (CNS_DATABASE_URL; the
 * content index stays in the folder's cns.db), dropped at the end. Each round measures both,
 * in alternating order (the machine's speed drifts; a figure is the median of the rounds, a ratio
 * the median of the rounds' ratios):
 *
 *   1. REST writes (POST /content/{id}/write): 16 clients, each on its own keep-alive connection,
 *      client c writing to project c mod 4; a quarter of the writes create a node, the rest update
 *      one; half Markdown, half JSON. p50 and writes/s.
 *   2. `cat` of one small file (GET /content/{id}/cat, bearer token), 16 connections: p50 and req/s.
 *   3. GET /api/v1/projects/ with --projects projects visible to the caller (created through the
 *      API beforehand, not timed), 1 connection: p50 of the first page (default limit, 50) and of
 *      ?limit=200 (the most a page holds).
 *   4. Access-key authentication: GET /api/v1/auth/me with X-Access-Key (nothing but the key's
 *      look-up and the envelope), 1 connection: p50 with 5 keys in turn (steady state, the keys
 *      cached), and p50 of the first request of each of --fresh-keys keys created just before (the
 *      uncached path: a database look-up each). GET /healthz at 1 connection is the baseline (it
 *      checks both databases: on PostgreSQL a round trip, so it is not the same work on both).
 *   5. The server's event-loop delay during each of these loads, sampled inside the server
 *      (monitorEventLoopDelay, 1 ms resolution, preloaded by scripts/lib/loopDelayMonitor.mjs):
 *      p99 and max, so that "no request holds the event loop while waiting for the database" is
 *      evidenced (better-sqlite3 waits synchronously, pg does not; a stall shows as a long max).
 *
 * Targets: PostgreSQL within 1.5× of SQLite on each figure (ratio PG/SQLite for latencies,
 * SQLite/PG for throughputs, so > 1 means PostgreSQL is slower). The CPU per request of the cns
 * process and of PostgreSQL's backends serving the bench database (/proc, Linux) is logged too:
 * on a shared machine it moves less than req/s. The load generator runs in this process.
 *
 * The PostgreSQL server is the one the test suite uses: 127.0.0.1:5432, user postgres, or
 * CNS_TEST_POSTGRES_URL (a role that may create databases); the database is named cns_t_<random>.
 *
 * Run: node --import=tsx scripts/bench-postgres.ts [--quick]
 *   --rounds 3 --seconds 5      rounds, seconds per measured load run (BENCH_ROUNDS, BENCH_SECONDS)
 *   --projects 1000             projects visible to the caller (BENCH_PROJECTS)
 *   --fresh-keys 200            fresh keys per round and engine (BENCH_FRESH_KEYS)
 *   --requests 500              requests per 1-connection latency figure (BENCH_REQUESTS)
 *   --quick                     a smoke run: 1 round of 1 s, 60 projects, 20 fresh keys, 100 requests, no wait for an idle server
 * Defaults take about 3-5 minutes on 2 shared cores. BENCH_SERVER_LOG=1 shows the servers' output.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { freshPostgresDatabase, POSTGRES_ADMIN_URL, type TestDatabase } from '../test/helpers/postgresDatabases.ts';
import { fmt, runLoad, type LoadOptions, type LoadResult, type RequestSpec } from './lib/load.ts';
import { cpuTicksByProcess, waitIdle } from './lib/processTree.ts';
import { api, benchProject, startBenchServer, type BenchServer } from './lib/serverProcess.ts';

const { values: opt } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    projects: { type: 'string' },
    'fresh-keys': { type: 'string' },
    requests: { type: 'string' },
  },
});
const QUICK = opt.quick === true;
const num = (flag: string | undefined, env: string, full: number, quick: number) => Number(flag ?? process.env[env] ?? (QUICK ? quick : full));
const ROUNDS = num(opt.rounds, 'BENCH_ROUNDS', 3, 1);
const SECONDS = num(opt.seconds, 'BENCH_SECONDS', 5, 1);
const PROJECTS = num(opt.projects, 'BENCH_PROJECTS', 1000, 60);
const FRESH_KEYS = num(opt['fresh-keys'], 'BENCH_FRESH_KEYS', 200, 20);
const REQUESTS = num(opt.requests, 'BENCH_REQUESTS', 500, 100);
const CONCURRENCY = 16;
const WRITE_PROJECTS = 4;
const STEADY_KEYS = 5;
const TARGET = 1.5;
for (const [name, v, min] of [['rounds', ROUNDS, 1], ['seconds', SECONDS, 0.1], ['projects', PROJECTS, WRITE_PROJECTS + 1], ['fresh-keys', FRESH_KEYS, 1], ['requests', REQUESTS, 10]] as const) {
  if (!(v >= min)) throw new Error(`--${name} must be a number ≥ ${min}, got ${v}`);
}
// Counts of a load run: warm-up, a probe of the rate, and the least a measured run sends.
const WRITES = QUICK ? { warm: 100, probe: 200, min: 200 } : { warm: 300, probe: 500, min: 500 };
const READS = QUICK ? { warm: 500, probe: 1000, min: 1000 } : { warm: 2000, probe: 3000, min: 5000 };

if (process.env.CNS_DATABASE_URL) {
  console.error('(CNS_DATABASE_URL is ignored: the bench makes its own database)');
  delete process.env.CNS_DATABASE_URL;
}

type Engine = 'sqlite' | 'postgres';
const ENGINES: Engine[] = ['sqlite', 'postgres'];
const ENGINE_NAME: Record<Engine, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

interface Box {
  engine: Engine;
  server: BenchServer;
  db: TestDatabase | null;
  token: string;
  firstProject: string;
  writeProjects: string[];
  steadyKeys: string[];
  catSpec: RequestSpec;
}

const work = mkdtempSync(join(tmpdir(), 'cns-bench-pg-'));
const loopDir = join(work, 'loop');
mkdirSync(loopDir);
const MONITOR = pathToFileURL(join(import.meta.dirname, 'lib', 'loopDelayMonitor.mjs')).href;
const log = (line: string) => console.error(`[${new Date().toISOString().slice(11, 19)}] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
/** Milliseconds with three significant figures or so: 0.38, 7.52, 21.6, 944. */
const msText = (v: number) => (v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : Math.round(v).toLocaleString('en'));

/** One admin connection to PostgreSQL: which backends serve the bench database (their CPU is counted), the server's version. */
let admin: pg.Client | null = null;

/** Runs `count` jobs, `concurrency` at a time. */
async function pool<T>(count: number, concurrency: number, job: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        if (closing) throw new Error('interrupted');
        const i = next++;
        out[i] = await job(i);
      }
    }),
  );
  return out;
}

// ---------------------------------------------------------------- the server's event loop and CPU

interface LoopStats {
  count: number;
  p50: number;
  p99: number;
  max: number;
}

const loopSeq = new Map<number, number>();
/** What the server's loop-delay monitor saw since the previous call (SIGUSR2, then its file). */
async function loopSnapshot(box: Box): Promise<LoopStats> {
  const pid = box.server.child.pid!;
  const want = (loopSeq.get(pid) ?? 0) + 1;
  loopSeq.set(pid, want);
  process.kill(pid, 'SIGUSR2');
  const file = join(loopDir, `loop-${pid}.json`);
  for (let waited = 0; waited < 30_000; waited += 20) {
    try {
      const stats = JSON.parse(readFileSync(file, 'utf8')) as LoopStats & { seq: number };
      if (stats.seq === want) return stats;
    } catch {
      // not written yet
    }
    await sleep(20);
  }
  throw new Error(`the ${box.engine} server's loop-delay monitor did not answer (is scripts/lib/loopDelayMonitor.mjs preloaded?)`);
}

/** The PostgreSQL backends connected to the box's database (its pool and its listener), asked after the warm-up so the pool has grown. */
async function backendPids(box: Box): Promise<number[]> {
  if (!box.db || !admin) return [];
  const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [box.db.name]);
  return rows.map((r) => r.pid);
}

/** CPU ticks (1/100 s, user + system) of one process, 0 once it is gone. */
function processTicks(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** CPU ticks of the cns process tree and of the given PostgreSQL backends (a backend that ends meanwhile is not counted). */
function ticks(box: Box, backends: number[]): { cns: number; pg: Map<number, number> } {
  let cns = 0;
  for (const t of cpuTicksByProcess(box.server.child.pid!).values()) cns += t;
  return { cns, pg: new Map(backends.map((pid) => [pid, processTicks(pid)])) };
}

interface Measured extends LoadResult {
  loop: LoopStats;
  /** CPU µs per request of the cns process and of PostgreSQL's backends for its database. */
  cnsCpuUs: number;
  pgCpuUs: number;
}

/** One measured run: waits for the server to be idle, resets the loop monitor, runs `run`, reads both. */
async function measured(box: Box, run: () => Promise<LoadResult>): Promise<Measured> {
  // Work a previous load left (search indexing after writes) would slow this one; --quick does not wait.
  if (!QUICK && !(await waitIdle(box.server.child.pid!, 30_000))) log(`  (the ${box.engine} server did not get idle within 30 s)`);
  const backends = await backendPids(box);
  await loopSnapshot(box);
  const before = ticks(box, backends);
  const r = await run();
  const after = ticks(box, backends);
  const loop = await loopSnapshot(box);
  const perRequest = (t: number) => ((t / 100) * 1e6) / r.requests;
  let pgTicks = 0;
  for (const [pid, t] of after.pg) if (t > 0) pgTicks += t - before.pg.get(pid)!;
  return { ...r, loop, cnsCpuUs: perRequest(after.cns - before.cns), pgCpuUs: perRequest(pgTicks) };
}

function checked(what: string, box: Box, r: LoadResult): LoadResult {
  if (r.errors > 0) throw new Error(`${box.engine}: ${r.errors} of ${r.requests} requests failed (${what}); BENCH_SERVER_LOG=1 shows the server's log`);
  return r;
}

/** A 16-client load: warm-up and a probe of the rate unmeasured, then about SECONDS. */
async function throughput(what: string, box: Box, spec: (i: number, client: number) => RequestSpec, counts: { warm: number; probe: number; min: number }, options: LoadOptions = {}): Promise<Measured> {
  checked(what, box, await runLoad(box.server.url, CONCURRENCY, counts.warm, spec, options));
  const probe = checked(what, box, await runLoad(box.server.url, CONCURRENCY, counts.probe, spec, options));
  const total = Math.max(counts.min, Math.round(probe.rps * SECONDS));
  return measured(box, async () => checked(what, box, await runLoad(box.server.url, CONCURRENCY, total, spec, options)));
}

/** Sequential requests on one connection (latency, no queueing), after a warm-up of `warm`. */
async function latency(what: string, box: Box, spec: (i: number) => RequestSpec, n: number, warm = Math.min(100, n)): Promise<Measured> {
  if (warm > 0) checked(what, box, await runLoad(box.server.url, 1, warm, spec));
  return measured(box, async () => checked(what, box, await runLoad(box.server.url, 1, n, spec)));
}

// ---------------------------------------------------------------- set-up

let writeSeq = 0;
/** Client c writes to project c mod 4: every fourth write creates a node, the others update one of the client's 20; odd ones JSON, even ones Markdown. */
function writeSpec(box: Box): (i: number, client: number) => RequestSpec {
  return (_i, client) => {
    const seq = ++writeSeq;
    const json = seq % 2 === 1;
    const ext = json ? 'json' : 'md';
    const path = seq % 4 === 0 ? `new/c${client}/n${seq}.${ext}` : `edit/c${client}/f${(seq >> 2) % 20}.${ext}`;
    const content = json ? { seq, client, title: `write ${seq}`, tags: ['bench', ext] } : `# write ${seq}\n\nby client ${client}, a line of text.\n`;
    const body = JSON.stringify({ path, content, node_type: json ? 'json' : 'markdown' });
    return {
      method: 'POST',
      path: `/api/v1/content/${box.writeProjects[client % box.writeProjects.length]}/write`,
      headers: { authorization: `Bearer ${box.token}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      body,
    };
  };
}

const authMe = (key: string): RequestSpec => ({ method: 'GET', path: '/api/v1/auth/me', headers: { 'x-access-key': key } });

async function createKeys(box: Box, count: number, prefix: string): Promise<string[]> {
  return pool(count, 4, async (i) => {
    const made = await api(box.server.url, 'POST', '/connections/', box.token, { project_id: box.firstProject, name: `${prefix} ${i}`, kind: 'api', mode: 'read' });
    return made.key as string;
  });
}

async function startBox(engine: Engine): Promise<Box> {
  const t0 = Date.now();
  // Each database and server is handed to cleanup() as soon as it exists: it drops and stops them whatever happens next.
  const db = engine === 'postgres' ? await freshPostgresDatabase() : null;
  if (db) databases.push(db);
  if (closing) throw new Error('interrupted');
  const env: Record<string, string> = { CNS_WORKERS: '1', BENCH_LOOP_DELAY_DIR: loopDir };
  if (db) env.CNS_DATABASE_URL = db.url;
  const server = await startBenchServer(join(work, `data-${engine}`), env, [`--import=${MONITOR}`]);
  servers.push(server);
  if (closing) throw new Error('interrupted');
  const health = (await (await fetch(`${server.url}/healthz`)).json()) as { data?: { metadata_engine?: string } };
  if (health.data?.metadata_engine !== engine) throw new Error(`the ${engine} server says its metadata engine is ${health.data?.metadata_engine}`);
  const { token, projectId } = await benchProject(server.url);
  const orgId = (await api(server.url, 'GET', `/projects/${projectId}`, token)).org_id as string;
  const file = 'docs/small.md';
  const text = '# a small file\n\nwith a line of text.\n';
  await api(server.url, 'POST', `/content/${projectId}/write`, token, { path: file, content: text, node_type: 'markdown' });
  const catSpec: RequestSpec = { method: 'GET', path: `/api/v1/content/${projectId}/cat?path=${encodeURIComponent(file)}`, headers: { authorization: `Bearer ${token}` } };
  const answer = (await (await fetch(server.url + catSpec.path, { headers: catSpec.headers })).json()) as { data?: { content?: unknown } };
  if (answer.data?.content !== text) throw new Error(`cat answered ${JSON.stringify(answer)}`);
  // The projects the caller sees: the first one, the write projects, and fillers up to PROJECTS.
  const others = await pool(PROJECTS - 1, 4, async (i) => (await api(server.url, 'POST', '/projects/', token, { name: `bench ${i + 1}`, org_id: orgId })).id as string);
  const listed = await api(server.url, 'GET', '/projects/', token);
  if (listed.total !== PROJECTS) throw new Error(`GET /projects/ counts ${listed.total} projects, expected ${PROJECTS}`);
  const box: Box = { engine, server, db, token, firstProject: projectId, writeProjects: others.slice(0, WRITE_PROJECTS), steadyKeys: [], catSpec };
  box.steadyKeys = await createKeys(box, STEADY_KEYS, 'steady');
  const me = await api(server.url, 'GET', '/auth/me', box.steadyKeys[0]!);
  if (me.kind !== 'key') throw new Error(`GET /auth/me with a key answered ${JSON.stringify(me)}`);
  log(`${ENGINE_NAME[engine]} server ready at ${server.url} (${PROJECTS} projects, ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  return box;
}

// ---------------------------------------------------------------- the figures

type Figure = 'write' | 'cat' | 'list' | 'list200' | 'keySteady' | 'keyFresh' | 'healthz';
const FIGURES: Figure[] = ['write', 'cat', 'list', 'list200', 'keySteady', 'keyFresh', 'healthz'];
const LOAD_NAME: Record<Figure, string> = {
  write: `REST writes, ${CONCURRENCY} clients`,
  cat: `cat, ${CONCURRENCY} clients`,
  list: 'GET /projects/ (first page), 1 client',
  list200: 'GET /projects/?limit=200, 1 client',
  keySteady: `GET /auth/me, access key (${STEADY_KEYS} cached keys), 1 client`,
  keyFresh: `GET /auth/me, first use of ${FRESH_KEYS} fresh keys, 1 client`,
  healthz: 'GET /healthz, 1 client',
};

async function measureFigure(box: Box, figure: Figure): Promise<Measured> {
  switch (figure) {
    case 'write':
      return throughput(figure, box, writeSpec(box), WRITES, { connectionPerClient: true });
    case 'cat':
      return throughput(figure, box, () => box.catSpec, READS);
    case 'list':
    case 'list200': {
      const spec: RequestSpec = { method: 'GET', path: `/api/v1/projects/${figure === 'list200' ? '?limit=200' : ''}`, headers: { authorization: `Bearer ${box.token}` } };
      return latency(figure, box, () => spec, REQUESTS, 20);
    }
    case 'keySteady': {
      const specs = box.steadyKeys.map(authMe);
      return latency(figure, box, (i) => specs[i % specs.length]!, REQUESTS * 4);
    }
    case 'keyFresh': {
      // Created just before (not timed): the change empties the caches, and none of them was used yet.
      const specs = (await createKeys(box, FRESH_KEYS, `fresh ${++freshBatch}`)).map(authMe);
      return latency(figure, box, (i) => specs[i]!, specs.length, 0);
    }
    case 'healthz':
      return latency(figure, box, () => ({ method: 'GET', path: '/healthz' }), REQUESTS * 4);
  }
}
let freshBatch = 0;

// ---------------------------------------------------------------- the report

interface Row {
  figure: string;
  sqlite: string;
  postgres: string;
  ratio: string;
  target: string;
  met: string;
}

function report(results: Map<string, Measured[]>, header: { startLoad: number[]; pgVersion: string; commit: string; seconds: number }): void {
  const of = (engine: Engine, figure: Figure) => results.get(`${engine}/${figure}`) ?? [];
  const rows: Row[] = [];
  let misses = 0;
  /** A compared figure: the median of each engine's rounds, and the median of the rounds' ratios. */
  const compared = (figure: string, f: Figure, value: (m: Measured) => number, show: (v: number, m: Measured[]) => string, slowerWhenHigher: boolean) => {
    const sq = of('sqlite', f);
    const pgm = of('postgres', f);
    const ratios = sq.map((s, i) => (slowerWhenHigher ? value(pgm[i]!) / value(s) : value(s) / value(pgm[i]!)));
    const ratio = median(ratios);
    const met = ratio <= TARGET;
    if (!met) misses++;
    rows.push({
      figure,
      sqlite: show(median(sq.map(value)), sq),
      postgres: show(median(pgm.map(value)), pgm),
      ratio: `${fmt(ratio)}×${ratios.length > 1 ? ` (rounds ${ratios.map((r) => fmt(r)).join(', ')})` : ''}`,
      target: `≤ ${TARGET}×`,
      met: met ? 'yes' : '**no**',
    });
  };
  const p99 = (ms: Measured[]) => `, p99 ${msText(median(ms.map((m) => m.p99)))} ms`;
  const p50 = (m: Measured) => m.p50;
  const rps = (m: Measured) => m.rps;
  const msOf = (withP99: boolean) => (v: number, ms: Measured[]) => `${msText(v)} ms${withP99 ? p99(ms) : ''}`;
  const perS = (unit: string) => (v: number) => `${Math.round(v).toLocaleString('en')} ${unit}/s`;
  compared(`REST write p50, ${CONCURRENCY} clients`, 'write', p50, msOf(true), true);
  compared(`REST write throughput, ${CONCURRENCY} clients`, 'write', rps, perS('writes'), false);
  compared(`\`cat\` p50, ${CONCURRENCY} clients`, 'cat', p50, msOf(true), true);
  compared(`\`cat\` throughput, ${CONCURRENCY} clients`, 'cat', rps, perS('req'), false);
  compared(`\`GET /projects/\` p50, ${PROJECTS.toLocaleString('en')} projects (first page of 50), 1 client`, 'list', p50, msOf(false), true);
  compared(`\`GET /projects/?limit=200\` p50, same`, 'list200', p50, msOf(false), true);
  compared(`access-key authentication p50 (\`GET /auth/me\`, ${STEADY_KEYS} cached keys), 1 client`, 'keySteady', p50, msOf(false), true);
  compared(`access-key authentication p50, first use of ${FRESH_KEYS} fresh keys (uncached), 1 client`, 'keyFresh', p50, msOf(false), true);
  const base = (e: Engine) => `${msText(median(of(e, 'healthz').map(p50)))} ms`;
  rows.push({ figure: 'baseline: `GET /healthz` p50, 1 client (on PostgreSQL it asks the database too)', sqlite: base('sqlite'), postgres: base('postgres'), ratio: '', target: '', met: '' });
  // The event loop: the median of the rounds' p99 and the largest max of any round.
  const loop = (e: Engine, f: Figure) => {
    const ms = of(e, f);
    return `p99 ${msText(median(ms.map((m) => m.loop.p99)))} / max ${msText(Math.max(...ms.map((m) => m.loop.max)))} ms`;
  };
  for (const f of ['write', 'cat', 'list200', 'keyFresh'] as Figure[]) {
    rows.push({ figure: `event-loop delay in the server during: ${LOAD_NAME[f]}`, sqlite: loop('sqlite', f), postgres: loop('postgres', f), ratio: '', target: 'no stall (reported)', met: '' });
  }
  const cpu = (e: Engine, f: Figure) => {
    const ms = of(e, f);
    const us = (v: number) => Math.round(v).toLocaleString('en');
    const c = us(median(ms.map((m) => m.cnsCpuUs)));
    return e === 'postgres' ? `${c} + ${us(median(ms.map((m) => m.pgCpuUs)))} µs` : `${c} µs`;
  };
  for (const f of ['write', 'cat', 'keyFresh'] as Figure[]) {
    rows.push({ figure: `CPU per request (cns + PostgreSQL backends): ${LOAD_NAME[f]}`, sqlite: cpu('sqlite', f), postgres: cpu('postgres', f), ratio: '', target: '', met: '' });
  }

  const cols: (keyof Row)[] = ['figure', 'sqlite', 'postgres', 'ratio', 'target', 'met'];
  const titles: Row = { figure: 'figure', sqlite: 'SQLite', postgres: 'PostgreSQL', ratio: 'ratio (>1: PG slower)', target: 'target', met: 'met' };
  const width = Object.fromEntries(cols.map((c) => [c, Math.max(titles[c].length, ...rows.map((r) => r[c].length))])) as Record<keyof Row, number>;
  const line = (r: Row) => cols.map((c) => r[c].padEnd(width[c])).join(' | ');
  const endLoad = loadavg();
  console.log(`\n${line(titles)}\n${cols.map((c) => '-'.repeat(width[c])).join('-|-')}`);
  for (const r of rows) console.log(line(r));
  console.log(`\n${misses === 0 ? 'every figure within' : `${misses} figure(s) NOT within`} ${TARGET}× (PostgreSQL against SQLite)`);

  const when = new Date().toISOString().slice(0, 10);
  const la = (l: number[]) => l.map((x) => x.toFixed(1)).join(' / ');
  console.log('\n---- markdown for docs/benchmarks.md ----\n');
  console.log(`## Issue 30: SQLite against PostgreSQL as the metadata store (\`scripts/bench-postgres.ts\`)

Two \`cns serve\` processes side by side, one process each (\`CNS_WORKERS=1\`), rate limits off, the same
settings but \`CNS_DATABASE_URL\`: a fresh data folder (SQLite), and a fresh data folder plus a fresh
database on the machine's PostgreSQL ${header.pgVersion} (loopback; the content index stays in the folder's
\`cns.db\`). ${ROUNDS} round(s), the engines in alternating order; a figure is the median of the rounds,
a ratio the median of the rounds' ratios (PG/SQLite for latencies, SQLite/PG for throughputs;
above 1 means PostgreSQL is slower). Writes: 16 clients on their own connections, 4 projects, a quarter
creates and three quarters updates, half Markdown and half JSON, ${SECONDS} s per measured run; \`cat\`
of one small file with a bearer token, 16 connections; \`GET /projects/\` with
${PROJECTS.toLocaleString('en')} projects visible to the caller, ${REQUESTS} requests at 1 connection; \`GET /auth/me\` with
\`X-Access-Key\`, ${REQUESTS * 4} requests over ${STEADY_KEYS} keys, and the first request of ${FRESH_KEYS} keys created just before.
Event-loop delay sampled inside each server (\`monitorEventLoopDelay\`, 1 ms resolution) during each
load; CPU per request from /proc (10 ms ticks) of the cns process and, on PostgreSQL, of the backends
serving its database. The load generator shares the cores. ${when}, commit ${header.commit}, ${cpus().length} cores, load average
(1 / 5 / 15 min) ${la(header.startLoad)} at the start, ${la(endLoad)} at the end; the run took ${fmt(header.seconds / 60, 1)} min.

| ${cols.map((c) => titles[c]).join(' | ')} |
|${cols.map(() => '---').join('|')}|
${rows.map((r) => `| ${cols.map((c) => r[c]).join(' | ')} |`).join('\n')}
`);
}

// ---------------------------------------------------------------- main

const boxes: Box[] = [];
/** What cleanup() ends: every server started and every database created, registered as soon as they exist. */
const servers: BenchServer[] = [];
const databases: TestDatabase[] = [];
/** Set-up under way (cleanup waits for it: a server still starting would be left behind). */
let settingUp: Promise<unknown> = Promise.resolve();

/** SIGTERM, then SIGKILL after 15 s; nothing to do for a server that already ended (a Ctrl-C in the terminal reaches it too). */
async function stopServer(server: BenchServer): Promise<void> {
  const child = server.child;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const timer = setTimeout(() => {
    log(`server ${child.pid} still running 15 s after SIGTERM: SIGKILL`);
    child.kill('SIGKILL');
  }, 15_000);
  child.kill('SIGTERM');
  await exited;
  clearTimeout(timer);
}

let closing = false;
let cleaning: Promise<void> | null = null;
function cleanup(): Promise<void> {
  closing = true;
  cleaning ??= (async () => {
    await settingUp;
    for (const server of servers) await stopServer(server);
    for (const db of databases) await db.drop().catch((e: unknown) => log(`could not drop the database ${db.name}: ${String(e)}`));
    await admin?.end().catch(() => {});
    rmSync(work, { recursive: true, force: true });
  })();
  return cleaning;
}
process.once('SIGINT', () => {
  log('interrupted: stopping the servers and dropping the database');
  void cleanup().finally(() => process.exit(130));
});

async function main(): Promise<void> {
  const started = Date.now();
  const startLoad = loadavg();
  const commit = (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: import.meta.dirname, encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  })();
  admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, application_name: 'cns-bench-admin' });
  await admin.connect();
  const pgVersion = (await admin.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version.split(' ')[0]!;
  log(`rounds ${ROUNDS}, ${SECONDS} s per load run, ${PROJECTS} projects, ${FRESH_KEYS} fresh keys, ${REQUESTS} requests per latency figure; PostgreSQL ${pgVersion}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  // Set up side by side (not measured); a box that came up is stopped by cleanup() even when the other failed.
  const setup = Promise.allSettled(ENGINES.map((engine) => startBox(engine)));
  settingUp = setup;
  const setups = await setup;
  for (const s of setups) if (s.status === 'fulfilled') boxes.push(s.value);
  for (const s of setups) if (s.status === 'rejected') throw s.reason;

  const results = new Map<string, Measured[]>();
  for (let round = 1; round <= ROUNDS; round++) {
    for (const figure of FIGURES) {
      // Alternating which engine goes first, so that neither always follows the other's load.
      const order = round % 2 === 1 ? boxes : [...boxes].reverse();
      for (const box of order) {
        const m = await measureFigure(box, figure);
        const key = `${box.engine}/${figure}`;
        results.set(key, [...(results.get(key) ?? []), m]);
        const pgCpu = box.engine === 'postgres' ? ` + PG ${fmt(m.pgCpuUs, 0)}` : '';
        log(
          `round ${round}, ${LOAD_NAME[figure]}, ${ENGINE_NAME[box.engine]}: ${fmt(m.rps, 0)}/s, p50 ${fmt(m.p50)} ms, p99 ${fmt(m.p99)} ms; ` +
            `loop p99 ${fmt(m.loop.p99, 1)} max ${fmt(m.loop.max, 1)} ms; CPU µs/request cns ${fmt(m.cnsCpuUs, 0)}${pgCpu}`,
        );
      }
    }
  }
  report(results, { startLoad, pgVersion, commit, seconds: (Date.now() - started) / 1000 });
}

main()
  .catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(() => cleanup());
