import test from 'ava';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { BwrapRuntime } from '../../src/sandbox/runtime/bwrapRuntime.ts';
import type { PreparedRun, RunLimits } from '../../src/sandbox/runtime/runtime.ts';
import { MARKER, markedProcesses, removeFolders, run, SMALL_LIMITS, workFolder } from './runtimeHelpers.ts';

// Prepared ("warm") sandboxes: made before their command, started with it later.

let bwrap: BwrapRuntime;

test.before(async () => {
  bwrap = await BwrapRuntime.create();
});

test.after.always(async (t) => {
  t.deepEqual(await bwrap.leftoverCgroups(), [], 'every sandbox freed its cgroup');
  t.deepEqual(await markedProcesses(), [], 'no sandbox process is left');
  await bwrap.close();
  await removeFolders();
});

const prepare = (dir: string, limits: Partial<RunLimits> = {}, readOnly = false) => bwrap.prepare({ workDir: dir, readOnly, limits: { ...SMALL_LIMITS, ...limits } });

/** Pids of prepared sandboxes' shells waiting for their command, under a process of this test file. */
async function waitingShells(): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.startsWith('/bin/sh\0-c\0IFS= read -r s <&3;') && (await underMarked(Number(pid)))) found.push(Number(pid));
  }
  return found;
}

async function underMarked(pid: number): Promise<boolean> {
  for (let p = pid, hops = 0; p > 1 && hops < 8; hops++) {
    const status = await readFile(`/proc/${p}/status`, 'utf8').catch(() => '');
    p = Number(/^PPid:\s+(\d+)$/m.exec(status)?.[1] ?? 0);
    if ((await readFile(`/proc/${p}/cmdline`, 'utf8').catch(() => '')).includes(MARKER)) return true;
  }
  return false;
}

/** A sleep no other process has: its argument carries this test process's pid. */
const NAP = `600.${process.pid}`;

/** Pids of this file's `sleep NAP` processes. */
async function napping(): Promise<number[]> {
  const found: number[] = [];
  for (const pid of await readdir('/proc')) {
    if (/^\d+$/.test(pid) && (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')) === `sleep\0${NAP}\0`) found.push(Number(pid));
  }
  return found;
}

/** Polls until `check` holds (10 ms steps) or the deadline passes. */
async function until(check: () => boolean | Promise<boolean>, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what}: not before the deadline`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const FILES = { 'notes.md': '# Notes\nalpha\n', 'data.json': '{"n":[1,2,3]}\n' };

test.serial('a prepared sandbox runs its command as a cold run does: same output, exit code, uid, cwd, environment', async (t) => {
  const dir = await workFolder(bwrap, FILES);
  const command = `ls; pwd; id -u; env | sort; jq '.n | add' data.json; printf 'héllo ✓\\n'; echo oops >&2; exit 3\n# ${MARKER}`;
  const cold = await bwrap.run({ command, workDir: dir, readOnly: false, limits: SMALL_LIMITS });
  const warm = await (await prepare(dir)).start({ command });
  t.is(cold.exitCode, 3);
  t.is(warm.exitCode, 3);
  t.is(warm.stdout, cold.stdout);
  t.is(warm.stderr, 'oops\n');
  t.regex(warm.stdout, /^data\.json\nnotes\.md\n\/work\n65534\n/);
  t.false(warm.timedOut);
});

test.serial('the command reaches the sandbox byte for byte: lines, quotes, a here-document, no trailing newline, 60 KiB; fd 3 and the waiting script are gone', async (t) => {
  const dir = await workFolder(bwrap);
  const big = 'x'.repeat(60 * 1024);
  const commands = [
    `printf '%s|' "a  b" 'c\\d' "$0"; echo\ncat <<'EOF'\n  $HOME \\ keep\nEOF\n# ${MARKER}`,
    `: '${big}'; echo \${#1}-ok # ${MARKER}`,
    `[ -e /proc/$$/fd/3 ] && echo fd3-open || echo fd3-closed; set | grep -c -E '^(s|c|l)=' # ${MARKER}`,
  ];
  for (const command of commands) {
    const cold = await bwrap.run({ command, workDir: dir, readOnly: false, limits: SMALL_LIMITS });
    const warm = await (await prepare(dir)).start({ command });
    t.is(warm.stdout, cold.stdout, command.slice(0, 40));
    t.is(warm.exitCode, cold.exitCode, command.slice(0, 40));
  }
  const last = await (await prepare(dir)).start({ command: commands[2]! });
  t.is(last.stdout, 'fd3-closed\n0\n', 'the command sees neither fd 3 nor the variables the waiting script used');
});

test.serial('the wall time counts from start: a sandbox prepared longer ago than its timeout still runs its command', async (t) => {
  const dir = await workFolder(bwrap);
  const timeoutMs = 400;
  const prepared = await prepare(dir, { timeoutMs });
  const preparedAt = performance.now();
  await until(async () => (await waitingShells()).length > 0, 'the prepared sandbox waits for its command');
  // What is tested is that time passes before start: poll until it has, the sandbox alive all along.
  await until(() => {
    t.false(prepared.ended);
    return performance.now() - preparedAt > timeoutMs * 1.5;
  }, 'the timeout passed');
  const r = await prepared.start({ command: `sleep 0.2; echo in time # ${MARKER}` });
  t.false(r.timedOut);
  t.is(r.stdout, 'in time\n');
  const slow = await (await prepare(dir, { timeoutMs })).start({ command: `sleep 5 # ${MARKER}` });
  t.true(slow.timedOut);
  t.is(slow.exitCode, 124);
  t.true(slow.durationMs >= timeoutMs && slow.durationMs < timeoutMs + 2000, `ran ${slow.durationMs} ms from start`);
  const longer = await (await prepare(dir, { timeoutMs: 100 })).start({ command: `sleep 0.3; echo override # ${MARKER}`, timeoutMs: 5000 });
  t.is(longer.stdout, 'override\n', "start's timeoutMs replaces the prepared one");
});

