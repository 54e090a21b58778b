/**
 * Issue 31's read figure asks a forwarded `cat` to cost at most 1.3× a direct one. This measures
 * what any HTTP hop through Node costs on this machine, whatever the service does: one box
 * (`cns serve`, CNS_WORKERS=1, SQLite) read directly, through a bare Node proxy
 * (scripts/lib/bareProxy.mjs: no routing, checks or logging; its own process, as a forwarding node
 * is), and, for comparison, the same `cat` as bench-cluster.ts sends. 1 keep-alive connection,
 * --requests per run, direct and proxied alternating in each of --rounds rounds; a ratio is the
 * median of the rounds' ratios (the machine is shared and noisy).
 *
 *   node --import=tsx scripts/bench-hop-floor.ts [--rounds 5] [--requests 3000]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from './lib/inspector.ts';
import { runLoad } from './lib/load.ts';
import { api, benchProject, startBenchServer } from './lib/serverProcess.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, requests: { type: 'string', default: '3000' } } });
const ROUNDS = Number(values.rounds);
const REQUESTS = Number(values.requests);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dir = mkdtempSync(join(tmpdir(), 'cns-hop-'));
const box = await startBenchServer(dir, { CNS_WORKERS: '1' });
const proxyPort = await freePort();
const proxy = spawn(process.execPath, [fileURLToPath(new URL('./lib/bareProxy.mjs', import.meta.url)), String(proxyPort), new URL(box.url).port], { stdio: ['ignore', 'pipe', 'inherit'] });
try {
  await new Promise((resolve, reject) => {
    proxy.stdout!.once('data', resolve);
    proxy.once('exit', (code) => reject(new Error(`the proxy exited (${code})`)));
  });
  const { token, projectId } = await benchProject(box.url);
  await api(box.url, 'POST', `/content/${projectId}/write`, token, { path: 'small.md', content: 'hello world' });
  const cat = { method: 'GET', path: `/api/v1/content/${projectId}/cat?path=small.md`, headers: { authorization: `Bearer ${token}` } };
  const targets = { direct: box.url, proxied: `http://127.0.0.1:${proxyPort}` };
  console.log(`load average at the start ${loadavg().map((l) => l.toFixed(1)).join(' / ')}`);
  const ratios: number[] = [];
  const p50s: Record<string, number[]> = { direct: [], proxied: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const line: string[] = [];
    for (const [name, url] of Object.entries(targets)) {
      await runLoad(url, 1, 200, () => cat);
      const r = await runLoad(url, 1, REQUESTS, () => cat);
      if (r.errors > 0) throw new Error(`${name}: ${r.errors} errors`);
      p50s[name]!.push(r.p50);
      line.push(`${name} p50 ${r.p50.toFixed(3)} ms, p99 ${r.p99.toFixed(2)} ms`);
    }
    ratios.push(p50s.proxied!.at(-1)! / p50s.direct!.at(-1)!);
    console.log(`round ${round + 1}: ${line.join('; ')}; ratio ${ratios.at(-1)!.toFixed(2)}×`);
  }
  console.log(`median: direct p50 ${median(p50s.direct!).toFixed(3)} ms, through a bare proxy ${median(p50s.proxied!).toFixed(3)} ms, ratio ${median(ratios).toFixed(2)}× (rounds ${ratios.map((r) => r.toFixed(2)).join(', ')})`);
  console.log(`load average at the end ${loadavg().map((l) => l.toFixed(1)).join(' / ')}`);
} finally {
  proxy.kill();
  await box.stop();
  rmSync(dir, { recursive: true, force: true });
}
