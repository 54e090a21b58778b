/**
 * Issue 33, the webhook figure. One `cns serve` process (loopback receivers allowed, as an
 * operator would for a local receiver: CNS_URL_FETCH_ALLOW_PRIVATE) with HOOKS webhooks, all
 * pointing at one receiver in this process.
 *
 * 1. Latency: RATE writes/s (open loop, each a new file) for SECONDS; for every write and every
 *    hook, the time from the write's acknowledgement (its HTTP answer arrived) to the delivery
 *    arriving at the receiver. Figure: p50 < 100 ms, p99 < 500 ms.
 * 2. Outage: the receiver stops listening (connections refused) for DOWN seconds while writes go
 *    on at RATE/s, then listens again on the same port. Every write must reach every hook, in
 *    commit order per hook; duplicates are counted (a refused connection delivers nothing, so
 *    none are expected; an answer lost after the receiver got the body would explain one).
 *
 * Run: node --import=tsx scripts/bench-webhooks.ts [seconds=60] [down=60] [rate=50] [hooks=5]
 * (a small check: ... 5 5 20 2). Retries back off from CNS_WEBHOOK_BACKOFF_MS=200 up to
 * CNS_WEBHOOK_BACKOFF_MAX_MS=2000 here, so the drain after the outage starts within 2 s of the
 * receiver's return (the service's defaults are 1 s up to 1 h).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, benchProject, startBenchServer } from './lib/serverProcess.ts';

const SECONDS = Number(process.argv[2] ?? 60);
const DOWN = Number(process.argv[3] ?? 60);
const RATE = Number(process.argv[4] ?? 50);
const HOOKS = Number(process.argv[5] ?? 5);

interface Arrival {
  hook: string;
  path: string;
  version: number;
  delivery: string;
  at: number;
}

/** The receiver: records each delivery's first path, hook (by its url path) and arrival time. */
class Receiver {
  readonly arrivals: Arrival[] = [];
  private server: Server | null = null;
  port = 0;

  async listen(port = 0): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const at = performance.now();
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { paths: { path: string; node_type: string }[]; commit: { project_version: number } };
        const file = body.paths.find((p) => p.node_type !== 'folder') ?? body.paths[0]!;
        this.arrivals.push({ hook: req.url!.slice(1), path: file.path, version: body.commit.project_version, delivery: String(req.headers['x-cns-delivery']), at });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    const s = this.server!;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** Writes `count` new files at `rate`/s without waiting for one to finish before the next is due; resolves with each path's ack time. */
async function writeAt(url: string, token: string, projectId: string, prefix: string, count: number, rate: number): Promise<Map<string, number>> {
  const acks = new Map<string, number>();
  const start = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const path = `${prefix}/f${i}.md`;
    inFlight.push(
      api(url, 'POST', `/content/${projectId}/write`, token, { path, content: `# ${i}\n`, node_type: 'markdown' }).then(() => void acks.set(path, performance.now())),
    );
  }
  await Promise.all(inFlight);
  return acks;
}

/** Deliveries that needed more than one attempt, and why (the delivery log). */
async function retriesOf(url: string, token: string, projectId: string, hooks: string[], phase: string): Promise<void> {
  let retried = 0;
  const errors = new Map<string, number>();
  for (const id of hooks) {
    for (let offset = 0; ; offset += 200) {
      const page = await api(url, 'GET', `/projects/${projectId}/webhooks/${id}/deliveries?limit=200&offset=${offset}`, token);
      for (const d of page.deliveries as { attempts: number; error: string | null }[]) {
        if (d.attempts > 1) {
          retried++;
          errors.set(d.error ?? 'delivered at last', (errors.get(d.error ?? 'delivered at last') ?? 0) + 1);
        }
      }
      if (offset + 200 >= page.total) break;
    }
  }
  console.log(`  ${phase}: deliveries attempted more than once: ${retried}${retried ? ` (${[...errors].map(([e, n]) => `${n}× ${e}`).join('; ')})` : ''}`);
}

