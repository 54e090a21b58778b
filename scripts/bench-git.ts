/**
 * Benchmark of the git remote (issue 5):
 *   1. clone of a project with 10,000 files and 10,000 commits through the service, against
 *      `git clone --no-local` from the same bare repository path, in the same run (history built
 *      with `git fast-import`, then indexed with content.reconcile);
 *   2. indexing of a push of 1,000 commits touching 5,000 files (the time of the reconcile
 *      that the push triggers, measured inside the service).
 * Run: node --import=tsx scripts/bench-git.ts [clone rounds, default 5] [--push-only]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../src/app/server.ts';
import { loadSettings } from '../src/config/settings.ts';
import { createLogger } from '../src/logging/logger.ts';

const args = process.argv.slice(2);
const ROUNDS = Number(args.find((a) => /^\d+$/.test(a)) ?? 5);
/** Skips the clone measurement (part 1). */
const PUSH_ONLY = args.includes('--push-only');
const root = mkdtempSync(join(tmpdir(), 'cns-bench-git-'));
const home = join(root, 'home');
const gitEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' };
const rows: [string, string][] = [];
const report = (name: string, value: string) => {
  rows.push([name, value]);
  console.log(`${name}: ${value}`);
};

/**
 * Runs git without blocking: the service answering the clones runs in this same process.
 * Resolves with the wall time in ms; fails loudly.
 */
function git(args: string[], input?: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-c', 'credential.helper=', ...args], { env: gitEnv, stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`git ${args.join(' ')}: ${err}`))));
    child.stdin.end(input ?? '');
  });
}

/** `commits` commits; commit i changes `perCommit` files, file numbers running on modulo `files`. */
function history(commits: number, files: number, perCommit: number, from?: string): string {
  const parts: string[] = [];
  const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`;
  let f = 0;
  for (let i = 1; i <= commits; i++) {
    parts.push(`commit refs/heads/main\ncommitter Bench <bench@example.com> ${1_700_000_000 + i} +0000\n`, data(`commit ${i}`));
    if (i === 1 && from) parts.push(`from ${from}\n`);
    for (let k = 0; k < perCommit; k++) {
      parts.push(`M 100644 inline d${f % 100}/file${f}.md\n`, data(`# file ${f}\n\nwritten by commit ${i}\n`));
      f = (f + 1) % files;
    }
  }
  return parts.join('');
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const settings = loadSettings(
  { CNS_ADMIN_EMAIL: 'bench@example.com', CNS_ADMIN_PASSWORD: 'bench-password', CNS_RATE_LIMIT_MAX: '0', CNS_LOGIN_RATE_LIMIT_MAX: '0' },
  { host: '127.0.0.1', port: 0, dataDir: join(root, 'data') },
);
const server = await startServer(settings, createLogger('silent'));
const { content } = server.services;
try {
  const call = async (path: string, token: string | null, body: unknown) => {
    const res = await fetch(`${server.url}/api/v1${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    return ((await res.json()) as { data: Record<string, any> }).data;
  };
  const token: string = (await call('/auth/login', null, { email: 'bench@example.com', password: 'bench-password' })).access_token;
  const orgId: string = (await call('/auth/initialize', token, {})).organization.id;
  const newProject = async (name: string): Promise<string> => (await call('/projects', token, { name, org_id: orgId })).id;
  const remote = (id: string) => `${server.url.replace('://', `://cns:${token}@`)}/git/${id}.git`;

  // 1. clone of 10,000 files / 10,000 commits
  if (!PUSH_ONLY) {
    const big = await newProject('clone bench');
    const bare = join(settings.dataDir, `${big}.git`);
    const t0 = performance.now();
    await git([`--git-dir=${bare}`, 'fast-import', '--quiet'], history(10_000, 10_000, 1));
    report('fast-import of 10,000 commits', `${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const t1 = performance.now();
    await content.reconcile(big);
    report('reconcile of those 10,000 commits (no trailers)', `${((performance.now() - t1) / 1000).toFixed(1)} s`);
    const viaService: number[] = [];
    const direct: number[] = [];
    // Alternating which goes first evens out caches and whatever else runs on the machine.
    for (let r = 0; r < ROUNDS; r++) {
      const viaSvc = async () => viaService.push(await git(['clone', '-q', remote(big), join(root, `svc${r}`)]));
      const plain = async () => direct.push(await git(['clone', '-q', '--no-local', bare, join(root, `dir${r}`)]));
      if (r % 2 === 0) await viaSvc().then(plain);
      else await plain().then(viaSvc);
      rmSync(join(root, `svc${r}`), { recursive: true, force: true });
      rmSync(join(root, `dir${r}`), { recursive: true, force: true });
  }
  const svc = median(viaService);
  const dir = median(direct);
  report(`clone through the service (median of ${ROUNDS})`, `${(svc / 1000).toFixed(2)} s`);
  report(`git clone --no-local of the same repository (median of ${ROUNDS})`, `${(dir / 1000).toFixed(2)} s`);
  report('ratio (limit 1.5)', (svc / dir).toFixed(2));
  }

  // 2. indexing of a push of 1,000 commits touching 5,000 files
  const pushed = await newProject('push bench');
  const work = join(root, 'work');
  await git(['clone', '-q', remote(pushed), work]);
  await git([`--git-dir=${join(work, '.git')}`, 'fast-import', '--quiet'], history(1_000, 5_000, 5));
  let indexMs = 0;
  const sync = content.reconcile.bind(content);
  content.reconcile = async (projectId, options) => {
    const started = performance.now();
    try {
      return await sync(projectId, options);
    } finally {
      if (projectId === pushed) indexMs = performance.now() - started;
    }
  };
  const pushMs = await git([`--git-dir=${join(work, '.git')}`, 'push', '-q', remote(pushed), 'main']);
  content.reconcile = sync;
  if (content.projectVersion(pushed) !== 1000) throw new Error(`expected 1000 indexed commits, got ${content.projectVersion(pushed)}`);
  report('push of 1,000 commits / 5,000 files, end to end', `${(pushMs / 1000).toFixed(2)} s`);
  report('indexing of that push (limit >= 1,000 commits/s)', `${(indexMs / 1000).toFixed(2)} s = ${(1000 / (indexMs / 1000)).toFixed(0)} commits/s`);
} finally {
  await server.close();
  rmSync(root, { recursive: true, force: true });
}

console.log('\n| measurement | result |\n| --- | --- |');
for (const [k, v] of rows) console.log(`| ${k} | ${v} |`);
