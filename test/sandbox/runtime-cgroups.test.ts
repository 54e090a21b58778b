import test from 'ava';
import { execFile, spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { detectCgroups, type Cgroups, type RunGroup } from '../../src/sandbox/runtime/cgroups.ts';

// The pool of cgroups behind bwrap runs: reuse, limits, per-run OOM detection, removal.

const MiB = 1024 * 1024;
const SHM_FILE = `/dev/shm/cns-cgroups-test-${process.pid}`;
let cgroups: Cgroups | null = null;

test.before(async () => {
  // One pooled group at most: what is given back is what the next acquire gets.
  cgroups = (await detectCgroups({ premade: 1, maxIdle: 1 })).cgroups;
});

test.after.always(async (t) => {
  await rm(SHM_FILE, { force: true });
  if (!cgroups) return;
  await cgroups.close();
  t.deepEqual(await cgroups.leftovers(), [], 'close removed every group');
});

/** Runs `sh -c script` after moving the shell into `group` (as the runtime's launcher does). */
function inGroup(group: RunGroup, script: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', `for f in "$@"; do echo $$ > "$f" || exit 125; done; ${script}`, 'sh', ...group.procsFiles], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr }));
  });
}

const hierarchy = (group: RunGroup) => group.procsFiles.map((f) => dirname(f));
const read = async (file: string) => (await readFile(file, 'utf8')).trim();

async function limitsOf(group: RunGroup): Promise<{ memory: number; processes: number }> {
  const [first, second] = hierarchy(group);
  if (second) return { memory: Number(await read(join(first!, 'memory.limit_in_bytes'))), processes: Number(await read(join(second, 'pids.max'))) };
  return { memory: Number(await read(join(first!, 'memory.max'))), processes: Number(await read(join(first!, 'pids.max'))) };
}

test.serial('a group given back empty is handed out again; an OOM kill counts for the run it happened in only', async (t) => {
  if (!cgroups) return t.pass('no writable cgroup hierarchy here');
  const limits = { memoryBytes: 64 * MiB, maxProcesses: 16 };
  const first = await cgroups.acquire(limits);
  const oom = await inGroup(first, 'exec python3 -c "b = bytearray(256 << 20)"');
  t.not(oom.code, 0);
  t.true(await first.oomKilled(), 'the kernel killed the allocation at the limit');
  await first.release();
  const second = await cgroups.acquire(limits);
  t.deepEqual(hierarchy(second), hierarchy(first), 'the same group, reused');
  t.false(await second.oomKilled(), "the earlier run's kill is not this run's");
  const fine = await inGroup(second, 'exec python3 -c "b = bytearray(8 << 20)"');
  t.is(fine.code, 0, fine.stderr);
  t.false(await second.oomKilled());
  await second.release();
});

test.serial("a reused group gets the new run's limits written when they differ (memory raised and lowered)", async (t) => {
  if (!cgroups) return t.pass('no writable cgroup hierarchy here');
  const a = await cgroups.acquire({ memoryBytes: 64 * MiB, maxProcesses: 16 });
  await a.release();
  const b = await cgroups.acquire({ memoryBytes: 256 * MiB, maxProcesses: 100 });
  t.deepEqual(hierarchy(b), hierarchy(a));
  t.deepEqual(await limitsOf(b), { memory: 256 * MiB, processes: 100 });
  const [mem] = hierarchy(b);
  const memsw = join(mem!, 'memory.memsw.limit_in_bytes');
  const swap = await read(memsw).catch(() => null);
  if (swap !== null) t.is(Number(swap), 256 * MiB, 'RAM + swap follows the RAM limit');
  await b.release();
  const c = await cgroups.acquire({ memoryBytes: 32 * MiB, maxProcesses: 8 });
  t.deepEqual(hierarchy(c), hierarchy(a));
  t.deepEqual(await limitsOf(c), { memory: 32 * MiB, processes: 8 });
  if (swap !== null) t.is(Number(await read(memsw)), 32 * MiB);
  await c.release();
});

test.serial('a group is reused only once empty: what is left in it at release is killed first', async (t) => {
  if (!cgroups) return t.pass('no writable cgroup hierarchy here');
  const group = await cgroups.acquire({ memoryBytes: 64 * MiB, maxProcesses: 16 });
  const nap = `600.${process.pid}`;
  // The shell exits at once; its background sleep stays in the group.
  await inGroup(group, `sleep ${nap} </dev/null >/dev/null 2>&1 & echo started >&2`);
  const sleepers = await promisify(execFile)('pgrep', ['-f', `^sleep ${nap}$`]).then((r) => r.stdout.trim().split('\n'));
  t.is(sleepers.length, 1);
  await group.release();
  await t.throwsAsync(promisify(execFile)('pgrep', ['-f', `^sleep ${nap}$`]), undefined, 'the process left behind was killed');
  const next = await cgroups.acquire({ memoryBytes: 64 * MiB, maxProcesses: 16 });
  t.deepEqual(hierarchy(next), hierarchy(group), 'then the emptied group was reused');
  t.deepEqual((await Promise.all(next.procsFiles.map(read))).join(''), '');
  await next.release();
});

test.serial('a group with shared memory still charged to it is removed, not reused', async (t) => {
  if (!cgroups) return t.pass('no writable cgroup hierarchy here');
  const group = await cgroups.acquire({ memoryBytes: 64 * MiB, maxProcesses: 16 });
  const wrote = await inGroup(group, `head -c 8M /dev/zero > ${SHM_FILE}`);
  t.is(wrote.code, 0, wrote.stderr);
  await group.release();
  for (const dir of hierarchy(group)) await t.throwsAsync(readFile(join(dir, 'cgroup.procs')), { code: 'ENOENT' }, dir);
  const next = await cgroups.acquire({ memoryBytes: 64 * MiB, maxProcesses: 16 });
  t.notDeepEqual(hierarchy(next), hierarchy(group), 'a fresh group: the next run gets its whole limit');
  await next.release();
  await rm(SHM_FILE, { force: true });
});

test.serial('drain removes the pooled groups; after close a given-back group is removed too', async (t) => {
  if (!cgroups) return t.pass('no writable cgroup hierarchy here');
  const held = await cgroups.acquire({ memoryBytes: 64 * MiB, maxProcesses: 16 });
  const spare = await cgroups.acquire({ memoryBytes: 64 * MiB, maxProcesses: 16 });
  await spare.release();
  await cgroups.drain();
  t.deepEqual(await cgroups.leftovers(), hierarchy(held), 'only the group in use is left');
  await cgroups.close();
  await held.release();
  t.deepEqual(await cgroups.leftovers(), []);
});
