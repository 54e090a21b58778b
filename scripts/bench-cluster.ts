/**
 * Issue 31: a cluster of three nodes against one box, in one run on this machine.
 *
 * Set-up (not measured): a 3-server NATS JetStream cluster on ports of its own
 * (test/helpers/natsCluster.ts; never the machine's shared server at 4222), a fresh PostgreSQL
 * database (127.0.0.1:5432, or CNS_TEST_POSTGRES_URL), and three `cns serve` processes n1, n2, n3
 * (CNS_WORKERS=1, rate limits off, each its own data folder with one shared signing.key,
 * CNS_REPLICAS=3, heartbeat and down-after below). n1 starts first (it migrates the database),
 * then n2 and n3. Beside them one single box: a plain `cns serve` on a fresh data folder (SQLite),
 * the same settings otherwise. A project's primary is the node that created it.
 *
 *   1. REST writes (POST /content/{id}/write, a quarter creating a file and the rest updating
 *      one, half Markdown and half JSON): at 1 client (service latency), through the project's
 *      primary and through another node (forwarded), and at 16 clients on their own keep-alive
 *      connections, client c writing to project c mod 4 (the 4 projects' primaries spread over
 *      the nodes), clients 0-3 and 8-11 through the primary, 4-7 and 12-15 through another node:
 *      p50, p99 and writes/s of all 16, and p50 of each half. Target: cluster p50 ≤ 2.5× the box.
 *   2. `cat` of a small file (GET /content/{id}/cat): through a node that is not the primary
 *      (forwarded), and through the primary for reference, at 1 and at 16 connections. Target:
 *      forwarded p50 ≤ 1.3× the box.
 *   3. The live feed (GET /api/v1/events?project_id=, SSE) opened on n3 for a project n1 writes,
 *      commits through n1 one at a time at --feed-rate per second: the time from the write's
 *      answer to the `change` event with its commit id. Target p99 < 200 ms. The box's own
 *      figure is the baseline.
 *   4. Moving a project between nodes: measured by scripts/bench-cluster-move.ts (four nodes, a
 *      10,000-file project); this run only points there.
 *   5. Failover: writes paced at --kill-rate per second (open loop, each a new file) through a
 *      node that is not the primary of a project whose primary is the node holding the
 *      coordinator lease (the worst case: that lease lapses first); after --kill-before seconds
 *      that node's process gets SIGKILL. Every acknowledged (200/201) write is read back through
 *      each surviving node; 503s are expected and counted. The gap is the time from the kill to
 *      the first acknowledged write sent after it. Targets: gap < 10 s, 0 acknowledged writes lost.
 *
 * Evidence logged beside the figures: CPU per request of each node (/proc), each server's largest
 * event-loop delay during each run (scripts/lib/loopDelayMonitor.mjs, preloaded), every change of
 * the coordinator lease or of a node's state (PostgreSQL rows polled every 250 ms: a live node
 * marked down under load shows there), and the nodes' cluster log lines.
 *
 * Figures 1 and 2 run --rounds rounds, the box and the cluster in alternating order; a figure is
 * the median of the rounds, a ratio the median of the rounds' ratios (cluster / box: above 1, the
 * cluster is slower). Each measurement waits for the servers to be idle first. The load generator,
 * the three nodes, NATS and PostgreSQL all share this machine's cores: a real cluster runs each
 * node on its own machine.
 *
 * Run: node --import=tsx scripts/bench-cluster.ts
 *   --rounds 3 --seconds 3        rounds of figures 1-2, seconds of each 16-client measured run
 *   --requests 100                writes per 1-client figure (reads: 3×)
 *   --feed-commits 100 --feed-rate 10
 *   --kill-rate 20 --kill-before 5 --kill-after 15   (writes/s, seconds; the run stops 5 s after
 *                                 writes are acknowledged again, or at --kill-after)
 *   --heartbeat-ms 200 --down-after-ms 1000          CNS_CLUSTER_HEARTBEAT_MS, CNS_CLUSTER_DOWN_AFTER_MS
 *   --quick                       1 round of 1 s, 40 requests, 30 feed commits: a smoke run
 * Exits 1 when a node (or anything else) fails. BENCH_SERVER_LOG=1 shows the servers' output;
 * BENCH_NODE_ARGS adds node flags to every server (a CPU profile: `--cpu-prof --cpu-prof-dir=DIR`).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startNatsCluster, type NatsCluster } from '../test/helpers/natsCluster.ts';
import { freshPostgresDatabase, type TestDatabase } from '../test/helpers/postgresDatabases.ts';
import { fmt, runLoad, type LoadResult, type RequestSpec } from './lib/load.ts';
import { cpuTicks, processTree, waitIdle } from './lib/processTree.ts';
import { freePort } from './lib/inspector.ts';
import { api, benchProject, startBenchServer, type BenchServer } from './lib/serverProcess.ts';

const { values: opt } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    seconds: { type: 'string' },
    requests: { type: 'string' },
    'feed-commits': { type: 'string' },
    'feed-rate': { type: 'string' },
    'kill-rate': { type: 'string' },
    'kill-before': { type: 'string' },
    'kill-after': { type: 'string' },
    'heartbeat-ms': { type: 'string' },
    'down-after-ms': { type: 'string' },
  },
});
const QUICK = opt.quick === true;
const num = (flag: string | undefined, full: number, quick = full) => Number(flag ?? (QUICK ? quick : full));
const ROUNDS = num(opt.rounds, 3, 1);
const SECONDS = num(opt.seconds, 3, 1);
const REQUESTS = num(opt.requests, 100, 40);
const FEED_COMMITS = num(opt['feed-commits'], 100, 30);
const FEED_RATE = num(opt['feed-rate'], 10);
const KILL_RATE = num(opt['kill-rate'], 20);
const KILL_BEFORE = num(opt['kill-before'], 5, 3);
const KILL_AFTER = num(opt['kill-after'], 15);
const HEARTBEAT_MS = num(opt['heartbeat-ms'], 200);
const DOWN_AFTER_MS = num(opt['down-after-ms'], 1000);
const REPLICAS = 3;
const CONCURRENCY = 16;
const WRITE_PROJECTS = 4;
const TARGET = { write: 2.5, read: 1.3, feedP99: 200, gapMs: 10_000 };
for (const [name, v, min] of [['rounds', ROUNDS, 1], ['seconds', SECONDS, 0.1], ['requests', REQUESTS, 10], ['feed-commits', FEED_COMMITS, 5], ['feed-rate', FEED_RATE, 0.1], ['kill-rate', KILL_RATE, 1], ['kill-before', KILL_BEFORE, 1], ['kill-after', KILL_AFTER, 2], ['heartbeat-ms', HEARTBEAT_MS, 100], ['down-after-ms', DOWN_AFTER_MS, 3 * HEARTBEAT_MS]] as const) {
  if (!(v >= min)) throw new Error(`--${name} must be a number ≥ ${min}, got ${v}`);
}

if (process.env.CNS_DATABASE_URL || process.env.CNS_BUS_URL) {
  console.error('(CNS_DATABASE_URL and CNS_BUS_URL are ignored: the bench makes its own database and NATS cluster)');
  delete process.env.CNS_DATABASE_URL;
  delete process.env.CNS_BUS_URL;
}

const work = mkdtempSync(join(tmpdir(), 'cns-bench-cluster-'));
const loopDir = join(work, 'loop');
mkdirSync(loopDir);
/** Preloaded into every server: its event-loop delay, sampled inside it (scripts/lib/loopDelayMonitor.mjs). */
const MONITOR = pathToFileURL(join(import.meta.dirname, 'lib', 'loopDelayMonitor.mjs')).href;
/** BENCH_NODE_ARGS: more node flags for every server, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` (profiles written at a clean stop). */
const SERVER_ARGS = [`--import=${MONITOR}`, ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
const log = (line: string) => console.error(`[${new Date().toISOString().slice(11, 23)}] ${line}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))] ?? NaN;
};
/** Milliseconds with three significant figures or so: 0.38, 7.52, 21.6, 944. */
const msText = (v: number) => (!Number.isFinite(v) ? 'n/a' : Math.abs(v) < 10 ? v.toFixed(2) : Math.abs(v) < 100 ? v.toFixed(1) : Math.round(v).toLocaleString('en'));

// ---------------------------------------------------------------- what cleanup() ends

const servers: BenchServer[] = [];
let nats: NatsCluster | null = null;
let database: TestDatabase | null = null;
let admin: pg.Client | null = null;
/** Set-up under way (cleanup waits for it: a server still starting would be left behind). */
let settingUp: Promise<unknown> = Promise.resolve();
let closing = false;
let cleaning: Promise<void> | null = null;
/** Processes a killed node left (its git helpers): ended at cleanup if still there. */
const leftovers: number[] = [];

/** SIGTERM, then SIGKILL after 15 s; nothing to do for a server that already ended. */
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

function cleanup(): Promise<void> {
  closing = true;
  cleaning ??= (async () => {
    await settingUp.catch(() => undefined);
    await Promise.all(servers.map((s) => stopServer(s)));
    for (const pid of leftovers) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await nats?.stop().catch((e: unknown) => log(`could not stop the NATS servers: ${String(e)}`));
    await admin?.end().catch(() => undefined);
    await database?.drop().catch((e: unknown) => log(`could not drop the database ${database?.name}: ${String(e)}`));
    rmSync(work, { recursive: true, force: true });
  })();
  return cleaning;
}
process.once('SIGINT', () => {
  log('interrupted: stopping the servers and NATS, dropping the database');
  void cleanup().finally(() => process.exit(130));
});

// ---------------------------------------------------------------- HTTP

interface Answer {
  status: number;
  body: string;
}

function send(url: string, agent: Agent | false, spec: RequestSpec, timeoutMs = 30_000): Promise<Answer> {
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

function writeSpec(token: string, projectId: string, path: string, content: unknown, type: 'markdown' | 'json'): RequestSpec {
  const body = JSON.stringify({ path, content, node_type: type });
  return {
    method: 'POST',
    path: `/api/v1/content/${projectId}/write`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
    body,
  };
}

const catPath = (projectId: string, path: string) => `/api/v1/content/${projectId}/cat?path=${encodeURIComponent(path)}`;

let writeSeq = 0;
/** As scripts/bench-postgres.ts: every fourth write creates a file, the others update one of the client's 20; odd ones JSON, even ones Markdown. */
function mixedWrite(token: string, projectId: string, client: number): RequestSpec {
  const seq = ++writeSeq;
  const json = seq % 2 === 1;
  const ext = json ? 'json' : 'md';
  const path = seq % 4 === 0 ? `new/c${client}/n${seq}.${ext}` : `edit/c${client}/f${(seq >> 2) % 20}.${ext}`;
  const content = json ? { seq, client, title: `write ${seq}`, tags: ['bench', ext] } : `# write ${seq}\n\nby client ${client}, a line of text.\n`;
  return writeSpec(token, projectId, path, content, json ? 'json' : 'markdown');
}

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

/**
 * Closed-loop load as scripts/lib/load.ts's runLoad, but each client sends to a server of its own
 * (`urlOf(client)`) on its own keep-alive connection, and the latencies are kept by group.
 */
async function runMixedLoad(urlOf: (client: number) => string, groupOf: (client: number) => string, concurrency: number, total: number, next: (client: number) => RequestSpec): Promise<{ all: LoadResult; groups: Map<string, LoadResult> }> {
  const agents = Array.from({ length: concurrency }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
  const latencies = new Map<string, number[]>();
  const errors = new Map<string, number>();
  let issued = 0;
  const started = performance.now();
  await Promise.all(
    agents.map(async (agent, client) => {
      const group = groupOf(client);
      const mine = latencies.get(group) ?? [];
      latencies.set(group, mine);
      while (issued < total) {
        issued++;
        const t0 = performance.now();
        const r = await send(urlOf(client), agent, next(client));
        mine.push(performance.now() - t0);
        if (r.status < 200 || r.status >= 300) errors.set(group, (errors.get(group) ?? 0) + 1);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const a of agents) a.destroy();
  const result = (ls: number[], errs: number): LoadResult => ({ requests: ls.length, errors: errs, seconds, rps: ls.length / seconds, p50: pct(ls, 0.5), p99: pct(ls, 0.99) });
  const groups = new Map([...latencies].map(([g, ls]) => [g, result(ls, errors.get(g) ?? 0)]));
  const all = result([...latencies.values()].flat(), [...errors.values()].reduce((a, b) => a + b, 0));
  return { all, groups };
}

// ---------------------------------------------------------------- set-up


interface Node {
  id: string;
  server: BenchServer;
  url: string;
  /** The node's cluster log lines (warn and above: elections, nodes marked down), with when they came. */
  lines: { at: number; text: string }[];
}

interface Side {
  /** The box, or n1. */
  url: string;
  token: string;
  /** Client c writes to writeProjects[c mod 4]; on the cluster their primaries are n1, n2, n3, n1. */
  writeProjects: string[];
  /** The 1-client writes' project (on the cluster, n1's). */
  latencyProject: string;
  /** The project of the small file that `cat` reads (on the cluster, n1's). */
  readProject: string;
  /** The feed's project (on the cluster, n1's). */
  feedProject: string;
  orgId: string;
}

const SMALL_FILE = 'docs/small.md';
const SMALL_TEXT = '# a small file\n\nwith a line of text.\n';

async function checkedHealth(url: string, engine: string, node: string | null): Promise<void> {
  const health = (await (await fetch(`${url}/healthz`)).json()) as { data?: { metadata_engine?: string; node?: string | null } };
  if (health.data?.metadata_engine !== engine || (health.data?.node ?? null) !== node) throw new Error(`${url}/healthz answered ${JSON.stringify(health.data)}, expected engine ${engine}, node ${node}`);
}

async function startNode(id: string, port: number, dir: string, databaseUrl: string, busUrls: string[]): Promise<Node> {
  const t0 = performance.now();
  const server = await startBenchServer(
    dir,
    {
      CNS_WORKERS: '1',
      CNS_DATABASE_URL: databaseUrl,
      CNS_BUS_URL: busUrls.join(','),
      CNS_NODE_ID: id,
      CNS_NODE_URL: `http://127.0.0.1:${port}`,
      CNS_REPLICAS: String(REPLICAS),
      CNS_CLUSTER_HEARTBEAT_MS: String(HEARTBEAT_MS),
      CNS_CLUSTER_DOWN_AFTER_MS: String(DOWN_AFTER_MS),
      BENCH_LOOP_DELAY_DIR: loopDir,
    },
    SERVER_ARGS,
    undefined,
    port,
  );
  servers.push(server);
  const node: Node = { id, server, url: server.url, lines: [] };
  let partial = '';
  server.child.stdout!.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString();
    const lines = text.split('\n');
    partial = lines.pop()!;
    for (const l of lines) if (l.includes('cluster')) node.lines.push({ at: performance.now(), text: l });
  });
  await checkedHealth(server.url, 'postgres', id);
  log(`node ${id} listening at ${server.url} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  return node;
}

async function startCluster(): Promise<Node[]> {
  const t0 = performance.now();
  nats = await startNatsCluster(3);
  log(`NATS JetStream cluster at ${nats.urls.join(', ')} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  database = await freshPostgresDatabase();
  admin = new pg.Client({ connectionString: database.url, application_name: 'cns-bench-cluster' });
  await admin.connect();
  const key = randomBytes(48).toString('base64');
  const ids = ['n1', 'n2', 'n3'];
  const folders = await Promise.all(
    ids.map(async (id) => {
      const dir = join(work, `node-${id}`);
      mkdirSync(dir);
      writeFileSync(join(dir, 'signing.key'), key + '\n', { mode: 0o600 });
      return { id, dir, port: await freePort() };
    }),
  );
  // n1 first: it migrates the fresh database and creates the administrator; then the two others.
  const n1 = await startNode('n1', folders[0]!.port, folders[0]!.dir, database.url, nats.urls);
  if (closing) throw new Error('interrupted');
  const others = await Promise.all(folders.slice(1).map((f) => startNode(f.id, f.port, f.dir, database!.url, nats!.urls)));
  const nodes = [n1, ...others];
  // Every node sees the three up before any project is placed (copies go to the live nodes).
  const deadline = Date.now() + 30_000;
  const login = await api(n1.url, 'POST', '/auth/login', null, { email: 'bench@example.com', password: 'bench-password' });
  for (const n of nodes) {
    for (;;) {
      const c = await api(n.url, 'GET', '/cluster', login.access_token as string);
      const up = (c.nodes as { id: string; state: string }[]).filter((x) => x.state === 'up').map((x) => x.id);
      if (up.length === 3) break;
      if (Date.now() > deadline) throw new Error(`node ${n.id} sees ${JSON.stringify(c.nodes)} after 30 s`);
      await sleep(100);
    }
  }
  await sleep(3 * HEARTBEAT_MS);
  return nodes;
}

async function primaryOf(project: string): Promise<{ primary: string | null; epoch: number; copies: string[] }> {
  const p = await admin!.query<{ primary_node: string | null; epoch: string }>('SELECT primary_node, epoch FROM project_placement WHERE project_id = $1', [project]);
  const c = await admin!.query<{ node_id: string }>('SELECT node_id FROM project_copies WHERE project_id = $1 ORDER BY node_id', [project]);
  return { primary: p.rows[0]?.primary_node ?? null, epoch: Number(p.rows[0]?.epoch ?? 0), copies: c.rows.map((r) => r.node_id) };
}

async function coordinator(): Promise<string | null> {
  const r = await admin!.query<{ holder: string }>("SELECT holder FROM cluster_leases WHERE name = 'coordinator' AND expires_at > now()");
  return r.rows[0]?.holder.split(':')[0] ?? null;
}

/** TCP connections of `url`'s port in TIME-WAIT now (ss, Linux); -1 when ss cannot say. */
function closedConnections(url: string): number {
  try {
    const port = new URL(url).port;
    const out = execFileSync('ss', ['-Htan', 'state', 'time-wait', `( sport = :${port} or dport = :${port} )`], { encoding: 'utf8' });
    return out.split('\n').filter((l) => l.trim() !== '').length;
  } catch {
    return -1;
  }
}

/** What the bench is doing now (the watcher's transitions name it). */
let phase = 'set-up';
const transitions: string[] = [];
/**
 * Watches the cluster's rows in PostgreSQL every 250 ms and logs each change of the coordinator
 * lease's holder or of a node's state: a live node marked down, or a lease that passed, under load
 * (the heartbeat is late) is a finding, not noise.
 */
function watchCluster(): () => Promise<void> {
  let last = '';
  let running = true;
  const watcher = (async () => {
    while (running && !closing) {
      try {
        const lease = await admin!.query<{ holder: string; epoch: string; live: boolean }>("SELECT holder, epoch, expires_at > now() AS live FROM cluster_leases WHERE name = 'coordinator'");
        const states = await admin!.query<{ node_id: string; state: string }>('SELECT node_id, state FROM cluster_nodes ORDER BY node_id');
        const l = lease.rows[0];
        const now = `coordinator ${l ? `${l.holder.split(':')[0]} (epoch ${l.epoch}${l.live ? '' : ', expired'})` : 'none'}; ${states.rows.map((r) => `${r.node_id} ${r.state}`).join(', ')}`;
        if (now !== last) {
          if (last !== '') {
            transitions.push(`${phase}: ${now}`);
            log(`  cluster rows changed during ${phase}: ${now}`);
          }
          last = now;
        }
      } catch {
        // the admin connection is closing
      }
      await sleep(250);
    }
  })();
  return async () => {
    running = false;
    await watcher;
  };
}

/** Creates a project through `url` (on a cluster, that node becomes its primary) with the small file in it. */
async function makeProject(url: string, token: string, orgId: string, name: string): Promise<string> {
  const id = (await api(url, 'POST', '/projects/', token, { name, org_id: orgId })).id as string;
  await api(url, 'POST', `/content/${id}/write`, token, { path: SMALL_FILE, content: SMALL_TEXT, node_type: 'markdown' });
  return id;
}

/** The projects of figures 1-3 on the box (all through it) or on the cluster (through `via(k)`, which places them). */
async function prepareSide(url: string, via: (k: number) => string): Promise<Side> {
  const { token, projectId } = await benchProject(url);
  const orgId = (await api(url, 'GET', `/projects/${projectId}`, token)).org_id as string;
  await api(url, 'POST', `/content/${projectId}/write`, token, { path: SMALL_FILE, content: SMALL_TEXT, node_type: 'markdown' });
  const writeProjects: string[] = [];
  for (let k = 0; k < WRITE_PROJECTS; k++) writeProjects.push(await makeProject(via(k), token, orgId, `writes ${k + 1}`));
  const latencyProject = await makeProject(url, token, orgId, 'latency');
  const feedProject = await makeProject(url, token, orgId, 'feed');
  return { url, token, writeProjects, latencyProject, readProject: projectId, feedProject, orgId };
}

// ---------------------------------------------------------------- figures 1 and 2

interface Measured extends LoadResult {
  /** Per group of clients (the cluster's 16-client writes: 'direct', 'forwarded'). */
  groups?: Map<string, LoadResult>;
  /** CPU per request of the servers' processes (the box, or the three nodes), in µs. */
  cpuUs: number;
  /** The same by process (the box; n1, n2, n3). */
  cpuUsBy: number[];
  /** The largest event-loop delay of each process during the run, ms. */
  loop: number[];
}

let boxServer: BenchServer | null = null;
/** Each idle node's share of a core. */
let idleShares: number[] = [];
let nodes: Node[] = [];
const pids = (side: 'box' | 'cluster') => (side === 'box' ? [boxServer!.child.pid!] : nodes.map((n) => n.server.child.pid!));

const loopSeq = new Map<number, number>();
/** The largest event-loop delay (ms) a server's monitor saw since the previous call (SIGUSR2, then its file); NaN when it did not answer. */
async function loopMax(pid: number): Promise<number> {
  const want = (loopSeq.get(pid) ?? 0) + 1;
  loopSeq.set(pid, want);
  try {
    process.kill(pid, 'SIGUSR2');
  } catch {
    return NaN;
  }
  for (let waited = 0; waited < 10_000; waited += 20) {
    try {
      const stats = JSON.parse(readFileSync(join(loopDir, `loop-${pid}.json`), 'utf8')) as { seq: number; max: number };
      if (stats.seq === want) return stats.max;
    } catch {
      // not written yet
    }
    await sleep(20);
  }
  return NaN;
}

async function idle(side: 'box' | 'cluster'): Promise<void> {
  // Work a previous load left (indexing, replicas catching up) would slow the next one; --quick does not wait.
  if (QUICK) return;
  const ok = await Promise.all(pids(side).map((p) => waitIdle(p, 15_000, 0.1)));
  if (ok.some((x) => !x)) log(`  (the ${side}'s processes did not all get idle within 15 s)`);
}

async function measured(side: 'box' | 'cluster', what: string, run: () => Promise<LoadResult & { groups?: Map<string, LoadResult> }>): Promise<Measured> {
  await idle(side);
  await Promise.all(pids(side).map(loopMax));
  const before = pids(side).map((p) => cpuTicks(p));
  const r = await run();
  const after = pids(side).map((p) => cpuTicks(p));
  const loop = await Promise.all(pids(side).map(loopMax));
  if (r.errors > 0) throw new Error(`${side}, ${what}: ${r.errors} of ${r.requests} requests failed; BENCH_SERVER_LOG=1 shows the servers' log`);
  const cpuUsBy = after.map((t, i) => (((t - before[i]!) / 100) * 1e6) / r.requests);
  return { ...r, cpuUs: cpuUsBy.reduce((a, b) => a + b, 0), cpuUsBy, loop };
}

type Key = 'box/write1' | 'direct/write1' | 'forwarded/write1' | 'box/write16' | 'cluster/write16' | 'box/read1' | 'direct/read1' | 'forwarded/read1' | 'box/read16' | 'direct/read16' | 'forwarded/read16';
const results = new Map<Key, Measured[]>();
const keep = (key: Key, m: Measured) => {
  results.set(key, [...(results.get(key) ?? []), m]);
  const groups = m.groups ? `; ${[...m.groups].map(([g, r]) => `${g} p50 ${msText(r.p50)} p99 ${msText(r.p99)} ms`).join(', ')}` : '';
  const by = m.cpuUsBy.length > 1 ? ` (${m.cpuUsBy.map((u, i) => `n${i + 1} ${Math.round(u)}`).join(', ')})` : '';
  log(`  ${key}: ${fmt(m.rps, 0)}/s, p50 ${msText(m.p50)} ms, p99 ${msText(m.p99)} ms, CPU ${Math.round(m.cpuUs)} µs/request${by}${groups}; event-loop delay max ${m.loop.map((x) => msText(x)).join(' / ')} ms`);
};

async function boxRound(box: Side): Promise<void> {
  const url = box.url;
  const w1 = () => mixedWrite(box.token, box.latencyProject, 0);
  await runLoad(url, 1, 20, w1);
  keep('box/write1', await measured('box', 'write1', () => runLoad(url, 1, REQUESTS, w1)));
  const w16 = (client: number) => mixedWrite(box.token, box.writeProjects[client % WRITE_PROJECTS]!, client);
  const probe = await runMixedLoad(() => url, () => 'box', CONCURRENCY, 96, w16);
  const total = Math.max(160, Math.round(probe.all.rps * SECONDS));
  keep('box/write16', await measured('box', 'write16', async () => (await runMixedLoad(() => url, () => 'box', CONCURRENCY, total, w16)).all));
  const cat: RequestSpec = { method: 'GET', path: catPath(box.readProject, SMALL_FILE), headers: { authorization: `Bearer ${box.token}` } };
  await runLoad(url, 1, 100, () => cat);
  keep('box/read1', await measured('box', 'read1', () => runLoad(url, 1, REQUESTS * 3, () => cat)));
  const rprobe = await runLoad(url, CONCURRENCY, 1000, () => cat);
  keep('box/read16', await measured('box', 'read16', () => runLoad(url, CONCURRENCY, Math.max(2000, Math.round(rprobe.rps * SECONDS)), () => cat)));
}

async function clusterRound(c: Side): Promise<void> {
  const [n1, n2] = nodes;
  const w1 = () => mixedWrite(c.token, c.latencyProject, 0);
  for (const [key, node] of [['direct/write1', n1!], ['forwarded/write1', n2!]] as const) {
    await runLoad(node.url, 1, 20, w1);
    keep(key, await measured('cluster', key, () => runLoad(node.url, 1, REQUESTS, w1)));
  }
  // Client c writes to project c mod 4 (primaries n1, n2, n3, n1); clients 0-3 and 8-11 through its primary, 4-7 and 12-15 through the next node.
  const group = (client: number) => (((client >> 2) & 1) === 0 ? 'direct' : 'forwarded');
  const urlOf = (client: number) => nodes[((client % WRITE_PROJECTS) % 3 + (group(client) === 'direct' ? 0 : 1)) % 3]!.url;
  const w16 = (client: number) => mixedWrite(c.token, c.writeProjects[client % WRITE_PROJECTS]!, client);
  const probe = await runMixedLoad(urlOf, group, CONCURRENCY, 96, w16);
  if (probe.all.errors) log(`  (${probe.all.errors} of the probe's ${probe.all.requests} writes failed)`);
  const total = Math.max(160, Math.round(probe.all.rps * SECONDS));
  keep('cluster/write16', await measured('cluster', 'write16', async () => {
    const r = await runMixedLoad(urlOf, group, CONCURRENCY, total, w16);
    return { ...r.all, groups: r.groups };
  }));
  const cat: RequestSpec = { method: 'GET', path: catPath(c.readProject, SMALL_FILE), headers: { authorization: `Bearer ${c.token}` } };
  for (const [suffix, node] of [['forwarded', n2!], ['direct', n1!]] as const) {
    await runLoad(node.url, 1, 100, () => cat);
    const closedBefore = closedConnections(n1!.url);
    keep(`${suffix}/read1`, await measured('cluster', `${suffix}/read1`, () => runLoad(node.url, 1, REQUESTS * 3, () => cat)));
    // Connections to or from the primary's port that ended meanwhile (TIME-WAIT): a forward that opened a connection per request shows here.
    log(`    connections of n1's port that closed during ${suffix}/read1: ${closedConnections(n1!.url) - closedBefore} for ${REQUESTS * 3} requests`);
    const rprobe = await runLoad(node.url, CONCURRENCY, 1000, () => cat);
    keep(`${suffix}/read16`, await measured('cluster', `${suffix}/read16`, () => runLoad(node.url, CONCURRENCY, Math.max(2000, Math.round(rprobe.rps * SECONDS)), () => cat)));
  }
}

// ---------------------------------------------------------------- figure 3: the feed

interface FeedResult {
  commits: number;
  received: number;
  latencies: number[];
  /** Events that came before the write's answer (the latency is then negative). */
  early: number;
  /** When each commit's event arrived (NaN: never), in the order of the commits. */
  at: number[];
}

/** Opens the SSE stream and calls `onChange(commitId, at)` for each `change` event; resolves once `ready` came. */
async function openFeed(url: string, token: string, project: string, onChange: (commitId: string, at: number) => void): Promise<() => void> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, method: 'GET', path: `/api/v1/events?project_id=${project}`, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, agent: false }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`GET /events through ${url}: ${res.statusCode}`));
        res.resume();
        return;
      }
      res.setEncoding('utf8');
      let buffered = '';
      res.on('data', (chunk: string) => {
        const at = performance.now();
        buffered += chunk;
        let end: number;
        while ((end = buffered.indexOf('\n\n')) >= 0) {
          const block = buffered.slice(0, end);
          buffered = buffered.slice(end + 2);
          let event = 'message';
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data += line.slice(6);
          }
          if (event === 'ready') resolve(() => req.destroy());
          else if (event === 'change') onChange((JSON.parse(data) as { commit_id: string }).commit_id, at);
        }
      });
      res.on('error', () => undefined);
    });
    req.on('error', (e) => reject(e));
    req.end();
  });
}

