/**
 * Issue 34, blame figure: a 10,000-line Markdown file with 1,000 versions (each changes 5 lines
 * somewhere), written through the REST API of one `cns serve` process. Measured in one run:
 * - cold: the first blame after a restart (nothing cached: git blame walks the 1,000 versions);
 * - warm: the same blame again (cached per version);
 * - after a write: a new version, then its blame (the previous version's blame and one diff);
 * - cat of the same file at 1 connection, the baseline of the same run.
 * The figure: blame of the file answers in < 500 ms.
 *
 * Run: node --import=tsx scripts/bench-blame.ts [lines=10000] [versions=1000] [rounds=3]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, benchProject, startBenchServer, type BenchServer } from './lib/serverProcess.ts';

const LINES = Number(process.argv[2] ?? 10_000);
const VERSIONS = Number(process.argv[3] ?? 1_000);
const ROUNDS = Number(process.argv[4] ?? 3);
const PATH = 'docs/big.md';

let seed = 42;
const random = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed % n;
};

const work = mkdtempSync(join(tmpdir(), 'cns-bench-blame-'));
const dataDir = join(work, 'data');
let server: BenchServer = await startBenchServer(dataDir);
try {
  const { token, projectId } = await benchProject(server.url);
  const lines = Array.from({ length: LINES }, (_, i) => `line ${i}: the quick brown fox jumps over the lazy dog`);
  const t0 = performance.now();
  for (let v = 1; v <= VERSIONS; v++) {
    if (v > 1) for (let k = 0; k < 5; k++) lines[random(LINES)] = `changed in version ${v} (${k})`;
    await api(server.url, 'POST', `/content/${projectId}/write`, token, { path: PATH, node_type: 'markdown', content: lines.join('\n') + '\n', message: `v${v}` });
  }
  console.log(`wrote ${VERSIONS} versions of a ${LINES}-line file in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const timed = async (path: string, tok: string): Promise<number> => {
    const s = performance.now();
    await api(server.url, 'GET', path, tok);
    return performance.now() - s;
  };
  const blamePath = `/content/${projectId}/blame?path=${encodeURIComponent(PATH)}`;
  const catPath = `/content/${projectId}/cat?path=${encodeURIComponent(PATH)}`;
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const cold: number[] = [];
  const warm: number[] = [];
  const afterWrite: number[] = [];
  const cat: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    // A fresh process: nothing cached.
    await server.stop();
    server = await startBenchServer(dataDir);
    const login = await api(server.url, 'POST', '/auth/login', null, { email: 'bench@example.com', password: 'bench-password' });
    const tok = login.access_token as string;
    for (let i = 0; i < 5; i++) cat.push(await timed(catPath, tok));
    cold.push(await timed(blamePath, tok));
    for (let i = 0; i < 10; i++) warm.push(await timed(blamePath, tok));
    for (let i = 0; i < 5; i++) {
      lines[random(LINES)] = `changed after the history, round ${round} (${i})`;
      await api(server.url, 'POST', `/content/${projectId}/write`, tok, { path: PATH, node_type: 'markdown', content: lines.join('\n') + '\n', message: 'one more' });
      afterWrite.push(await timed(blamePath, tok));
    }
    console.log(`round ${round}: cold ${cold.at(-1)!.toFixed(0)} ms, warm p50 ${median(warm.slice(-10)).toFixed(1)} ms, after a write p50 ${median(afterWrite.slice(-5)).toFixed(1)} ms, cat p50 ${median(cat.slice(-5)).toFixed(1)} ms`);
  }
  const fmt = (xs: number[]) => `p50 ${median(xs).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (n=${xs.length})`;
  console.log(`\nblame of a ${LINES}-line file with ${VERSIONS}+ versions:`);
  console.log(`  cold (first after a restart): ${fmt(cold)}`);
  console.log(`  warm (cached version):        ${fmt(warm)}`);
  console.log(`  after a write (incremental):  ${fmt(afterWrite)}`);
  console.log(`  cat of the same file:         ${fmt(cat)}`);
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
