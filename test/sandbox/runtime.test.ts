import test from 'ava';
import { spawn } from 'node:child_process';
import { stat, readFile, writeFile, mkdtemp, chmod, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BwrapRuntime, tasksOfUid } from '../../src/sandbox/runtime/bwrapRuntime.ts';
import { JustBashRuntime } from '../../src/sandbox/runtime/justBashRuntime.ts';
import { capText, CappedOutput } from '../../src/sandbox/runtime/outputCapture.ts';
import { parseRuntimeChoice, runtimeSummary, selectRuntime } from '../../src/sandbox/runtime/selectRuntime.ts';
import { MARKER, markedProcesses, removeFolders, run, workFolder } from './runtimeHelpers.ts';

const CANARY = `canary-${MARKER}-${Math.random().toString(36).slice(2)}`;
process.env.CNS_RT_TEST_CANARY = CANARY;

let bwrap: BwrapRuntime;
let plain: BwrapRuntime;

test.before(async () => {
  bwrap = await BwrapRuntime.create();
  // Same runtime without cgroups: the rlimit fallback of hosts where no cgroup is writable.
  plain = await BwrapRuntime.create({ cgroups: 'off' });
});

test.after.always(async (t) => {
  t.deepEqual(await bwrap.leftoverCgroups(), [], 'every run removed its cgroups');
  t.deepEqual(await markedProcesses(), [], 'no sandbox process is left');
  await removeFolders();
});

const FILES = {
  'notes.md': '# Notes\nalpha beta\ngamma alpha\n',
  'data.json': '{"items":[{"n":1},{"n":2},{"n":3}]}\n',
  'table.csv': 'a,b\n1,2\n3,4\n',
};

test('bwrap: common tools run over the working folder', async (t) => {
  const dir = await workFolder(bwrap, FILES);
  const r = await run(
    bwrap,
    dir,
    [
      'ls',
      'cat notes.md | head -1',
      'grep -c alpha notes.md',
      "sed -n 's/gamma/GAMMA/p' notes.md",
      "awk -F, 'NR>1 {s+=$2} END {print s}' table.csv",
      "jq '[.items[].n] | add' data.json",
      "python3 -c 'import json; print(len(json.load(open(\"data.json\"))[\"items\"]))'",
      'find . -name "*.csv"',
      'pwd',
    ].join('; '),
  );
  t.is(r.exitCode, 0, r.stderr);
  t.is(r.stdout, 'data.json\nnotes.md\ntable.csv\n# Notes\n2\nGAMMA alpha\n6\n6\n3\n./table.csv\n/work\n');
  t.false(r.timedOut);
  t.deepEqual(r.truncated, { stdout: false, stderr: false });
});

test('bwrap: a written file lands in the folder, owned so that the service reads it', async (t) => {
  const dir = await workFolder(bwrap, FILES);
  const r = await run(bwrap, dir, 'mkdir -p out/deep && echo "written ✓" > out/deep/new.txt && rm table.csv && id -u');
  t.is(r.exitCode, 0, r.stderr);
  t.is(r.stdout.trim(), String(bwrap.owner?.uid ?? process.getuid!()));
  t.is(await readFile(join(dir, 'out/deep/new.txt'), 'utf8'), 'written ✓\n');
  t.is((await stat(join(dir, 'out/deep/new.txt'))).uid, bwrap.owner?.uid ?? process.getuid!());
  await t.throwsAsync(stat(join(dir, 'table.csv')), { code: 'ENOENT' });
});

test('bwrap: readOnly refuses every write and leaves the folder as it was', async (t) => {
  const dir = await workFolder(bwrap, FILES);
  for (const command of ['echo x > new.txt', 'echo more >> notes.md', 'rm data.json', 'mkdir d', 'touch notes.md']) {
    const r = await run(bwrap, dir, command, { readOnly: true });
    t.not(r.exitCode, 0, command);
    t.regex(r.stderr, /Read-only file system/, command);
  }
  t.is(await readFile(join(dir, 'notes.md'), 'utf8'), FILES['notes.md']);
  t.is(await readFile(join(dir, 'data.json'), 'utf8'), FILES['data.json']);
  await t.throwsAsync(stat(join(dir, 'new.txt')), { code: 'ENOENT' });
  const read = await run(bwrap, dir, 'cat data.json', { readOnly: true });
  t.is(read.stdout, FILES['data.json']);
});

