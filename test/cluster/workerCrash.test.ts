import test from 'ava';
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CNS_BIN } from '../helpers/cli.ts';
import { startWorkers } from './workersHarness.ts';

const holderOf = (dataDir: string, projectId: string): string | null => {
  const db = new Database(join(dataDir, 'cns.db'), { readonly: true, fileMustExist: true });
  try {
    return (db.prepare('SELECT holder FROM project_leases WHERE project_id = ?').get(projectId) as { holder: string } | undefined)?.holder ?? null;
  } finally {
    db.close();
  }
};

test('a worker killed with kill -9 during writes: every acknowledged write is there, its projects take writes again, the primary restarts it', async (t) => {
  const w = await startWorkers(2);
  t.teardown(() => w.stop());
  const token = await w.token();
  const projects = await Promise.all([0, 1, 2, 3].map((i) => w.project(token, `crash ${i}`)));
  for (const p of projects) t.is((await w.api('POST', `/content/${p}/write`, { token, body: { path: 'seed.md', content: 'seed' } })).status, 201);
  const before = await w.health();
  const victim = holderOf(w.dataDir, projects[0]!)!.split('.')[1]!;
  const victimPid = before.workers.find((x) => x.name === victim)!.pid;

  // Writes keep coming to every project while the owner of projects[0] is killed.
  const acknowledged: { project: string; path: string; content: string }[] = [];
  let failures = 0;
  let stop = false;
  let n = 0;
  const writer = async (project: string) => {
    while (!stop) {
      const path = `w/${n++}.md`;
      const content = `write ${path}`;
      // A client's patience: a connection the kernel handed to the worker as it was killed may never
      // be answered, and a writer stuck on it would stop this project's stream for the whole test.
      const res = await w.api('POST', `/content/${project}/write`, { token, body: { path, content }, timeoutMs: 5_000 }).catch(() => null);
      if (res && (res.status === 201 || res.status === 200)) acknowledged.push({ project, path, content });
      else failures++;
    }
  };
  const writers = projects.map((p) => writer(p));
  const until = async (what: string, check: () => boolean | Promise<boolean>, ms = 30_000) => {
    const deadline = Date.now() + ms;
    while (!(await check())) {
      // The service's last lines say what it was doing (a lock waited for, a restart).
      if (Date.now() > deadline) throw new Error(`timed out: ${what} (${acknowledged.length} acknowledged, ${failures} failed)\n${w.serve.output().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await until('writes flowing', () => acknowledged.length >= 20);
  const killedAt = Date.now();
  process.kill(victimPid, 'SIGKILL');
  const ackedAtKill = acknowledged.filter((a) => a.project === projects[0]).length;
  await until('a write to the killed worker’s project acknowledged after the kill', () => acknowledged.filter((a) => a.project === projects[0]).length > ackedAtKill + 1);
  const resumedMs = Date.now() - killedAt;
  await until('the worker restarted', async () => (await w.health()).workers.some((x) => x.name === victim && x.restarts === 1));
  await until('more writes after the restart', () => acknowledged.length > ackedAtKill + 40);
  stop = true;
  await Promise.all(writers);

  t.log(`${acknowledged.length} writes acknowledged, ${failures} refused or cut off; the killed worker's project took writes again ${resumedMs} ms after the kill`);
  t.true(resumedMs < 10_000, `writes resumed after ${resumedMs} ms`);
  const newHolder = holderOf(w.dataDir, projects[0]!)!;
  t.not(newHolder.split('.')[2], undefined);
  // Every acknowledged write is readable afterwards, through any worker.
  const missing: string[] = [];
  for (const a of acknowledged) {
    const res = await w.api('GET', `/content/${a.project}/cat?path=${encodeURIComponent(a.path)}`, { token });
    if (res.status !== 200 || res.body.data.content !== a.content) missing.push(`${a.project}:${a.path} → ${res.status}`);
  }
  t.deepEqual(missing, []);
  // Versions stay contiguous in every project.
  for (const p of projects) {
    const res = await w.api('GET', `/content/${p}/versions?limit=1000`, { token });
    const versions = (res.body.data.commits as { version: number }[]).map((c) => c.version);
    t.deepEqual(versions, Array.from({ length: versions.length }, (_, i) => versions.length - i), p);
  }
});

test('a lock on main left by a worker killed between its prepare and its index commit does not hold the project\'s writes', async (t) => {
  const w = await startWorkers(2);
  t.teardown(() => w.stop());
  const token = await w.token();
  const p = await w.project(token, 'locked');
  t.is((await w.api('POST', `/content/${p}/write`, { token, body: { path: 'a.md', content: 'a' } })).status, 201);
  const victim = holderOf(w.dataDir, p)!.split('.')[1]!;
  const pid = (await w.health()).workers.find((x) => x.name === victim)!.pid;
  process.kill(pid, 'SIGKILL');
  // What the killed worker leaves when it dies inside its write transaction: main.lock names a
  // commit its index never committed (the transaction rolled back with the process).
  writeFileSync(join(w.dataDir, `${p}.git`, 'refs', 'heads', 'main.lock'), 'f'.repeat(40) + '\n');
  const started = Date.now();
  let res = await w.api('POST', `/content/${p}/write`, { token, body: { path: 'b.md', content: 'b' }, timeoutMs: 20_000 }).catch(() => null);
  // The first request may land on the dying worker's connection: a client tries again.
  if (res?.status !== 201) res = await w.api('POST', `/content/${p}/write`, { token, body: { path: 'b.md', content: 'b' }, timeoutMs: 20_000 }).catch(() => null);
  const tookMs = Date.now() - started;
  t.is(res?.status, 201);
  t.true(tookMs < 5_000, `the write waited ${tookMs} ms for the dead worker's lock`);
  t.regex(w.serve.output(), /removing the refs\/heads\/main.lock of a writer that is gone/);
  const versions = await w.api('GET', `/content/${p}/versions`, { token });
  t.deepEqual((versions.body.data.commits as { version: number }[]).map((c) => c.version), [2, 1]);
});

test('SIGTERM stops the primary and every worker: exit status 0, the port released', async (t) => {
  const w = await startWorkers(2);
  const { workers } = await w.health();
  const token = await w.token();
  const p = await w.project(token, 'stop');
  t.is((await w.api('POST', `/content/${p}/write`, { token, body: { path: 'a.md', content: 'a' } })).status, 201);
  // An offline reindex beside the running workers would be a second writer: refused, with the reason.
  const beside = spawnSync(process.execPath, [CNS_BIN, 'reindex', '--project', p, '--data-dir', w.dataDir], { encoding: 'utf8' });
  t.not(beside.status, 0);
  t.regex(beside.stderr + beside.stdout, /cns serve is running on .* \(pid \d+\): stop it, then run cns reindex/);
  const dataDir = w.dataDir;
  const code = await w.stop(false);
  t.is(code, 0);
  for (const x of workers) t.throws(() => process.kill(x.pid, 0), undefined, `worker ${x.name} is gone`);
  await t.throwsAsync(fetch(`${w.url}/healthz`));
  const after = spawnSync(process.execPath, [CNS_BIN, 'reindex', '--project', p, '--data-dir', dataDir], { encoding: 'utf8' });
  t.is(after.status, 0, after.stderr);
  t.regex(after.stdout, /index matched git/);
  rmSync(dataDir, { recursive: true, force: true });
});

test('a worker that stops answering is killed and started again; its projects take writes meanwhile', async (t) => {
  const w = await startWorkers(2, { CNS_WORKER_HUNG_MS: '3000' });
  t.teardown(() => w.stop());
  const token = await w.token();
  const p = await w.project(token, 'hung');
  t.is((await w.api('POST', `/content/${p}/write`, { token, body: { path: 'a.md', content: 'a' } })).status, 201);
  const hungHolder = holderOf(w.dataDir, p)!;
  const victim = hungHolder.split('.')[1]!;
  const pid = (await w.health()).workers.find((x) => x.name === victim)!.pid;
  process.kill(pid, 'SIGSTOP'); // its event loop answers nothing from now on
  const deadline = Date.now() + 60_000;
  let res = await w.api('POST', `/content/${p}/write`, { token, body: { path: 'b.md', content: 'b' } }).catch(() => null);
  while (!(res?.status === 201) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    res = await w.api('POST', `/content/${p}/write`, { token, body: { path: 'b.md', content: 'b' } }).catch(() => null);
  }
  t.is(res?.status, 201, 'the project took the write once the hung worker was gone');
  t.throws(() => process.kill(pid, 0), undefined, 'the hung worker was killed');
  t.regex(w.serve.output(), new RegExp(`worker ${victim} \\(pid ${pid}\\) has not answered for \\d+ s: killing it`));
  t.not(holderOf(w.dataDir, p), hungHolder, 'the lease passed to a live worker');
});