/**
 * Opens the stream on each of `feedUrls` at once, then commits through `writeUrl` one at a time at
 * FEED_RATE; answers, per stream, the time from each write's answer to its event (the streams
 * see the same commits, so their difference is what the way between them costs).
 */
async function feedFigure(writeUrl: string, feedUrls: string[], side: Side): Promise<FeedResult[]> {
  const arrived = feedUrls.map(() => new Map<string, number>());
  const closers = await Promise.all(feedUrls.map((u, k) => openFeed(u, side.token, side.feedProject, (id, at) => arrived[k]!.set(id, at))));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const acked: { id: string; at: number }[] = [];
  try {
    const t0 = performance.now();
    for (let i = 0; i < FEED_COMMITS; i++) {
      const wait = t0 + (i * 1000) / FEED_RATE - performance.now();
      if (wait > 0) await sleep(wait);
      const r = await send(writeUrl, agent, writeSpec(side.token, side.feedProject, `feed/f${i % 10}.md`, `# commit ${i}\n`, 'markdown'));
      const at = performance.now();
      if (r.status !== 200 && r.status !== 201) throw new Error(`feed write ${i} through ${writeUrl}: ${r.status} ${r.body}`);
      acked.push({ id: (JSON.parse(r.body) as { data: { commit_id: string } }).data.commit_id, at });
    }
    const until = performance.now() + 3000;
    while (performance.now() < until && arrived.some((m) => acked.some((a) => !m.has(a.id)))) await sleep(20);
  } finally {
    for (const close of closers) close();
    agent.destroy();
  }
  return arrived.map((m) => {
    const latencies = acked.filter((a) => m.has(a.id)).map((a) => m.get(a.id)! - a.at);
    return { commits: acked.length, received: latencies.length, latencies, early: latencies.filter((l) => l < 0).length, at: acked.map((a) => m.get(a.id) ?? NaN) };
  });
}