test('bwrap: stdin is piped when given, empty and closed otherwise', async (t) => {
  const dir = await workFolder(bwrap);
  const piped = await run(bwrap, dir, 'tr a-z A-Z', { stdin: 'hello sandbox\n' });
  t.is(piped.stdout, 'HELLO SANDBOX\n');
  const none = await run(bwrap, dir, 'cat; echo "read $(wc -c < /dev/stdin) bytes"');
  t.is(none.stdout, 'read 0 bytes\n');
  t.false(none.timedOut);
});

test('bwrap: exit codes, stderr and UTF-8 output come back as they are', async (t) => {
  const dir = await workFolder(bwrap);
  const r = await run(bwrap, dir, "printf 'héllo ✓ 日本\\n'; echo oops >&2; exit 3");
  t.is(r.exitCode, 3);
  t.is(r.stdout, 'héllo ✓ 日本\n');
  t.is(r.stderr, 'oops\n');
  t.true(r.durationMs >= 0);
});

test('bwrap: only the fixed environment gets in, nothing of the service', async (t) => {
  const dir = await workFolder(bwrap);
  const r = await run(bwrap, dir, 'env | sort');
  t.is(r.exitCode, 0, r.stderr);
  const names = r.stdout.trim().split('\n').map((l) => l.split('=')[0]);
  t.deepEqual(names.filter((n) => !['PWD', 'SHLVL', 'OLDPWD', '_'].includes(n!)), ['HOME', 'LANG', 'PATH', 'TERM', 'TMPDIR']);
  t.false(r.stdout.includes(CANARY));
});

test('bwrap: the host is not there: only /usr (read-only), the linker bits of /etc, /proc, /dev, /tmp and /work', async (t) => {
  const dir = await workFolder(bwrap);
  const r = await run(bwrap, dir, 'ls -A /; echo ---; ls -A /etc; echo ---; ls -A /tmp; echo ---; touch /usr/x 2>&1; cat /etc/hostname /etc/passwd 2>&1');
  const [root, etc, tmp, rest] = r.stdout.split('---\n');
  const top = root!.trim().split('\n');
  t.deepEqual(top.filter((n) => !['bin', 'lib', 'lib32', 'lib64', 'libx32', 'sbin'].includes(n)), ['dev', 'etc', 'proc', 'tmp', 'usr', 'work']);
  t.deepEqual(etc!.trim().split('\n').filter((n) => n !== 'localtime'), ['alternatives', 'ld.so.cache']);
  t.is(tmp, '', 'a private, empty /tmp');
  t.regex(rest!, /touch: cannot touch '\/usr\/x': Read-only file system/);
  t.regex(rest!, /\/etc\/hostname: No such file/);
  t.regex(rest!, /\/etc\/passwd: No such file/);
});

test('bwrap: an abort signal kills the run', async (t) => {
  const dir = await workFolder(bwrap);
  const r = await run(bwrap, dir, 'sleep 30', { signal: AbortSignal.timeout(300) });
  t.is(r.exitCode, 137);
  t.false(r.timedOut);
  t.true(r.durationMs < 5000, `ended after ${r.durationMs} ms`);
  const already = await run(bwrap, dir, 'echo never', { signal: AbortSignal.abort() });
  t.is(already.stdout, '');
  t.is(already.exitCode, 137);
});

