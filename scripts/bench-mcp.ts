/**
 * Issue 13's MCP figures, against a server in its own process:
 *   1. `tools/call cat` over Streamable HTTP with initialized sessions at 8 concurrent clients
 *      (target p50 < 5 ms, p99 < 20 ms), next to `GET /content/{project}/cat` in the same run:
 *      once through the SDK's own client, once as raw HTTP requests (the same load generator
 *      as the REST baseline, so the ratio compares the servers, not the clients), with the
 *      server's CPU time per call (the load generator shares the machine's cores);
 *   2. 100 concurrent SDK clients each doing initialize + tools/list + 20 calls: no errors, and
 *      the server's memory after they disconnect within 20 MB of before. "Before" is taken at a
 *      steady state (after a warm-up round of the same load), every "after" once the server holds
 *      no client connection any more, twice (a leak would grow from one round to the next). The
 *      server reports its own figures (process.memoryUsage() over the inspector): first as they
 *      are, then after a full garbage collection, since V8 does not give back a grown heap by
 *      itself while the server idles (no collection at all in 70 s of idling, measured).
 * Run: node --import=tsx scripts/bench-mcp.ts [calls=4000]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort, Inspector } from './lib/inspector.ts';
import { fmt, runLoad, type RequestSpec } from './lib/load.ts';
import { api, benchProject, startBenchServer } from './lib/serverProcess.ts';

const CALLS = Number(process.argv[2] ?? 4000);
const CONCURRENCY = 8;
/** Calls before each measured block: the server's JIT reaches its steady state only after a few thousand (with 500, the SDK client's block was measured at ~1.7x the server CPU per call of a later one). */
const WARM_UP = 2000;
const CLIENTS = 100;
const CALLS_PER_CLIENT = 20;
const FILES = 500;
const work = mkdtempSync(join(tmpdir(), 'cns-bench-mcp-'));
const rows: string[][] = [];

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
/** CPU time (user + system) the process has used, in ms. */
const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks of 1/100 s
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
const fileAt = (i: number) => `docs/d${((i * 7919) % FILES) % 20}/f${(i * 7919) % FILES}.md`;

async function connect(url: string, key: string) {
  const client = new Client({ name: 'bench', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
  await client.connect(transport);
  return { client, transport };
}

/** One `tools/call cat`; an error result counts as a failure. */
async function cat(client: Client, i: number): Promise<void> {
  const r = await client.callTool({ name: 'cat', arguments: { path: fileAt(i) } });
  if (r.isError) throw new Error(`cat failed: ${JSON.stringify(r.content)}`);
}

async function figureOne(base: string, url: string, key: string, token: string, projectId: string, pid: number): Promise<void> {
  // Through the SDK client: 8 sessions, each calling as soon as its previous answer arrived.
  const clients = await Promise.all(Array.from({ length: CONCURRENCY }, () => connect(url, key)));
  let issued = 0;
  const drive = async (n: number, latencies?: number[]) => {
    issued = 0;
    await Promise.all(
      clients.map(async ({ client }) => {
        while (issued < n) {
          const i = issued++;
          const t0 = process.hrtime.bigint();
          await cat(client, i);
          latencies?.push(Number(process.hrtime.bigint() - t0) / 1e6);
        }
      }),
    );
  };
  await drive(WARM_UP);
  const latencies: number[] = [];
  const t0 = process.hrtime.bigint();
  const cpu0 = cpuMs(pid);
  await drive(CALLS, latencies);
  const sdkSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
  latencies.sort((a, b) => a - b);
  const sdk = { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), rps: CALLS / sdkSeconds, cpu: (cpuMs(pid) - cpu0) / CALLS };
  await Promise.all(clients.map(async ({ client, transport }) => { await transport.terminateSession(); await client.close(); }));

  // Raw HTTP, the same load generator as the REST baseline: 8 sessions initialized by hand.
  const sessions: string[] = [];
  for (let i = 0; i < CONCURRENCY; i++) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }),
    });
    await res.text();
    sessions.push(res.headers.get('mcp-session-id')!);
  }
  const path = new URL(url).pathname;
  const mcpRequest = (i: number) => ({
    method: 'POST',
    path,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sessions[i % CONCURRENCY]!,
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: i + 2, method: 'tools/call', params: { name: 'cat', arguments: { path: fileAt(i) } } }),
  });
  const restRequest = (i: number) => ({ method: 'GET', path: `/api/v1/content/${projectId}/cat?path=${encodeURIComponent(fileAt(i))}`, headers: { authorization: `Bearer ${token}` } });
  await runLoad(base, CONCURRENCY, WARM_UP, mcpRequest);
  await runLoad(base, CONCURRENCY, WARM_UP, restRequest);
  // Server CPU per request, in µs: what the server itself spends, whatever the load generator costs.
  const measured = async (spec: (i: number) => RequestSpec) => {
    const cpu0 = cpuMs(pid);
    const r = await runLoad(base, CONCURRENCY, CALLS, spec);
    return { ...r, cpu: (cpuMs(pid) - cpu0) / CALLS };
  };
  const raw = await measured(mcpRequest);
  const rest = await measured(restRequest);
  if (raw.errors + rest.errors > 0) throw new Error(`errors: mcp ${raw.errors}, rest ${rest.errors}`);
  const cpu = (ms: number) => `server CPU ${fmt(ms * 1000, 0)} µs each`;
  rows.push([`1. tools/call cat, SDK client, ${CONCURRENCY} sessions`, `${fmt(sdk.rps, 0)} calls/s`, `p50 ${fmt(sdk.p50)} ms, p99 ${fmt(sdk.p99)} ms; ${cpu(sdk.cpu)}`]);
  rows.push([`1. tools/call cat, raw HTTP, ${CONCURRENCY} sessions`, `${fmt(raw.rps, 0)} calls/s`, `p50 ${fmt(raw.p50)} ms, p99 ${fmt(raw.p99)} ms; ${cpu(raw.cpu)}`]);
  rows.push([`1. GET /content/…/cat, ${CONCURRENCY} connections (same run)`, `${fmt(rest.rps, 0)} req/s`, `p50 ${fmt(rest.p50)} ms, p99 ${fmt(rest.p99)} ms; ${cpu(rest.cpu)}`]);
  rows.push(['1. ratio MCP raw / REST (p50; throughput)', `${fmt(raw.p50 / rest.p50)}x; ${fmt(raw.rps / rest.rps)}x`, `SDK client p50 ${fmt(sdk.p50 / rest.p50)}x REST`]);
  for (const id of sessions) await fetch(url, { method: 'DELETE', headers: { authorization: `Bearer ${key}`, 'mcp-session-id': id, 'mcp-protocol-version': '2025-06-18' } });
}

