/**
 * Issue 33, grep over a project of FILES text files (Markdown and text files, ~FILE_BYTES each),
 * against one `cns serve` process: each pattern run ROUNDS times by scanning every file (no
 * search tool, so no index), then again once the project has a search tool and its raw-text
 * trigram index is built: p50 of each way, the speed-up, and a check that both ways answered
 * the same matches. Patterns: a rare fixed string, a rare regex with a required literal, an
 * ignore_case word, a regex with no literal (always a scan: the index's cost when it cannot help).
 *
 * Run: node --import=tsx scripts/bench-grep.ts [files=10000] [fileBytes=3000] [rounds=5]
 * A small check: node --import=tsx scripts/bench-grep.ts 1000 2000 3
 * Each pattern is called once untimed first, each way, so both are measured with warm caches.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, benchProject, startBenchServer } from './lib/serverProcess.ts';

const FILES = Number(process.argv[2] ?? 10_000);
const FILE_BYTES = Number(process.argv[3] ?? 3000);
const ROUNDS = Number(process.argv[4] ?? 5);

const words = 'content node service archive stream project folder version commit agent markdown json file wombat'.split(' ');
function prose(seed: number, bytes: number): string {
  let s = '';
  let x = seed * 2654435761;
  while (s.length < bytes) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += words[x % words.length] + (x % 11 === 0 ? '.\n' : ' ');
  }
  return s.slice(0, bytes);
}

const patterns: Record<string, unknown>[] = [
  { pattern: 'quokka-needle-7', fixed_strings: true },
  { pattern: 'error code E\\d{4} in module' },
  { pattern: 'QUOKKA-NEEDLE', ignore_case: true },
  { pattern: '^wombat (agent|commit)\\.$', max_results: 50 },
];

const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const work = mkdtempSync(join(tmpdir(), 'cns-bench-grep-'));
const server = await startBenchServer(join(work, 'data'));
try {
  const { token, projectId } = await benchProject(server.url);
  for (let start = 0; start < FILES; start += 2000) {
    const files = [];
    for (let i = start; i < Math.min(FILES, start + 2000); i++) {
      let text = prose(i, FILE_BYTES);
      if (i % 1000 === 7) text += `\nquokka-needle-${i % 10} here\nerror code E${1000 + i} in module\n`;
      files.push(i % 3 === 0 ? { path: `d${i % 50}/f${i}.txt`, node_type: 'file', content: Buffer.from(text).toString('base64') } : { path: `d${i % 50}/f${i}.md`, node_type: 'markdown', content: text });
    }
    await api(server.url, 'POST', `/content/${projectId}/bulk-write`, token, { files });
  }
  const tool = (await api(server.url, 'POST', '/tools', token, { project_id: projectId, name: 'grep', type: 'grep' })).id as string;
  type Answer = { matches: unknown[]; truncated: boolean; used_index: boolean; files_scanned: number };
  const grep = async (args: Record<string, unknown>): Promise<{ ms: number; a: Answer }> => {
    const t0 = performance.now();
    const data = await api(server.url, 'POST', `/tools/${tool}/call`, token, { arguments: args });
    return { ms: performance.now() - t0, a: (data.result ?? data) as Answer };
  };
  const run = async () => {
    const out = [];
    for (const args of patterns) {
      const times: number[] = [];
      // One untimed call first: caches (blobs, the index reader) warm for both ways alike.
      let last: Answer | null = (await grep(args)).a;
      for (let r = 0; r < ROUNDS; r++) {
        const { ms, a } = await grep(args);
        times.push(ms);
        last = a;
      }
      out.push({ p50_ms: p50(times), answer: last! });
    }
    return out;
  };
  const without = await run();

  const t0 = performance.now();
  const search = (await api(server.url, 'POST', '/tools/search', token, { project_id: projectId, name: 'search' })).tool.id as string;
  for (;;) {
    const s = await api(server.url, 'GET', `/tools/${search}/search-index`, token);
    if (s.status === 'ready' && s.lag_versions === 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const indexS = (performance.now() - t0) / 1000;
  const withIndex = await run();

  const rows = patterns.map((args, i) => {
    const a = without[i]!;
    const b = withIndex[i]!;
    return {
      args: JSON.stringify(args),
      matches: a.answer.matches.length,
      scan_p50_ms: Number(a.p50_ms.toFixed(1)),
      index_p50_ms: Number(b.p50_ms.toFixed(1)),
      speedup: Number((a.p50_ms / b.p50_ms).toFixed(1)),
      used_index: b.answer.used_index,
      files_read: `${a.answer.files_scanned} -> ${b.answer.files_scanned}`,
      same_answer: JSON.stringify(a.answer.matches) === JSON.stringify(b.answer.matches) && a.answer.truncated === b.answer.truncated,
    };
  });
  console.log(JSON.stringify({ files: FILES, file_bytes: FILE_BYTES, rounds: ROUNDS, index_build_s: Number(indexS.toFixed(1)), patterns: rows }, null, 2));
  if (rows.some((r) => !r.same_answer)) process.exitCode = 1;
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