test('bwrap: runs in parallel do not mix', async (t) => {
  const dirs = await Promise.all([1, 2, 3, 4].map((i) => workFolder(bwrap, { 'n.txt': `${i}\n` })));
  const results = await Promise.all(dirs.map((dir) => run(bwrap, dir, 'cat n.txt; echo $(( $(cat n.txt) * 10 )) > m.txt')));
  t.deepEqual(results.map((r) => r.stdout), ['1\n', '2\n', '3\n', '4\n']);
  t.deepEqual(await Promise.all(dirs.map((d) => readFile(join(d, 'm.txt'), 'utf8'))), ['10\n', '20\n', '30\n', '40\n']);
});

test('bwrap: the event loop keeps running while a command does', async (t) => {
  const dir = await workFolder(bwrap);
  let ticks = 0;
  let last = performance.now();
  let longestGap = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
    ticks++;
  }, 10);
  const r = await run(bwrap, dir, 'sleep 1; echo slept');
  clearInterval(timer);
  t.is(r.stdout, 'slept\n');
  // A run that held the loop would show one gap as long as the whole run. The count of ticks is no
  // measure: other tests share the two cores and delay each tick.
  t.true(ticks >= 3 && longestGap < 0.75 * r.durationMs, `${ticks} ticks in ${r.durationMs} ms, longest gap ${Math.round(longestGap)} ms`);
});

test('bwrap description and owner say how it runs', (t) => {
  t.regex(bwrap.description, /^bubblewrap 0\.\d+\.\d+: /);
  if (process.getuid!() === 0) {
    t.deepEqual(bwrap.owner, { uid: 65534, gid: 65534 });
    t.regex(bwrap.description, /cgroups v[12]/);
  }
  t.regex(plain.description, /RLIMIT_AS/);
  t.regex(plain.description, /RLIMIT_NPROC/);
});

test.serial('bwrap without cgroups: memory, processes and file size are held by rlimits', async (t) => {
  const dir = await workFolder(plain);
  // A wide process margin: other test files' sandboxes (fork bombs of 32 included) run as the
  // same uid at the same time, and RLIMIT_NPROC counts them all.
  const limits = { memoryBytes: 128 * 1024 * 1024, maxProcesses: 400, maxDiskBytes: 1024 * 1024 };
  const r = await run(plain, dir, 'ulimit -v; ulimit -p; ulimit -f; python3 -c "b = bytearray(256 << 20)"', { limits });
  const [as, nproc, fsize] = r.stdout.trim().split('\n');
  t.is(Number(as), 128 * 1024, r.stderr);
  t.true(Number.isFinite(Number(nproc)) && Number(nproc) >= 400, `a process limit is set: ${nproc}`);
  t.is(Number(fsize), 1024 * 1024 / 512, 'dash counts 512-byte blocks');
  t.not(r.exitCode, 0);
  t.regex(r.stderr, /MemoryError/);
  const big = await run(plain, dir, 'head -c 5M /dev/zero > big', { limits });
  t.not(big.exitCode, 0);
  t.true((await stat(join(dir, 'big'))).size <= 1024 * 1024);
});

