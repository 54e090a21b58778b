/**
 * Issue 12's figures (sandboxed commands), against `cns serve` in its own process with bubblewrap:
 *   1. `ls` over a 1,000-file subtree: p50 end to end (HTTP in to result out), with the split
 *      (materialize, run, compare + write back); baselines in the same run: GET /healthz, and
 *      `bwrap … ls` spawned directly by this process on a folder of the same files. Back to back
 *      (the next request as soon as the answer is in), and at an agent's pace (one command every
 *      250 ms), warm (the sandbox made after the previous command) and cold (more endpoints in
 *      rotation than warm sandboxes are kept);
 *   2. `grep -rl word .` over 10,000 files through the endpoint vs the same grep run on the host
 *      directly in a folder holding the same files (the ratio);
 *   3. a command that changes 100 files: time from the command's end to the write-back commit;
 *   4. 16 concurrent execs on one endpoint, each writing its own file: none fails, each result
 *      correct, p50/p99.
 * Run: node --import=tsx scripts/bench-sandbox.ts [--runs 40]
 * Bounded: the whole run aborts after 10 minutes.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, benchProject, startBenchServer } from './lib/serverProcess.ts';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const RUNS = arg('runs', 40);
const deadline = setTimeout(() => {
  console.error('bench-sandbox: aborted after 10 minutes');
  process.exit(2);
}, 10 * 60_000);
deadline.unref();

const work = mkdtempSync(join(tmpdir(), 'cns-bench-sandbox-'));
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const f1 = (n: number) => n.toFixed(1);
const rows: string[] = [];
const report = (line: string) => {
  rows.push(line);
  console.log(line);
};

/** Runs a command to completion; resolves with its wall time, ms. */
function timed(cmd: string, args: string[], cwd: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { cwd, stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', () => resolve(performance.now() - t0));
  });
}

const files = (n: number, folder: string) =>
  Array.from({ length: n }, (_, i) => ({
    path: `${folder}/d${i % 50}/note-${i}.md`,
    node_type: 'markdown',
    content: `# Note ${i}\n\n${i % 10 === 0 ? 'the word is here' : 'nothing to see'} in note ${i}.\n`,
  }));