// ---------------------------------------------------------------- figure 5: failover

interface FailoverResult {
  victim: string;
  wasCoordinator: boolean;
  via: string;
  sent: number;
  acked: number;
  statuses: Map<number, number>;
  gapMs: number;
  lastFailureMs: number;
  present: Map<string, number>;
  newPrimary: string | null;
  epoch: number;
  /** From the survivors' logs: when the victim was marked down and the project got its new primary, ms after the kill. */
  markedDownMs: number;
  electedMs: number;
  leftoverProcesses: number;
}

async function failoverFigure(c: Side): Promise<FailoverResult> {
  const holder = await coordinator();
  const victim = nodes.find((n) => n.id === holder) ?? nodes[0]!;
  const wasCoordinator = holder === victim.id;
  const project = await makeProject(victim.url, c.token, c.orgId, 'failover');
  const placed = await primaryOf(project);
  if (placed.primary !== victim.id || placed.copies.length !== REPLICAS) throw new Error(`the failover project is placed ${JSON.stringify(placed)}, expected primary ${victim.id} and ${REPLICAS} copies`);
  const survivors = nodes.filter((n) => n !== victim);
  const via = survivors[0]!;
  log(`failover: project ${project} on ${victim.id} (${wasCoordinator ? 'also the coordinator' : `coordinator ${holder}`}), copies ${placed.copies.join(', ')}; ${KILL_RATE} writes/s through ${via.id}, SIGKILL of ${victim.id} after ${KILL_BEFORE} s`);

  interface Sent {
    seq: number;
    path: string;
    content: string;
    start: number;
    end: number;
    status: number;
  }
  const sent: Sent[] = [];
  const inFlight: Promise<void>[] = [];
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const interval = 1000 / KILL_RATE;
  const t0 = performance.now();
  let killAt = -1;
  let recoveredAt = -1;
  let tree: number[] = [];
  for (let seq = 0; ; seq++) {
    const wait = t0 + seq * interval - performance.now();
    if (wait > 0) await sleep(wait);
    const now = performance.now();
    if (killAt < 0 && now - t0 >= KILL_BEFORE * 1000) {
      tree = processTree(victim.server.child.pid!);
      const exited = new Promise<void>((r) => victim.server.child.once('exit', () => r()));
      victim.server.child.kill('SIGKILL');
      killAt = performance.now();
      void exited.then(() => log(`  ${victim.id} (pid ${victim.server.child.pid}) exited ${Math.round(performance.now() - killAt)} ms after SIGKILL`));
    }
    if (killAt >= 0 && (now - killAt >= KILL_AFTER * 1000 || (recoveredAt >= 0 && now - recoveredAt >= 5000))) break;
    if (closing) throw new Error('interrupted');
    const s: Sent = { seq, path: `failover/w${seq}.md`, content: `# write ${seq}\n\nthrough ${via.id}\n`, start: performance.now(), end: 0, status: 0 };
    sent.push(s);
    inFlight.push(
      send(via.url, agent, writeSpec(c.token, project, s.path, s.content, 'markdown'), 15_000).then((r) => {
        s.end = performance.now();
        s.status = r.status;
        if (killAt >= 0 && s.start >= killAt && (r.status === 200 || r.status === 201) && recoveredAt < 0) recoveredAt = s.end;
      }),
    );
  }
  await Promise.all(inFlight);
  agent.destroy();
  // A killed node's helpers (git processes) end when their pipes close; any still there are ended at cleanup.
  await sleep(200);
  const alive = tree.slice(1).filter((p) => {
    try {
      process.kill(p, 0);
      return true;
    } catch {
      return false;
    }
  });
  leftovers.push(...alive);

  const acked = sent.filter((s) => s.status === 200 || s.status === 201);
  const statuses = new Map<number, number>();
  for (const s of sent) statuses.set(s.status, (statuses.get(s.status) ?? 0) + 1);
  const firstAfter = acked.filter((s) => s.start >= killAt).sort((a, b) => a.end - b.end)[0];
  const failures = sent.filter((s) => s.status !== 200 && s.status !== 201 && s.start >= killAt);
  const after = await primaryOf(project);
  log(`failover: ${acked.length} of ${sent.length} writes acknowledged; statuses ${JSON.stringify(Object.fromEntries(statuses))}; now primary ${after.primary} at epoch ${after.epoch}; reading every acknowledged write back through ${survivors.map((n) => n.id).join(' and ')}`);
  const present = new Map<string, number>();
  for (const n of survivors) {
    const reader = new Agent({ keepAlive: true, maxSockets: 4 });
    const ok = await pool(acked.length, 4, async (i) => {
      const s = acked[i]!;
      const r = await send(n.url, reader, { method: 'GET', path: catPath(project, s.path), headers: { authorization: `Bearer ${c.token}` } });
      if (r.status !== 200) return false;
      return (JSON.parse(r.body) as { data: { content: string } }).data.content === s.content;
    });
    reader.destroy();
    present.set(n.id, ok.filter(Boolean).length);
    const missing = acked.filter((_, i) => !ok[i]).map((s) => s.path);
    if (missing.length) log(`  through ${n.id}, ${missing.length} acknowledged writes NOT read back: ${missing.slice(0, 10).join(', ')}${missing.length > 10 ? ' …' : ''}`);
  }
  const firstLine = (re: RegExp) => Math.min(...survivors.flatMap((n) => n.lines.filter((l) => l.at >= killAt && re.test(l.text)).map((l) => l.at - killAt)));
  for (const n of survivors) for (const l of n.lines.filter((x) => x.at >= killAt - 500)) log(`  ${n.id} +${Math.round(l.at - killAt)} ms: ${l.text.slice(0, 300)}`);
  return {
    victim: victim.id,
    wasCoordinator,
    via: via.id,
    sent: sent.length,
    acked: acked.length,
    statuses,
    gapMs: firstAfter ? firstAfter.end - killAt : NaN,
    lastFailureMs: failures.length ? Math.max(...failures.map((s) => s.end)) - killAt : 0,
    present,
    newPrimary: after.primary,
    epoch: after.epoch,
    markedDownMs: firstLine(/marked down/),
    electedMs: firstLine(/new primary writes/),
    leftoverProcesses: alive.length,
  };
}