/** 100 clients at once: initialize + list + 20 calls each, then end their sessions. */
async function round(url: string, key: string): Promise<{ errors: number; calls: number; seconds: number }> {
  let errors = 0;
  let calls = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      try {
        const { client, transport } = await connect(url, key);
        const { tools } = await client.listTools();
        if (!tools.some((t) => t.name === 'cat')) throw new Error('no cat tool');
        for (let i = 0; i < CALLS_PER_CLIENT; i++) {
          await cat(client, c * CALLS_PER_CLIENT + i);
          calls++;
        }
        await transport.terminateSession();
        await client.close();
      } catch (err) {
        errors++;
        console.error(`client ${c}:`, err);
      }
    }),
  );
  return { errors, calls, seconds: Number(process.hrtime.bigint() - t0) / 1e9 };
}

interface Memory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
}

/** The server's process.memoryUsage(), in MB. */
async function memoryOf(inspector: Inspector): Promise<Memory> {
  const m = await inspector.evaluate<Memory>('process.memoryUsage()');
  const mb = (n: number) => n / (1024 * 1024);
  return { rss: mb(m.rss), heapUsed: mb(m.heapUsed), heapTotal: mb(m.heapTotal), external: mb(m.external), arrayBuffers: mb(m.arrayBuffers) };
}

/**
 * Seconds until the server holds no client connection any more (the clients' keep-alive
 * connections close a few seconds after their last request): what "after they disconnect" means.
 */
async function disconnected(inspector: Inspector, deadlineMs = 30_000): Promise<number> {
  const started = Date.now();
  const sockets = () => inspector.evaluate<number>("process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length");
  while ((await sockets()) > 0) {
    if (Date.now() - started > deadlineMs) throw new Error(`the server still holds ${await sockets()} connections after ${deadlineMs} ms`);
    await sleep(200);
  }
  return (Date.now() - started) / 1000;
}

/** Memory as the server reports it once the clients are gone, then after a full collection. */
async function settled(inspector: Inspector): Promise<{ asIs: Memory; collected: Memory; wait: number }> {
  const wait = await disconnected(inspector);
  const asIs = await memoryOf(inspector);
  await inspector.send('HeapProfiler.collectGarbage');
  return { asIs, collected: await memoryOf(inspector), wait };
}

