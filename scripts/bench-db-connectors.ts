/**
 * Issue 18's database-connector figure (figure 2), against a server in its own process and the
 * PostgreSQL of this machine:
 *   - preview of the first 100 rows of a 1,000,000-row table: < 100 ms;
 *   - save of 100,000 rows to JSON: < 5 s, with the server's peak resident memory growing by
 *     < 200 MiB (VmRSS of /proc/<pid>/status sampled every 10 ms); CSV and Markdown alongside.
 * The table is created once by this script with generate_series and dropped at the end.
 * Run only on a quiet machine (load average < 1.5; `--force` runs anyway):
 *   node --import=tsx scripts/bench-db-connectors.ts [--force]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { api, benchProject, startBenchServer } from './lib/serverProcess.ts';

const PG = { host: '127.0.0.1', port: 5432, database: 'test', user: 'postgres' };
const TABLE_ROWS = 1_000_000;
const SAVE_ROWS = 100_000;
const PREVIEWS = 20;

const load = loadavg()[0]!;
if (load >= 1.5 && !process.argv.includes('--force')) {
  console.error(`load average ${load.toFixed(2)} >= 1.5: not a quiet machine; try later (or --force)`);
  process.exit(2);
}

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;

/** Runs `work` while sampling the process's RSS; answers the time it took and the peak RSS seen. */
async function sampled<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; ms: number; peakMb: number }> {
  let peakMb = rssMb(pid);
  const timer = setInterval(() => {
    peakMb = Math.max(peakMb, rssMb(pid));
  }, 10);
  const t0 = performance.now();
  try {
    const result = await work();
    return { result, ms: performance.now() - t0, peakMb: Math.max(peakMb, rssMb(pid)) };
  } finally {
    clearInterval(timer);
  }
}

const table = `cns_bench_${Date.now().toString(36)}`;
const admin = new pg.Client(PG);
await admin.connect();
const work = mkdtempSync(join(tmpdir(), 'cns-bench-db-'));
let stop: (() => Promise<void>) | null = null;
try {
  let t0 = performance.now();
  await admin.query(`CREATE TABLE ${table} AS
    SELECT g AS id, 'customer ' || g AS name, (g * 0.37)::numeric(12,2) AS amount,
           timestamptz '2024-01-01' + g * interval '1 minute' AS created_at, g % 7 = 0 AS flagged,
           md5(g::text) AS token
      FROM generate_series(1, ${TABLE_ROWS}) g`);
  await admin.query(`ALTER TABLE ${table} ADD PRIMARY KEY (id)`);
  await admin.query(`ANALYZE ${table}`);
  console.log(`table ${table}: ${TABLE_ROWS} rows created in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  // 64 MiB nodes: 100,000 rows of this table are about 20 MiB as JSON, above the 10 MiB default.
  const server = await startBenchServer(work, { CNS_DB_ALLOW_LOOPBACK: 'true', CNS_MAX_CONTENT_BYTES: String(64 * 1024 * 1024) });
  stop = server.stop;
  const pid = server.child.pid!;
  const { token, projectId } = await benchProject(server.url);
  const conn = await api(server.url, 'POST', '/db-connector/connections/', token, { project_id: projectId, name: 'bench', engine: 'postgres', ...PG });
  const base = `/db-connector/connections/${conn.id}`;

  // Preview: the first 100 rows, each request a new session (connect, catalog lookup, SELECT … LIMIT).
  await api(server.url, 'GET', `${base}/tables/public.${table}/preview?limit=100`, token);
  const previews: number[] = [];
  for (let i = 0; i < PREVIEWS; i++) {
    t0 = performance.now();
    const p = await api(server.url, 'GET', `${base}/tables/public.${table}/preview?limit=100`, token);
    previews.push(performance.now() - t0);
    if (p.row_count !== 100 || !p.truncated) throw new Error(`preview answered ${p.row_count} rows`);
  }
  previews.sort((a, b) => a - b);
  const previewP50 = percentile(previews, 0.5);
  const previewMax = previews.at(-1)!;
  console.log(`preview 100 rows of ${TABLE_ROWS}: p50 ${previewP50.toFixed(1)} ms, max ${previewMax.toFixed(1)} ms over ${PREVIEWS} (target < 100 ms)`);

  // A small save first, so that the figures measure the save and not the first use of its code.
  await api(server.url, 'POST', `${base}/save`, token, { table, path: 'warm/w.json', format: 'json', limit: 1000 });
  const results: Record<string, { ms: number; growthMb: number; bytes: number }> = {};
  for (const format of ['json', 'csv', 'markdown'] as const) {
    const before = rssMb(pid);
    const { result, ms, peakMb } = await sampled(pid, () => api(server.url, 'POST', `${base}/save`, token, { table, path: `exports/customers.${format === 'markdown' ? 'md' : format}`, format, limit: SAVE_ROWS }));
    if (result.rows !== SAVE_ROWS || !result.truncated) throw new Error(`save answered ${JSON.stringify(result)}`);
    results[format] = { ms, growthMb: peakMb - before, bytes: result.bytes };
    console.log(
      `save ${SAVE_ROWS} rows as ${format}: ${(ms / 1000).toFixed(2)} s, ${(result.bytes / 1024 / 1024).toFixed(1)} MiB, ` +
        `server RSS ${before.toFixed(0)} -> peak ${peakMb.toFixed(0)} MiB (growth ${(peakMb - before).toFixed(0)} MiB)`,
    );
  }
  const json = results.json!;
  const pass = previewMax < 100 && json.ms < 5000 && json.growthMb < 200;
  console.log(
    `figure 2: preview max ${previewMax.toFixed(1)} ms (< 100), JSON save ${(json.ms / 1000).toFixed(2)} s (< 5), RSS growth ${json.growthMb.toFixed(0)} MiB (< 200): ${pass ? 'PASS' : 'FAIL'}`,
  );
  if (!pass) process.exitCode = 1;
} finally {
  await stop?.();
  await admin.query(`DROP TABLE IF EXISTS ${table}`);
  await admin.end();
  rmSync(work, { recursive: true, force: true });
  console.log(`table ${table} dropped`);
}