async function main() {
  const server = await startBenchServer(join(work, 'data'), { CNS_SANDBOX: 'bwrap' });
  try {
    const { token, projectId } = await benchProject(server.url);
    const call = (method: string, path: string, body?: unknown, credential = token) => api(server.url, method, path, credential, body);
    const small = files(1000, 'small');
    const big = files(10_000, 'big');
    await call('POST', `/content/${projectId}/bulk-write`, { files: small });
    for (let i = 0; i < big.length; i += 5000) await call('POST', `/content/${projectId}/bulk-write`, { files: big.slice(i, i + 5000) });
    const nodeId = async (path: string) => (await call('GET', `/content/${projectId}/stat?path=${path}`)).id as string;
    const endpoint = async (path: string) => {
      const e = await call('POST', '/sandbox-endpoints/', { name: path, project_id: projectId, node_id: await nodeId(path) });
      return { id: e.sandbox_endpoint.id as string, key: e.key as string };
    };
    const smallEp = await endpoint('small');
    const bigEp = await endpoint('big');
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const exec = async (ep: { id: string; key: string }, command: string) => {
      const t0 = performance.now();
      const d = await call('POST', `/sandbox-endpoints/${ep.id}/exec`, { command }, ep.key);
      return { ms: performance.now() - t0, d };
    };

    // Baselines of this run: the service's cheapest request, and bwrap itself on the same files.
    const health: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      await fetch(`${server.url}/healthz`).then((r) => r.text());
      health.push(performance.now() - t0);
    }
    const plain = join(work, 'plain-small');
    for (const f of small) {
      mkdirSync(join(plain, f.path, '..'), { recursive: true });
      writeFileSync(join(plain, f.path), f.content);
    }
    const bwrapArgs = ['--unshare-all', '--die-with-parent', '--ro-bind', '/usr', '/usr', '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '--proc', '/proc', '--dev', '/dev', '--bind', join(plain, 'small'), '/work', '--chdir', '/work', 'sh', '-c', 'ls -R > /dev/null'];
    const bare: number[] = [];
    for (let i = 0; i < RUNS; i++) bare.push(await timed('bwrap', bwrapArgs, work));

    // 1. ls over 1,000 files.
    const ls = async (ep: { id: string; key: string }) => {
      const { ms, d } = await exec(ep, 'ls -R | wc -l');
      if (d.exit_code !== 0 || Number(d.stdout.trim()) < 1000) throw new Error(`ls failed: ${JSON.stringify(d).slice(0, 300)}`);
      return { ms, m: d.timings.materialize_ms as number, r: d.timings.run_ms as number, w: d.timings.write_back_ms as number, warm: d.timings.warm as boolean };
    };
    const summary = (xs: Awaited<ReturnType<typeof ls>>[]) =>
      `p50 ${f1(pct(xs.map((x) => x.ms), 0.5))} ms, p90 ${f1(pct(xs.map((x) => x.ms), 0.9))} ms (run p50 ${f1(pct(xs.map((x) => x.r), 0.5))} ms; ${xs.filter((x) => x.warm).length}/${xs.length} warm)`;
    await ls(smallEp);
    const backToBack: Awaited<ReturnType<typeof ls>>[] = [];
    for (let i = 0; i < RUNS; i++) backToBack.push(await ls(smallEp));
    report(`1. ls -R over 1,000 files, end to end, back to back: ${summary(backToBack)} (target p50 < 40 ms)`);
    report(
      `   split (p50): materialize ${f1(pct(backToBack.map((s) => s.m), 0.5))} ms, run ${f1(pct(backToBack.map((s) => s.r), 0.5))} ms, compare + write back ${f1(pct(backToBack.map((s) => s.w), 0.5))} ms`,
    );
    const paced: Awaited<ReturnType<typeof ls>>[] = [];
    for (let i = 0; i < RUNS; i++) {
      await pause(250);
      paced.push(await ls(smallEp));
    }
    report(`   at an agent's pace (a command every 250 ms), warm: ${summary(paced)}`);
    // Nine endpoints with other limits (other keys) in turn: each one's warm sandbox is gone (8 are kept) when its turn comes.
    const rotation: { id: string; key: string }[] = [];
    for (let i = 0; i < 9; i++) {
      const e = await call('POST', '/sandbox-endpoints/', { name: `cold-${i}`, project_id: projectId, node_id: await nodeId('small'), limits: { memory_mb: 256 + i } });
      rotation.push({ id: e.sandbox_endpoint.id as string, key: e.key as string });
    }
    const cold: Awaited<ReturnType<typeof ls>>[] = [];
    for (let i = 0; i < RUNS + rotation.length; i++) {
      await pause(250);
      const r = await ls(rotation[i % rotation.length]!);
      if (i >= rotation.length) cold.push(r);
    }
    report(`   at an agent's pace, cold: ${summary(cold)}`);
    report(`   baselines: GET /healthz p50 ${f1(pct(health, 0.5))} ms; bwrap + ls -R spawned directly p50 ${f1(pct(bare, 0.5))} ms`);
    // The first run at a new commit pays the checkout: measure it too.
    const fresh: number[] = [];
    for (let i = 0; i < 5; i++) {
      await call('POST', `/content/${projectId}/write`, { path: `small/touch-${i}.md`, node_type: 'markdown', content: `t${i}` });
      const { ms, d } = await exec(smallEp, 'ls -R | wc -l');
      fresh.push(ms);
      void d;
    }
    report(`   first run after a new version (checkout of the commit): p50 ${f1(pct(fresh, 0.5))} ms`);

    // 2. grep over 10,000 files vs the host.
    const plainBig = join(work, 'plain-big');
    for (const f of big) {
      mkdirSync(join(plainBig, f.path, '..'), { recursive: true });
      writeFileSync(join(plainBig, f.path), f.content);
    }
    await exec(bigEp, 'true');
    const viaEndpoint: number[] = [];
    const viaRun: number[] = [];
    const onHost: number[] = [];
    for (let i = 0; i < Math.min(RUNS, 15); i++) {
      const { ms, d } = await exec(bigEp, 'grep -rl word . | wc -l');
      if (d.stdout.trim() !== '1000') throw new Error(`grep found ${d.stdout}`);
      viaEndpoint.push(ms);
      viaRun.push(d.timings.run_ms);
      onHost.push(await timed('sh', ['-c', 'grep -rl word . | wc -l > /dev/null'], join(plainBig, 'big')));
    }
    const ratio = pct(viaEndpoint, 0.5) / pct(onHost, 0.5);
    report(
      `2. grep -rl over 10,000 files: end to end p50 ${f1(pct(viaEndpoint, 0.5))} ms (run ${f1(pct(viaRun, 0.5))} ms) vs on the host p50 ${f1(pct(onHost, 0.5))} ms: ratio ${ratio.toFixed(2)}`,
    );

    // 3. 100 changed files → the write-back commit.
    const writeBack: number[] = [];
    for (let i = 0; i < 10; i++) {
      const { d } = await exec(smallEp, `for f in d1/*.md d2/*.md d3/*.md d4/*.md d5/*.md; do echo "edit ${i}" >> "$f"; done`);
      if (d.changes.length !== 100 || d.version === null) throw new Error(`write-back: ${d.changes.length} changes, version ${d.version}`);
      writeBack.push(d.timings.write_back_ms);
    }
    report(`3. 100 files changed: command end → write-back commit p50 ${f1(pct(writeBack, 0.5))} ms, max ${f1(Math.max(...writeBack))} ms (target < 300 ms)`);

    // 4. 16 concurrent execs on one endpoint, each writing its own file.
    const t0 = performance.now();
    const results = await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        try {
          const { ms, d } = await exec(smallEp, `echo "run ${i}" > run-${i}.md && cat run-${i}.md`);
          const ok = d.exit_code === 0 && d.stdout === `run ${i}\n` && d.version !== null && d.conflicts.length === 0;
          return { ms, ok };
        } catch (e) {
          return { ms: 0, ok: false, error: (e as Error).message };
        }
      }),
    );
    const wall = performance.now() - t0;
    const latencies = results.map((r) => r.ms);
    const failed = results.filter((r) => !r.ok).length;
    const present = await Promise.all(Array.from({ length: 16 }, (_, i) => call('GET', `/content/${projectId}/cat?path=small/run-${i}.md`).then((n) => n.content === `run ${i}\n`)));
    report(
      `4. 16 concurrent execs: ${16 - failed}/16 correct, ${present.filter(Boolean).length}/16 files present; p50 ${f1(pct(latencies, 0.5))} ms, p99 ${f1(pct(latencies, 0.99))} ms, all done in ${f1(wall)} ms`,
    );
  } finally {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
  console.log('\n' + rows.join('\n'));
}

await main();