test.serial('stdin is piped when given, empty and closed otherwise', async (t) => {
  const dir = await workFolder(bwrap);
  const piped = await (await prepare(dir)).start({ command: `tr a-z A-Z # ${MARKER}`, stdin: 'hello warm\n' });
  t.is(piped.stdout, 'HELLO WARM\n');
  const none = await (await prepare(dir)).start({ command: `cat; echo "read $(wc -c < /dev/stdin) bytes" # ${MARKER}` });
  t.is(none.stdout, 'read 0 bytes\n');
  t.false(none.timedOut);
});

test.serial('output is capped per stream and said so', async (t) => {
  const dir = await workFolder(bwrap);
  const maxOutputBytes = 4096;
  const r = await (await prepare(dir, { maxOutputBytes })).start({ command: `yes | head -c 1M; yes err | head -c 1M >&2; echo done > done.txt # ${MARKER}` });
  t.is(r.exitCode, 0);
  t.deepEqual(r.truncated, { stdout: true, stderr: true });
  t.is(r.stdout.length, maxOutputBytes);
  t.is(r.stderr.length, maxOutputBytes);
  await stat(join(dir, 'done.txt'));
});

test.serial('a prepared sandbox keeps the limits and the confinement: read-only folder, file size, memory, processes, no network', async (t) => {
  const dir = await workFolder(bwrap, FILES);
  const ro = await (await prepare(dir, {}, true)).start({ command: `echo x > new.txt # ${MARKER}` });
  t.regex(ro.stderr, /Read-only file system/);
  const disk = await (await prepare(dir, { maxDiskBytes: 1024 * 1024 })).start({ command: `head -c 5M /dev/zero > big # ${MARKER}` });
  t.not(disk.exitCode, 0);
  t.true((await stat(join(dir, 'big'))).size <= 1024 * 1024);
  const memory = await (await prepare(dir, { memoryBytes: 64 * 1024 * 1024 })).start({ command: `python3 -c "b = bytearray(128 << 20)" # ${MARKER}` });
  t.not(memory.exitCode, 0);
  t.regex(memory.stderr, /killed at the memory limit \(67108864 bytes\)/);
  const after = await (await prepare(dir, { memoryBytes: 64 * 1024 * 1024 })).start({ command: `python3 -c "b = bytearray(8 << 20)"; echo ok # ${MARKER}` });
  t.is(after.stdout, 'ok\n');
  t.notRegex(after.stderr, /memory limit/, 'an OOM kill of an earlier run in a reused group is not this run’s');
  const bomb = await (await prepare(dir, { maxProcesses: 32 })).start({ command: `bomb() { bomb | bomb & }; bomb; sleep 1; echo survived # ${MARKER}` });
  t.regex(bomb.stderr, /Cannot fork|Resource temporarily unavailable/);
  const net = await (await prepare(dir)).start({ command: `python3 -c "import socket; socket.create_connection(('127.0.0.1', 5432), timeout=2)" # ${MARKER}` });
  t.not(net.exitCode, 0);
  t.regex(net.stderr, /Connection refused|Network is unreachable/);
});

test.serial('cancel kills the waiting sandbox and frees its cgroup', async (t) => {
  const dir = await workFolder(bwrap);
  const prepared = await prepare(dir);
  await until(async () => (await waitingShells()).length === 1, 'the prepared sandbox waits for its command');
  t.true((await markedProcesses()).length > 0);
  await prepared.cancel();
  t.true(prepared.ended);
  t.deepEqual(await waitingShells(), []);
  t.deepEqual(await markedProcesses(), []);
  t.deepEqual(await bwrap.leftoverCgroups(), []);
  await t.throwsAsync(prepared.start({ command: 'true' }), { message: /cancelled/ });
});

test.serial('cancel during the command kills the whole tree: the result says 137', async (t) => {
  const dir = await workFolder(bwrap);
  const prepared: PreparedRun = await prepare(dir, { timeoutMs: 20_000 });
  const running = prepared.start({ command: `(sleep ${NAP} &); sleep ${NAP} # ${MARKER}` });
  await until(async () => (await napping()).length === 2, 'the command and the process it left in the background run');
  await prepared.cancel();
  const r = await running;
  t.is(r.exitCode, 137);
  t.false(r.timedOut);
  t.deepEqual(await napping(), [], 'the background process went too');
  t.deepEqual(await markedProcesses(), []);
  await t.throwsAsync(prepared.start({ command: 'true' }), { message: /started already/ });
  t.deepEqual(await bwrap.leftoverCgroups(), []);
});

test.serial('close cancels the prepared sandboxes; prepare refuses afterwards', async (t) => {
  const runtime = await BwrapRuntime.create();
  const dir = await workFolder(runtime);
  const prepared = await runtime.prepare({ workDir: dir, readOnly: false, limits: SMALL_LIMITS });
  await runtime.close();
  t.true(prepared.ended);
  t.deepEqual(await runtime.leftoverCgroups(), []);
  await t.throwsAsync(runtime.prepare({ workDir: dir, readOnly: false, limits: SMALL_LIMITS }), { message: /closed/ });
  const cold = await run(runtime, dir, 'echo still');
  t.is(cold.stdout, 'still\n', 'a cold run still works (a run under way at close finishes)');
  t.deepEqual(await runtime.leftoverCgroups(), [], 'its group was removed, not pooled');
});
