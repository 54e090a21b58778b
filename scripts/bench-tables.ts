/**
 * Issue 18, figure 3: PUT /tables/{id}/data at a pointer in a 5 MiB table, p50 < 30 ms (one
 * connection: the service time of a change, each one a version of the table's node). Compared with
 * GET /healthz in the same run; GET of one member and a whole-node write through the content
 * API are shown for scale.
 * Run: node --import=tsx scripts/bench-tables.ts [changes=200] [--profile]
 *   --profile profiles the server's CPU (V8's profiler, started by a preloaded module, since
 *   NODE_OPTIONS may not carry --cpu-prof) and prints where its time went during the run.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, runLoad } from './lib/load.ts';
import { api, benchProject, startBenchServer } from './lib/serverProcess.ts';

const args = process.argv.slice(2);
const CHANGES = Number(args.find((a) => /^\d+$/.test(a)) ?? 200);
const PROFILE = args.includes('--profile');
const TABLE_BYTES = 5 * 1024 * 1024;
const work = mkdtempSync(join(tmpdir(), 'cns-bench-tables-'));
const profileDir = join(work, 'profile');
const rows: string[][] = [];

/** Rows of a customer table until its stored form (2-space JSON, as the content store writes it) reaches 5 MiB. */
function tableData(): { rows: Record<string, unknown>[] } {
  const data = { rows: [] as Record<string, unknown>[] };
  for (let i = 0; ; i++) {
    if (i % 500 === 0 && Buffer.byteLength(JSON.stringify(data, null, 2)) + 1 >= TABLE_BYTES) return data;
    data.rows.push({ id: i, name: `customer ${i}`, email: `customer${i}@example.com`, score: (i * 7) % 1000, tags: ['retail', i % 3 ? 'eu' : 'us'], active: i % 2 === 0 });
  }
}

/** A module that profiles the process it is preloaded into and writes the profile when it exits. */
function profilerPreload(): string {
  mkdirSync(profileDir, { recursive: true });
  const file = join(work, 'cpu-profile.mjs');
  writeFileSync(
    file,
    `import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';
const session = new Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: 200 });
session.post('Profiler.start');
// An in-process session answers synchronously, so the profile is written before the process ends.
process.on('exit', () => session.post('Profiler.stop', (err, r) => { if (!err) writeFileSync(${JSON.stringify(join(profileDir, 'server.cpuprofile'))}, JSON.stringify(r.profile)); }));
`,
  );
  return file;
}

