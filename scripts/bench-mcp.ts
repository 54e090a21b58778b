/**
 * Issue 13's MCP figures, against a server in its own process:
 *   1. `tools/call cat` over Streamable HTTP with initialized sessions at 8 concurrent clients
 *      (target p50 < 5 ms, p99 < 20 ms), next to `GET /content/{project}/cat` in the same run:
 *      once through the SDK's own client, once as raw HTTP requests (the same load generator
 *      as the REST baseline, so the ratio compares the servers, not the clients);
 *   2. 100 concurrent SDK clients each doing initialize + tools/list + 20 calls: no errors, and
 *      the server's resident memory after they disconnect within 20 MB of before (twice, so that
 *      a leak would show as growth from one round to the next).
 * Run: node --import=tsx scripts/bench-mcp.ts [calls=4000]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { fmt, runLoad } from './lib/load.ts';
import { api, benchProject, startBenchServer } from './lib/serverProcess.ts';

const CALLS = Number(process.argv[2] ?? 4000);
const CONCURRENCY = 8;
const CLIENTS = 100;
const CALLS_PER_CLIENT = 20;
const FILES = 500;
const work = mkdtempSync(join(tmpdir(), 'cns-bench-mcp-'));
const rows: string[][] = [];

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
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

async function figureOne(base: string, url: string, key: string, token: string, projectId: string): Promise<void> {
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
  await drive(500); // warm-up
  const latencies: number[] = [];
  const t0 = process.hrtime.bigint();
  await drive(CALLS, latencies);
  const sdkSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
  latencies.sort((a, b) => a - b);
  const sdk = { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), rps: CALLS / sdkSeconds };
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
  await runLoad(base, CONCURRENCY, 500, mcpRequest);
  await runLoad(base, CONCURRENCY, 500, restRequest);
  const raw = await runLoad(base, CONCURRENCY, CALLS, mcpRequest);
  const rest = await runLoad(base, CONCURRENCY, CALLS, restRequest);
  if (raw.errors + rest.errors > 0) throw new Error(`errors: mcp ${raw.errors}, rest ${rest.errors}`);
  rows.push([`1. tools/call cat, SDK client, ${CONCURRENCY} sessions`, `${fmt(sdk.rps, 0)} calls/s`, `p50 ${fmt(sdk.p50)} ms, p99 ${fmt(sdk.p99)} ms`]);
  rows.push([`1. tools/call cat, raw HTTP, ${CONCURRENCY} sessions`, `${fmt(raw.rps, 0)} calls/s`, `p50 ${fmt(raw.p50)} ms, p99 ${fmt(raw.p99)} ms`]);
  rows.push([`1. GET /content/…/cat, ${CONCURRENCY} connections (same run)`, `${fmt(rest.rps, 0)} req/s`, `p50 ${fmt(rest.p50)} ms, p99 ${fmt(rest.p99)} ms`]);
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

/** Resident memory once it has settled: the lowest of a few samples after the load (allocators give pages back lazily). */
async function settledRss(pid: number): Promise<number> {
  let low = Infinity;
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setTimeout(r, 500));
    low = Math.min(low, rssMb(pid));
  }
  return low;
}

async function figureTwo(url: string, key: string, pid: number): Promise<void> {
  const before = await settledRss(pid);
  const results = [];
  const after: number[] = [];
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 50);
  for (let r = 0; r < 2; r++) {
    results.push(await round(url, key));
    after.push(await settledRss(pid));
  }
  clearInterval(sampler);
  const errors = results.reduce((n, r) => n + r.errors, 0);
  rows.push([`2. ${CLIENTS} clients x (initialize + list + ${CALLS_PER_CLIENT} calls), 2 rounds`, `${errors} errors`, results.map((r) => `${r.calls} calls in ${fmt(r.seconds)} s`).join('; ')]);
  rows.push(['2. server RSS before / peak / after round 1 / after round 2', `${fmt(before, 1)} / ${fmt(peak, 1)} / ${fmt(after[0]!, 1)} / ${fmt(after[1]!, 1)} MB`, `after - before: ${fmt(after[1]! - before, 1)} MB (target < 20)`]);
  if (errors > 0) throw new Error(`${errors} clients failed`);
}

const server = await startBenchServer(join(work, 'data'));
try {
  const { token, projectId } = await benchProject(server.url);
  const files = Array.from({ length: FILES }, (_, i) => ({ path: `docs/d${i % 20}/f${i}.md`, content: `# file ${i}\n\n${'Some text. '.repeat(40)}\n`, node_type: 'markdown' }));
  await api(server.url, 'POST', `/content/${projectId}/bulk-write`, token, { files });
  const folder = await api(server.url, 'GET', `/content/${projectId}/stat?path=docs`, token);
  const created = await api(server.url, 'POST', '/mcp-endpoints', token, { name: 'bench', project_id: projectId, node_id: folder.id, mode: 'read' });
  const url: string = created.mcp_endpoint.server_url.replace(/^http:\/\/[^/]+/, server.url);
  rows.push(['load average at start (1, 5, 15 min)', loadavg().map((l) => fmt(l)).join(', '), `${process.platform}, node ${process.version}`]);
  await figureOne(server.url, url, created.key, token, projectId);
  await figureTwo(url, created.key, server.child.pid!);
  rows.push(['load average at end (1, 5, 15 min)', loadavg().map((l) => fmt(l)).join(', '), '']);
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
  const width = Math.max(...rows.map((r) => r[0]!.length));
  for (const r of rows) console.log(`${r[0]!.padEnd(width)}  ${r[1]!.padEnd(28)}  ${r[2]}`);
}