// Both rlimit tests run alone in this file: RLIMIT_NPROC counts every task of the uid, so the
// 45 processes the second one holds would starve the first one's forks if they overlapped.
test.serial('bwrap without cgroups: processes other runs of the same uid hold do not count against this run', async (t) => {
  const uid = plain.owner?.uid ?? process.getuid!();
  // Stands for other sandboxes running as the same uid: more processes than this run may make.
  const others = spawn('setpriv', [...(plain.owner ? [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups'] : []), 'sh', '-c', `for i in $(seq 45); do sleep 60 & done; echo ready; wait # ${MARKER}`], {
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true,
  });
  try {
    await new Promise<void>((resolve, reject) => {
      others.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
      others.on('exit', () => reject(new Error('the process holder ended early')));
    });
    t.true((await tasksOfUid(uid)) >= 45);
    const dir = await workFolder(plain);
    const r = await run(plain, dir, 'for i in 1 2 3 4 5; do sleep 0 & done; wait; echo ok', { limits: { maxProcesses: 40 } });
    t.is(r.exitCode, 0, r.stderr);
    t.is(r.stdout, 'ok\n');
  } finally {
    process.kill(-others.pid!, 'SIGKILL');
  }
});

test('a working folder the sandbox uid cannot reach is a clear error, not a bare exit 1', async (t) => {
  if (!bwrap.owner) return t.pass('only a root service drops to another uid');
  const closed = await mkdtemp(join(tmpdir(), `${MARKER}-closed-`));
  try {
    await chmod(closed, 0o700);
    const dir = join(closed, 'ws');
    await writeFile(join(closed, 'x'), '');
    await t.throwsAsync(run(bwrap, dir, 'true'), { message: /not reachable by uid 65534: .* has mode 0700/ });
  } finally {
    await rm(closed, { recursive: true, force: true });
  }
});

test('selectRuntime: auto takes bubblewrap where it works, just-bash on request', async (t) => {
  const logged: unknown[] = [];
  const logger = { info: (o: unknown) => logged.push(o), warn: (o: unknown) => logged.push(o) } as never;
  const auto = await selectRuntime('auto', logger);
  t.is(auto.name, 'bwrap');
  t.deepEqual(logged, [{ sandbox: runtimeSummary(auto) }]);
  await (auto as BwrapRuntime).close();
  t.deepEqual(await (auto as BwrapRuntime).leftoverCgroups(), [], 'closed: its pooled cgroups are gone');
  const jb = await selectRuntime('just-bash');
  t.is(jb.name, 'just-bash');
  t.regex(jb.description, /CNS_SANDBOX=just-bash/);
  t.is(jb.owner, null);
  await (jb as JustBashRuntime).close();
});

test('selectRuntime: bwrap that cannot run here is a start-up error when forced, a fallback on auto', async (t) => {
  const closed = await mkdtemp(join(tmpdir(), `${MARKER}-probe-`));
  try {
    await chmod(closed, 0o700);
    // The probe runs where the working folders will live: here bwrap (as uid 65534) cannot reach them.
    if (process.getuid!() === 0) {
      await t.throwsAsync(selectRuntime('bwrap', undefined, { probeDir: closed }), { message: /^CNS_SANDBOX=bwrap but bubblewrap cannot run commands here: .*not reachable/ });
      const warned: unknown[] = [];
      const auto = await selectRuntime('auto', { info: () => undefined, warn: (o: unknown) => warned.push(o) } as never, { probeDir: closed });
      t.is(auto.name, 'just-bash');
      t.regex(auto.description, /bubblewrap is not usable here \(.*not reachable/);
      t.is(warned.length, 1);
      await (auto as JustBashRuntime).close();
    } else {
      t.pass('a non-root service reaches its own folders');
    }
  } finally {
    await rm(closed, { recursive: true, force: true });
  }
});

test('parseRuntimeChoice reads CNS_SANDBOX', (t) => {
  t.is(parseRuntimeChoice(undefined), 'auto');
  t.is(parseRuntimeChoice(''), 'auto');
  t.is(parseRuntimeChoice('bwrap'), 'bwrap');
  t.is(parseRuntimeChoice('just-bash'), 'just-bash');
  t.throws(() => parseRuntimeChoice('docker'), { message: /CNS_SANDBOX must be one of auto, bwrap, just-bash/ });
});

test('output capture keeps the first bytes and never cuts a character in two', (t) => {
  const out = new CappedOutput(5);
  out.push(Buffer.from('abc'));
  out.push(Buffer.from('d✓e'));
  out.push(Buffer.from('more'));
  t.true(out.truncated);
  t.is(out.text(), 'abcd', 'the ✓ (3 bytes) did not fit whole');
  const exact = new CappedOutput(4);
  exact.push(Buffer.from('abcd'));
  t.false(exact.truncated);
  t.is(exact.text(), 'abcd');
  t.deepEqual(capText('日本語', 7), { text: '日本', truncated: true });
  t.deepEqual(capText('short', 100), { text: 'short', truncated: false });
});