/** Self time by function of a V8 CPU profile, largest first; a native frame (no script) is named with its caller. */
function topSelfTime(file: string, n: number): string[][] {
  type Frame = { functionName: string; url: string; lineNumber: number };
  const prof = JSON.parse(readFileSync(file, 'utf8')) as { nodes: { id: number; callFrame: Frame; children?: number[] }[]; samples: number[]; timeDeltas: number[] };
  const byId = new Map(prof.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of prof.nodes) for (const c of node.children ?? []) parent.set(c, node.id);
  const name = (f: Frame) => `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(src|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
  const self = new Map<string, number>();
  let total = 0;
  prof.samples.forEach((id, i) => {
    const f = byId.get(id)!.callFrame;
    const caller = parent.get(id);
    const key = f.url === '' && caller !== undefined ? `${name(f)} <- ${name(byId.get(caller)!.callFrame)}` : name(f);
    const dt = prof.timeDeltas[i] ?? 0;
    self.set(key, (self.get(key) ?? 0) + dt);
    total += dt;
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, us]) => [k, `${fmt(us / 1000, 0)} ms`, `${fmt((100 * us) / total, 1)} %`]);
}

try {
  const env: Record<string, string> = PROFILE ? { NODE_OPTIONS: `--import=${profilerPreload()}` } : {};
  const server = await startBenchServer(join(work, 'data'), env);
  try {
    const { token, projectId } = await benchProject(server.url);
    const data = tableData();
    const table = await api(server.url, 'POST', '/tables/', token, { project_id: projectId, name: 'customers', data });
    const node = await api(server.url, 'GET', `/nodes/${table.node_id}?project_id=${projectId}`, token);
    rows.push([`set-up: table of ${data.rows.length} rows`, `${fmt(node.size / 1024 / 1024, 2)} MiB stored`, '']);

    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const change = (i: number) => ({
      method: 'PUT',
      path: `/api/v1/tables/${table.id}/data`,
      headers,
      body: JSON.stringify({ path: `/rows/${(i * 7919) % data.rows.length}/score`, value: 1000 + i }),
    });
    await runLoad(server.url, 1, 20, (i) => change(CHANGES + i)); // warm-up
    const trivial = await runLoad(server.url, 1, 2000, () => ({ method: 'GET', path: '/healthz' }));
    rows.push(['baseline: GET /healthz, 1 connection', `${fmt(trivial.rps, 0)} req/s`, `p50 ${fmt(trivial.p50)} ms, p99 ${fmt(trivial.p99)} ms`]);
    const puts = await runLoad(server.url, 1, CHANGES, change);
    if (puts.errors) throw new Error(`${puts.errors} table changes failed`);
    rows.push([`3. PUT /tables/{id}/data at a pointer, 5 MiB table, 1 connection (${CHANGES} changes)`, `${fmt(puts.rps, 1)} req/s`, `p50 ${fmt(puts.p50)} ms, p99 ${fmt(puts.p99)} ms (target p50 < 30 ms)`]);
    const reads = await runLoad(server.url, 1, 500, (i) => ({ method: 'GET', path: `/api/v1/tables/${table.id}/data?path=/rows/${i % data.rows.length}`, headers }));
    rows.push(['GET /tables/{id}/data of one row, 1 connection', `${fmt(reads.rps, 0)} req/s`, `p50 ${fmt(reads.p50)} ms, p99 ${fmt(reads.p99)} ms`]);
    // Scale: the same 5 MiB written whole through the content API (client sends and server parses 5 MiB).
    // Left out of a profiled run, whose profile is then the table changes'.
    if (!PROFILE) {
      const whole = JSON.stringify({ content: data });
      const wholeWrites = await runLoad(server.url, 1, 10, () => ({ method: 'PUT', path: `/api/v1/nodes/${table.node_id}`, headers, body: whole }));
      rows.push(['PUT /nodes/{id} of the whole 5 MiB document, 1 connection', `${fmt(wholeWrites.rps, 1)} req/s`, `p50 ${fmt(wholeWrites.p50)} ms`]);
    }

    const versions = await api(server.url, 'GET', `/nodes/${table.node_id}/versions?limit=1`, token);
    // Creation, warm-up, the run, and the first whole write (the others change nothing).
    const expected = 1 + 20 + CHANGES + (PROFILE ? 0 : 1);
    if (versions.versions[0].version !== expected) throw new Error(`expected version ${expected}, the node is at ${versions.versions[0].version}`);
    rows.push([`check: one version per change`, `node at version ${versions.versions[0].version}`, '']);
  } finally {
    await server.stop();
  }
  const width = Math.max(...rows.map((r) => r[0]!.length));
  console.log(`\nfigure${' '.repeat(width - 6)} | value | latency`);
  for (const [name, value, extra] of rows) console.log(`${name!.padEnd(width)} | ${value} | ${extra}`);
  if (PROFILE) {
    const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
    if (!file) throw new Error('the server wrote no CPU profile');
    console.log('\nserver CPU, self time by function (whole run, set-up included):');
    for (const [name, t, pct] of topSelfTime(join(profileDir, file), 20)) console.log(`${t.padStart(8)} ${pct.padStart(7)}  ${name}`);
    console.log(`(${CHANGES + 20} table changes in the run: divide a line by it for its cost per change)`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