async function until(what: string, check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const work = mkdtempSync(join(tmpdir(), 'cns-bench-webhooks-'));
const receiver = new Receiver();
await receiver.listen();
const server = await startBenchServer(join(work, 'data'), {
  CNS_URL_FETCH_ALLOW_PRIVATE: 'true',
  CNS_WEBHOOK_BACKOFF_MS: '200',
  CNS_WEBHOOK_BACKOFF_MAX_MS: '2000',
});
try {
  const { token, projectId } = await benchProject(server.url);
  // The folders exist first, so each measured write is one file in one commit.
  for (const dir of ['live', 'outage']) await api(server.url, 'POST', `/content/${projectId}/mkdir`, token, { path: dir });
  const hooks: string[] = [];
  for (let h = 0; h < HOOKS; h++) {
    const hook = await api(server.url, 'POST', `/projects/${projectId}/webhooks`, token, {
      url: `http://127.0.0.1:${receiver.port}/h${h}`,
      events: ['content.created', 'content.updated', 'content.deleted', 'content.moved'],
    });
    hooks.push(hook.id);
  }

  // 1. Latency under RATE writes/s.
  const liveCount = Math.round(SECONDS * RATE);
  const acks = await writeAt(server.url, token, projectId, 'live', liveCount, RATE);
  const live = () => receiver.arrivals.filter((a) => a.path.startsWith('live/'));
  await until('every live delivery', () => new Set(live().map((a) => `${a.hook} ${a.path}`)).size >= liveCount * HOOKS, 120_000);
  const latencies = live()
    .map((a) => a.at - acks.get(a.path)!)
    .sort((a, b) => a - b);
  const early = latencies.filter((l) => l < 0).length;
  console.log(`latency: ${liveCount} writes at ${RATE}/s, ${HOOKS} hooks, ${latencies.length} deliveries`);
  console.log(`  write ack -> delivery: p50 ${pct(latencies, 50).toFixed(1)} ms, p99 ${pct(latencies, 99).toFixed(1)} ms, max ${latencies.at(-1)!.toFixed(1)} ms (target p50 < 100, p99 < 500)`);
  if (early > 0) console.log(`  ${early} deliveries arrived before their write's answer did (counted as negative latencies)`);
  await retriesOf(server.url, token, projectId, hooks, 'live');
  if (process.env.BENCH_SLOWEST) {
    const slow = live().map((a) => ({ path: a.path, hook: a.hook, ms: a.at - acks.get(a.path)! })).sort((a, b) => b.ms - a.ms).slice(0, Number(process.env.BENCH_SLOWEST));
    console.log(`  slowest: ${slow.map((x) => `${x.path}@${x.hook} ${x.ms.toFixed(0)} ms`).join(', ')}`);
  }

  // 2. The receiver is down for DOWN seconds while writes go on, then returns.
  const port = receiver.port;
  await receiver.close();
  const downAt = performance.now();
  const outageCount = Math.round(DOWN * RATE);
  await writeAt(server.url, token, projectId, 'outage', outageCount, RATE);
  const wait = DOWN * 1000 - (performance.now() - downAt);
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  await receiver.listen(port);
  const backAt = performance.now();
  const outage = () => receiver.arrivals.filter((a) => a.path.startsWith('outage/'));
  await until('every delivery after the outage', () => new Set(outage().map((a) => `${a.hook} ${a.path}`)).size >= outageCount * HOOKS, 600_000);
  const drained = performance.now() - backAt;
  let outOfOrder = 0;
  let duplicates = 0;
  for (let h = 0; h < HOOKS; h++) {
    const mine = receiver.arrivals.filter((a) => a.hook === `h${h}`);
    const seen = new Set<string>();
    let last = 0;
    for (const a of mine) {
      if (seen.has(a.delivery)) duplicates++;
      else if (a.version < last) outOfOrder++;
      seen.add(a.delivery);
      last = Math.max(last, a.version);
    }
  }
  const missing = outageCount * HOOKS - new Set(outage().map((a) => `${a.hook} ${a.path}`)).size;
  console.log(`outage: receiver down ${DOWN} s while ${outageCount} writes went on; back after ${((backAt - downAt) / 1000).toFixed(1)} s`);
  console.log(`  every delivery arrived: ${missing === 0 ? 'yes' : `no (${missing} missing)`}; drained ${(drained / 1000).toFixed(1)} s after the return`);
  console.log(`  out of commit order: ${outOfOrder}; duplicates (same delivery id twice): ${duplicates}`);
  const statuses = await Promise.all(hooks.map((id) => api(server.url, 'GET', `/projects/${projectId}/webhooks/${id}`, token)));
  console.log(`  hooks: ${statuses.map((s) => `${s.id} ${s.state}, ${s.pending_deliveries} pending`).join('; ')}`);
} finally {
  await server.stop();
  await receiver.close().catch(() => undefined);
  rmSync(work, { recursive: true, force: true });
}