async function figureTwo(url: string, key: string, pid: number, inspector: Inspector): Promise<void> {
  const warmUp = await round(url, key);
  const before = await settled(inspector);
  const results = [];
  const after: Awaited<ReturnType<typeof settled>>[] = [];
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 50);
  for (let r = 0; r < 2; r++) {
    results.push(await round(url, key));
    after.push(await settled(inspector));
  }
  clearInterval(sampler);
  const errors = [warmUp, ...results].reduce((n, r) => n + r.errors, 0);
  const points = [before, ...after];
  const series = (pick: (m: { asIs: Memory; collected: Memory }) => number) => points.map((p) => fmt(pick(p), 1)).join(' / ');
  const growth = (pick: (m: { asIs: Memory; collected: Memory }) => number) => `after round 2 - before: ${fmt(pick(after[1]!) - pick(before), 1)} MB (target < 20)`;
  rows.push([
    `2. ${CLIENTS} clients x (initialize + list + ${CALLS_PER_CLIENT} calls), warm-up + 2 rounds`,
    `${errors} errors`,
    [warmUp, ...results].map((r) => `${r.calls} calls in ${fmt(r.seconds)} s`).join('; '),
  ]);
  rows.push(['2. clients gone (no server connection left) after, s', points.map((p) => fmt(p.wait, 1)).join(' / '), 'before / round 1 / round 2']);
  rows.push(['2. server RSS as is: before / after r1 / after r2', `${series((p) => p.asIs.rss)} MB`, `${growth((p) => p.asIs.rss)}; peak ${fmt(peak, 1)} MB`]);
  rows.push(['2. heap used / total as is: before / after r1 / after r2', `${series((p) => p.asIs.heapUsed)} MB`, `total ${series((p) => p.asIs.heapTotal)} MB`]);
  rows.push(['2. after a full GC: RSS before / after r1 / after r2', `${series((p) => p.collected.rss)} MB`, growth((p) => p.collected.rss)]);
  rows.push(['2. after a full GC: heap used before / after r1 / after r2', `${series((p) => p.collected.heapUsed)} MB`, growth((p) => p.collected.heapUsed)]);
  rows.push([
    '2. after a full GC: external (array buffers)',
    points.map((p) => `${fmt(p.collected.external, 1)} (${fmt(p.collected.arrayBuffers, 1)})`).join(' / ') + ' MB',
    `heap total ${series((p) => p.collected.heapTotal)} MB`,
  ]);
  if (errors > 0) throw new Error(`${errors} clients failed`);
}

const inspectPort = await freePort();
// The inspector is how the benchmark reads the server's own memory figures (figure 2); nothing attaches during figure 1.
const server = await startBenchServer(join(work, 'data'), {}, [`--inspect=127.0.0.1:${inspectPort}`]);
let inspector: Inspector | undefined;
try {
  const { token, projectId } = await benchProject(server.url);
  const files = Array.from({ length: FILES }, (_, i) => ({ path: `docs/d${i % 20}/f${i}.md`, content: `# file ${i}\n\n${'Some text. '.repeat(40)}\n`, node_type: 'markdown' }));
  await api(server.url, 'POST', `/content/${projectId}/bulk-write`, token, { files });
  const folder = await api(server.url, 'GET', `/content/${projectId}/stat?path=docs`, token);
  const created = await api(server.url, 'POST', '/mcp-endpoints', token, { name: 'bench', project_id: projectId, node_id: folder.id, mode: 'read' });
  const url: string = created.mcp_endpoint.server_url.replace(/^http:\/\/[^/]+/, server.url);
  rows.push(['load average at start (1, 5, 15 min)', loadavg().map((l) => fmt(l)).join(', '), `${process.platform}, node ${process.version}`]);
  await figureOne(server.url, url, created.key, token, projectId, server.child.pid!);
  inspector = await Inspector.open(inspectPort);
  await figureTwo(url, created.key, server.child.pid!, inspector);
  rows.push(['load average at end (1, 5, 15 min)', loadavg().map((l) => fmt(l)).join(', '), '']);
} finally {
  await inspector?.close();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
  const width = Math.max(...rows.map((r) => r[0]!.length));
  for (const r of rows) console.log(`${r[0]!.padEnd(width)}  ${r[1]!.padEnd(28)}  ${r[2]}`);
}
