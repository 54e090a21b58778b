/**
 * Folder sync figures (issue 6), against `cns serve` in its own process with `cns sync` run as a
 * user runs it (child processes):
 *   1. first sync of a folder of 10,000 small files (target < 20 s), and the same subtree into an
 *      empty second folder;
 *   2. two clients under `--watch`: a local edit in one → the file changed in the other
 *      (targets p50 < 1 s, p95 < 2 s).
 *
 *   node --import=tsx scripts/bench-sync.ts [--files 10000] [--edits 40]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchProject, startBenchServer } from './lib/serverProcess.ts';

const CNS_BIN = fileURLToPath(new URL('../bin/cns.js', import.meta.url));
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const FILES = arg('files', 10_000);
const EDITS = arg('edits', 40);

const work = mkdtempSync(join(tmpdir(), 'cns-bench-sync-'));
const server = await startBenchServer(join(work, 'data'));
const { token, projectId } = await benchProject(server.url);
const env = { ...process.env, XDG_CONFIG_HOME: join(work, 'config'), CNS_SERVER: server.url, CNS_TOKEN: token };

function cns(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CNS_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function timed(label: string, args: string[]): Promise<number> {
  const started = performance.now();
  const r = await cns(args);
  const seconds = (performance.now() - started) / 1000;
  if (r.code !== 0) throw new Error(`${label} failed (${r.code}): ${r.stderr}`);
  return seconds;
}

function put(dir: string, rel: string, text: string): void {
  mkdirSync(dirname(join(dir, rel)), { recursive: true });
  writeFileSync(join(dir, rel), text);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

try {
  // 1. First sync up, then down into an empty folder.
  const a = join(work, 'a');
  const b = join(work, 'b');
  for (let i = 0; i < FILES; i++) put(a, `d${i % 100}/note-${i}.md`, `# note ${i}\n\nsome text of note ${i}\n`);
  const up = await timed('first sync (up)', ['sync', a, '--project', projectId, '--json']);
  const down = await timed('first sync (down)', ['sync', b, '--project', projectId, '--json']);
  const again = await timed('no-op sync', ['sync', a, '--json']);
  console.log(`first sync of ${FILES} files, folder → project: ${up.toFixed(1)} s (target < 20 s)`);
  console.log(`first sync of ${FILES} files, project → empty folder: ${down.toFixed(1)} s`);
  console.log(`sync with nothing to do (${FILES} files): ${again.toFixed(2)} s`);

  // 2. Two watchers; edit in A, wait for B's copy to change.
  const watchers: ChildProcess[] = [a, b].map((dir) => spawn(process.execPath, [CNS_BIN, 'sync', dir, '--watch'], { env, stdio: ['ignore', 'ignore', 'pipe'] }));
  await Promise.all(
    watchers.map(
      (w) =>
        new Promise<void>((resolve) => {
          let err = '';
          w.stderr!.on('data', (c: Buffer) => {
            err += c.toString();
            if (err.includes('Watching')) resolve();
          });
        }),
    ),
  );
  const latencies: number[] = [];
  for (let i = 0; i < EDITS; i++) {
    const rel = `d${i % 100}/note-${i}.md`;
    const text = `# note ${i}\n\nedited live (${i})\n`;
    const started = performance.now();
    writeFileSync(join(a, rel), text);
    const deadline = started + 10_000;
    for (;;) {
      if (existsSync(join(b, rel)) && readFileSync(join(b, rel), 'utf8') === text) break;
      if (performance.now() > deadline) throw new Error(`edit ${i} did not arrive within 10 s`);
      await new Promise((r) => setTimeout(r, 2));
    }
    latencies.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const w of watchers) w.kill('SIGTERM');
  latencies.sort((x, y) => x - y);
  console.log(
    `--watch, edit in one folder → other folder (${EDITS} edits): p50 ${percentile(latencies, 50).toFixed(0)} ms, ` +
      `p95 ${percentile(latencies, 95).toFixed(0)} ms, max ${latencies[latencies.length - 1]!.toFixed(0)} ms (targets 1000 / 2000 ms)`,
  );
} finally {
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}