// ---------------------------------------------------------------- the report

interface Row {
  figure: string;
  box: string;
  cluster: string;
  ratio: string;
  target: string;
  met: string;
}

async function main(): Promise<void> {
  const started = performance.now();
  const startLoad = loadavg();
  const commit = (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: import.meta.dirname, encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  })();
  log(`rounds ${ROUNDS}, ${SECONDS} s per 16-client run, ${REQUESTS} writes per 1-client run; heartbeat ${HEARTBEAT_MS} ms, down-after ${DOWN_AFTER_MS} ms, replicas ${REPLICAS}; ${cpus().length} cores, load average ${startLoad.map((x) => x.toFixed(2)).join(' ')}`);

  const setup = (async () => {
    const [cluster, box] = await Promise.allSettled([startCluster(), startBenchServer(join(work, 'box'), { CNS_WORKERS: '1', BENCH_LOOP_DELAY_DIR: loopDir }, SERVER_ARGS)]);
    if (box.status === 'fulfilled') {
      servers.push(box.value);
      boxServer = box.value;
    }
    if (cluster.status === 'rejected') throw cluster.reason;
    if (box.status === 'rejected') throw box.reason;
    nodes = cluster.value;
    await checkedHealth(boxServer!.url, 'sqlite', null);
  })();
  settingUp = setup;
  await setup;
  if (closing) throw new Error('interrupted');
  const box = await prepareSide(boxServer!.url, () => boxServer!.url);
  const cluster = await prepareSide(nodes[0]!.url, (k) => nodes[k % 3]!.url);
  for (const [what, project, want] of [
    ...cluster.writeProjects.map((p, k) => [`writes ${k + 1}`, p, nodes[k % 3]!.id] as const),
    ['latency', cluster.latencyProject, 'n1'] as const,
    ['read', cluster.readProject, 'n1'] as const,
    ['feed', cluster.feedProject, 'n1'] as const,
  ]) {
    const p = await primaryOf(project);
    if (p.primary !== want || p.copies.length !== REPLICAS) throw new Error(`project ${what} is placed ${JSON.stringify(p)}, expected primary ${want} with ${REPLICAS} copies`);
  }
  log(`set up in ${((performance.now() - started) / 1000).toFixed(1)} s; coordinator ${await coordinator()}`);
  const stopWatching = watchCluster();
  // What an idle node costs (heartbeats, the coordinator's checks, NATS): the CPU figures per request include it.
  await idle('cluster');
  const idleBefore = pids('cluster').map((p) => cpuTicks(p));
  await sleep(3000);
  idleShares = pids('cluster').map((p, i) => (cpuTicks(p) - idleBefore[i]!) / 300);
  log(`idle cluster: ${idleShares.map((x, i) => `n${i + 1} ${fmt(x * 100, 1)}%`).join(', ')} of a core`);

  for (let round = 1; round <= ROUNDS; round++) {
    const order = round % 2 === 1 ? (['box', 'cluster'] as const) : (['cluster', 'box'] as const);
    for (const side of order) {
      log(`round ${round}, ${side}`);
      phase = `round ${round}, ${side}`;
      if (side === 'box') await boxRound(box);
      else await clusterRound(cluster);
    }
  }

  log(`feed: ${FEED_COMMITS} commits at ${FEED_RATE}/s`);
  phase = 'feed';
  await idle('box');
  const [feedBox] = await feedFigure(box.url, [box.url], box);
  await idle('cluster');
  // The stream on n3 and, for comparison, on the primary itself at the same time: their difference is the way through n3.
  const [feedCluster, feedPrimary] = await feedFigure(nodes[0]!.url, [nodes[2]!.url, nodes[0]!.url], cluster);
  const through = feedCluster!.at.map((t, i) => t - feedPrimary!.at[i]!).filter((d) => Number.isFinite(d));
  for (const [name, f] of [['box', feedBox!], ['cluster, SSE on n3', feedCluster!], ['cluster, SSE on n1 (the primary)', feedPrimary!]] as const) {
    log(`  ${name}: ${f.received} of ${f.commits} events, p50 ${msText(pct(f.latencies, 0.5))} ms, p99 ${msText(pct(f.latencies, 0.99))} ms, max ${msText(Math.max(...f.latencies))} ms, ${f.early} before the answer`);
  }
  log(`  an event through n3 after the same event on n1: p50 ${msText(pct(through, 0.5))} ms, p99 ${msText(pct(through, 0.99))} ms; all (ms): ${through.map((d) => Math.round(d)).join(' ')}`);

  await idle('cluster');
  phase = 'failover';
  const fo = await failoverFigure(cluster);
  await stopWatching();
  // Evidence: every cluster log line (warn and above) the nodes wrote before the failover, and where each project ended.
  for (const n of nodes) for (const l of n.lines) log(`  log of ${n.id}: ${l.text.slice(0, 260)}`);
  const placed = await admin!.query<{ project_id: string; epoch: string; primary_node: string | null }>('SELECT project_id, epoch, primary_node FROM project_placement ORDER BY project_id');
  log(`placements at the end: ${placed.rows.map((r) => `${r.project_id} ${r.primary_node}@${r.epoch}`).join(', ')}`);
  const endLoad = loadavg();
  const minutes = (performance.now() - started) / 60_000;

  // ---- the table
  const of = (k: Key) => results.get(k) ?? [];
  const rows: Row[] = [];
  let misses = 0;
  const med = (k: Key, f: (m: Measured) => number) => median(of(k).map(f));
  const ratioOf = (k: Key, base: Key, f: (m: Measured) => number) => {
    const rs = of(k).map((m, i) => f(m) / f(of(base)[i]!));
    return { ratio: median(rs), text: `${fmt(median(rs))}×${rs.length > 1 ? ` (rounds ${rs.map((r) => fmt(r)).join(', ')})` : ''}` };
  };
  const lat = (k: Key) => `p50 ${msText(med(k, (m) => m.p50))} ms, p99 ${msText(med(k, (m) => m.p99))} ms`;
  const compare = (figure: string, k: Key, base: Key, target: number | null, extra = '') => {
    const r = ratioOf(k, base, (m) => m.p50);
    const met = target === null ? '' : r.ratio <= target ? 'yes' : '**no**';
    if (target !== null && r.ratio > target) misses++;
    rows.push({ figure, box: lat(base), cluster: `${lat(k)}${extra}`, ratio: r.text, target: target === null ? '(reported)' : `≤ ${target}×`, met });
  };
  compare('REST write, 1 client, through the primary', 'direct/write1', 'box/write1', null);
  compare('REST write, 1 client, through another node (forwarded)', 'forwarded/write1', 'box/write1', TARGET.write);
  // The 16 clients' groups: the median of the rounds' group figures.
  const group = (g: string, f: (r: LoadResult) => number) => median(of('cluster/write16').map((m) => f(m.groups!.get(g)!)));
  const groupRatio = (g: string) => {
    const rs = of('cluster/write16').map((m, i) => m.groups!.get(g)!.p50 / of('box/write16')[i]!.p50);
    return { ratio: median(rs), text: `${fmt(median(rs))}×${rs.length > 1 ? ` (rounds ${rs.map((r) => fmt(r)).join(', ')})` : ''}` };
  };
  compare('REST write, 16 clients (8 through the primary, 8 forwarded), all', 'cluster/write16', 'box/write16', TARGET.write);
  for (const g of ['direct', 'forwarded']) {
    const r = groupRatio(g);
    const target = g === 'forwarded' ? TARGET.write : null;
    if (target !== null && r.ratio > target) misses++;
    rows.push({ figure: `  of which the 8 clients ${g === 'direct' ? 'through the primary' : 'through another node (forwarded)'}`, box: `p50 ${msText(med('box/write16', (m) => m.p50))} ms (all 16)`, cluster: `p50 ${msText(group(g, (r) => r.p50))} ms, p99 ${msText(group(g, (r) => r.p99))} ms`, ratio: r.text, target: target === null ? '(reported)' : `≤ ${target}×`, met: target === null ? '' : r.ratio <= target ? 'yes' : '**no**' });
  }
  {
    const r = ratioOf('box/write16', 'cluster/write16', (m) => m.rps);
    rows.push({ figure: 'REST write throughput, 16 clients', box: `${Math.round(med('box/write16', (m) => m.rps)).toLocaleString('en')} writes/s`, cluster: `${Math.round(med('cluster/write16', (m) => m.rps)).toLocaleString('en')} writes/s`, ratio: `${r.text} (box / cluster)`, target: '(reported)', met: '' });
    rows.push({ figure: 'CPU per write, 16 clients (the box; the 3 nodes together)', box: `${Math.round(med('box/write16', (m) => m.cpuUs)).toLocaleString('en')} µs`, cluster: `${Math.round(med('cluster/write16', (m) => m.cpuUs)).toLocaleString('en')} µs`, ratio: `${fmt(med('cluster/write16', (m) => m.cpuUs) / med('box/write16', (m) => m.cpuUs))}×`, target: '(reported)', met: '' });
  }
  {
    const worst = (k: Key) => of(k)[0]!.loop.map((_, i) => Math.max(...of(k).map((m) => m.loop[i]!)));
    rows.push({ figure: 'largest event-loop delay in a server during the 16-client writes (any round)', box: `${msText(worst('box/write16')[0]!)} ms`, cluster: worst('cluster/write16').map((x, i) => `n${i + 1} ${msText(x)}`).join(', ') + ' ms', ratio: '', target: `(reported; down-after ${DOWN_AFTER_MS} ms)`, met: '' });
  }
  compare('`cat`, 1 connection, through another node (forwarded)', 'forwarded/read1', 'box/read1', TARGET.read);
  compare('`cat`, 1 connection, through the primary', 'direct/read1', 'box/read1', null);
  compare('`cat`, 16 connections, through another node (forwarded)', 'forwarded/read16', 'box/read16', TARGET.read, `, ${Math.round(med('forwarded/read16', (m) => m.rps)).toLocaleString('en')} req/s`);
  compare('`cat`, 16 connections, through the primary', 'direct/read16', 'box/read16', null, `, ${Math.round(med('direct/read16', (m) => m.rps)).toLocaleString('en')} req/s`);
  rows[rows.length - 2]!.box += `, ${Math.round(med('box/read16', (m) => m.rps)).toLocaleString('en')} req/s`;
  rows[rows.length - 1]!.box += `, ${Math.round(med('box/read16', (m) => m.rps)).toLocaleString('en')} req/s`;
  {
    const f = (r: FeedResult) => `p50 ${msText(pct(r.latencies, 0.5))} ms, p99 ${msText(pct(r.latencies, 0.99))} ms (${r.received} of ${r.commits} events${r.early ? `, ${r.early} before the answer` : ''})`;
    const p99 = pct(feedCluster!.latencies, 0.99);
    const met = feedCluster!.received === feedCluster!.commits && p99 < TARGET.feedP99;
    if (!met) misses++;
    rows.push({ figure: `feed: write answered → \`change\` event, SSE on n3, commits through n1 (n1 primary), ${FEED_RATE}/s`, box: f(feedBox!), cluster: f(feedCluster!), ratio: '', target: `p99 < ${TARGET.feedP99} ms`, met: met ? 'yes' : '**no**' });
    rows.push({ figure: '  the same commits seen at the same time on a stream on n1 (the primary)', box: '', cluster: f(feedPrimary!), ratio: '', target: '(reported)', met: '' });
    rows.push({ figure: '  an event on n3 after the same event on n1 (the way through n3)', box: '', cluster: `p50 ${msText(pct(through, 0.5))} ms, p99 ${msText(pct(through, 0.99))} ms`, ratio: '', target: '(reported)', met: '' });
  }
  rows.push({ figure: 'moving a project between nodes', box: '', cluster: 'see scripts/bench-cluster-move.ts (four nodes, a 10,000-file project)', ratio: '', target: '', met: '' });
  {
    const lost = Math.max(...[...fo.present.values()].map((n) => fo.acked - n));
    const gapMet = fo.gapMs < TARGET.gapMs;
    if (!gapMet) misses++;
    if (lost !== 0 || fo.acked === 0) misses++;
    const statuses = [...fo.statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${n}× ${s === 0 ? 'no answer' : s}`).join(', ');
    const kill = `SIGKILL of ${fo.victim} (the primary${fo.wasCoordinator ? ', and the coordinator' : ''}), ${KILL_RATE} writes/s through ${fo.via}`;
    rows.push({ figure: `failover, ${kill}: kill → first acknowledged write`, box: '', cluster: `${msText(fo.gapMs)} ms (marked down +${msText(fo.markedDownMs)} ms, new primary ${fo.newPrimary} at epoch ${fo.epoch} +${msText(fo.electedMs)} ms; last failure +${msText(fo.lastFailureMs)} ms)`, ratio: '', target: `< ${TARGET.gapMs / 1000} s`, met: gapMet ? 'yes' : '**no**' });
    rows.push({ figure: `failover: acknowledged writes read back through ${[...fo.present.keys()].join(' and ')}`, box: '', cluster: `${[...fo.present.values()].map((n) => `${n}`).join(' and ')} of ${fo.acked} (${fo.sent} sent: ${statuses})`, ratio: '', target: '0 lost', met: lost === 0 && fo.acked > 0 ? 'yes' : '**no**' });
    const before = transitions.filter((t) => !t.startsWith('failover'));
    rows.push({ figure: 'coordinator lease or node state changed before the kill (rows polled every 250 ms)', box: '', cluster: before.length ? `${before.length}×: ${before.join('; ')}` : 'never', ratio: '', target: '(reported)', met: '' });
    if (fo.leftoverProcesses) rows.push({ figure: `failover: processes of the killed node still running after it`, box: '', cluster: String(fo.leftoverProcesses), ratio: '', target: '', met: '' });
  }

  const cols: (keyof Row)[] = ['figure', 'box', 'cluster', 'ratio', 'target', 'met'];
  const titles: Row = { figure: 'figure', box: 'single box (SQLite)', cluster: 'cluster of 3 (PostgreSQL, R=3)', ratio: 'ratio cluster/box', target: 'target', met: 'met' };
  const width = Object.fromEntries(cols.map((c) => [c, Math.max(titles[c].length, ...rows.map((r) => r[c].length))])) as Record<keyof Row, number>;
  const line = (r: Row) => cols.map((c) => r[c].padEnd(width[c])).join(' | ');
  const la = (l: number[]) => l.map((x) => x.toFixed(2)).join(' / ');
  console.log(`\nissue 31: a cluster of three nodes against a single box, commit ${commit}, ${cpus().length} cores (shared by the load generator, 3 nodes, NATS and PostgreSQL)`);
  console.log(`heartbeat ${HEARTBEAT_MS} ms, down-after ${DOWN_AFTER_MS} ms, replicas ${REPLICAS} (quorum ${Math.floor(REPLICAS / 2) + 1}); ${ROUNDS} round(s), ${SECONDS} s per 16-client run, ${REQUESTS} writes / ${REQUESTS * 3} reads per 1-client run; median of the rounds`);
  console.log(`load average (1 / 5 / 15 min) ${la(startLoad)} at the start, ${la(endLoad)} at the end; ${fmt(minutes, 1)} min; idle nodes use ${idleShares.map((x, i) => `n${i + 1} ${fmt(x * 100, 1)}%`).join(', ')} of a core\n`);
  console.log(line(titles));
  console.log(cols.map((c) => '-'.repeat(width[c])).join('-|-'));
  for (const r of rows) console.log(line(r));
  console.log(`\n${misses === 0 ? 'every target met' : `${misses} target(s) NOT met`}`);
  console.log('\n---- table for docs/benchmarks.md ----\n');
  console.log(`| ${cols.map((c) => titles[c]).join(' | ')} |\n|${cols.map(() => '---').join('|')}|\n${rows.map((r) => `| ${cols.map((c) => r[c].replace(/\|/g, '\\|')).join(' | ')} |`).join('\n')}`);
}

main()
  .catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  })
  .finally(() => cleanup());
