import test from 'ava';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createServer, type Server } from 'node:net';
import { lstat, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { JustBashRuntime } from '../../src/sandbox/runtime/justBashRuntime.ts';
import { justBashChildren, MARKER, removeFolders, run, secretFolder, workFolder } from './runtimeHelpers.ts';

const CANARY = `canary-${MARKER}-${Math.random().toString(36).slice(2)}`;
process.env.CNS_RT_JB_CANARY = CANARY;

const jb = new JustBashRuntime('tests');
let server: Server;
let serverPort = 0;
let connections = 0;

test.before(async () => {
  server = createServer((socket) => {
    connections++;
    socket.on('error', () => undefined);
    socket.end('hello\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  serverPort = (server.address() as { port: number }).port;
});

test.after.always(async (t) => {
  server?.close();
  await jb.close();
  t.deepEqual(await justBashChildren(), [], 'no just-bash child is left');
  await removeFolders();
});

const FILES = {
  'notes.md': '# Notes\nalpha beta\ngamma alpha\n',
  'data.json': '{"items":[{"n":1},{"n":2},{"n":3}]}\n',
  'table.csv': 'a,b\n1,2\n3,4\n',
};

test.serial('just-bash: reads the real folder with ls, cat, grep, sed, awk, jq', async (t) => {
  const dir = await workFolder(jb, FILES);
  const r = await run(
    jb,
    dir,
    [
      'ls',
      'cat notes.md | head -1',
      'grep -c alpha notes.md',
      "sed -n 's/gamma/GAMMA/p' notes.md",
      "awk -F, 'NR>1 {s+=$2} END {print s}' table.csv",
      "jq '[.items[].n] | add' data.json",
      'pwd',
    ].join('; '),
  );
  t.is(r.exitCode, 0, r.stderr);
  t.is(r.stdout, 'data.json\nnotes.md\ntable.csv\n# Notes\n2\nGAMMA alpha\n6\n6\n/work\n');
  t.false(r.timedOut);
  t.is(jb.owner, null);
});

test.serial('just-bash: writes, folders, moves and deletions land on disk', async (t) => {
  const dir = await workFolder(jb, FILES);
  const r = await run(jb, dir, 'mkdir -p out/deep && echo "written ✓" > out/deep/new.txt && echo more >> notes.md && mv table.csv moved.csv && rm data.json && echo tmp > /tmp/t && cat /tmp/t');
  t.is(r.exitCode, 0, r.stderr);
  t.is(r.stdout, 'tmp\n');
  t.is(await readFile(join(dir, 'out/deep/new.txt'), 'utf8'), 'written ✓\n');
  t.is(await readFile(join(dir, 'notes.md'), 'utf8'), `${FILES['notes.md']}more\n`);
  t.is(await readFile(join(dir, 'moved.csv'), 'utf8'), FILES['table.csv']);
  await t.throwsAsync(stat(join(dir, 'data.json')), { code: 'ENOENT' });
  await t.throwsAsync(stat(join(dir, 'tmp')), { code: 'ENOENT' }, '/tmp is not the working folder');
});

test.serial('just-bash: readOnly refuses writes with a non-zero exit code and leaves the folder as it was', async (t) => {
  const dir = await workFolder(jb, FILES);
  for (const command of ['echo x > new.txt', 'echo more >> notes.md', 'rm data.json', 'mkdir d', 'mv notes.md n.md', 'cp notes.md copy.md']) {
    const r = await run(jb, dir, command, { readOnly: true });
    t.not(r.exitCode, 0, command);
    t.regex(r.stderr, /EROFS|read-only/, command);
  }
  t.is(await readFile(join(dir, 'notes.md'), 'utf8'), FILES['notes.md']);
  t.is(await readFile(join(dir, 'data.json'), 'utf8'), FILES['data.json']);
  for (const name of ['new.txt', 'd', 'n.md', 'copy.md']) await t.throwsAsync(stat(join(dir, name)), { code: 'ENOENT' }, name);
  const read = await run(jb, dir, 'cat data.json; echo tmp > /tmp/ok && cat /tmp/ok', { readOnly: true });
  t.is(read.stdout, `${FILES['data.json']}tmp\n`, 'reading, and writing /tmp, still work');
});

test.serial('just-bash: an endless loop ends at the timeout without stalling the event loop', async (t) => {
  const dir = await workFolder(jb);
  await run(jb, dir, 'true'); // a warm worker, so the timing below is the command's
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const r = await run(jb, dir, 'while true; do :; done', { limits: { timeoutMs: 800 } });
  clearInterval(timer);
  t.true(r.timedOut);
  t.is(r.exitCode, 124);
  t.true(r.durationMs >= 800 && r.durationMs < 2500, `ran ${r.durationMs} ms`);
  t.true(ticks >= 20, `only ${ticks} timer ticks in ${r.durationMs} ms: the event loop was blocked`);
  const next = await run(jb, dir, 'echo fine');
  t.is(next.stdout, 'fine\n');
});

test.serial('just-bash: output is cut at the cap and said so', async (t) => {
  const dir = await workFolder(jb);
  const r = await run(jb, dir, 'seq 1 20000; seq 1 20000 >&2', { limits: { maxOutputBytes: 1000 } });
  t.is(r.exitCode, 0, r.stderr.slice(0, 200));
  t.deepEqual(r.truncated, { stdout: true, stderr: true });
  t.is(r.stdout.length, 1000);
  t.is(r.stderr.length, 1000);
  t.true(r.stdout.startsWith('1\n2\n3\n'));
});

test.serial('just-bash: writes past maxDiskBytes fail and the file stays under it', async (t) => {
  const dir = await workFolder(jb);
  const maxDiskBytes = 10_000;
  const r = await run(jb, dir, 'seq 1 100000 > big.txt', { limits: { maxDiskBytes } });
  t.not(r.exitCode, 0);
  t.regex(r.stderr, /ENOSPC/);
  const size = await stat(join(dir, 'big.txt')).then((s) => s.size, () => 0);
  t.true(size <= maxDiskBytes, `${size} bytes on disk`);
  const many = await run(jb, dir, 'for i in $(seq 1 20); do seq 1 200 > f$i.txt || exit 1; done', { limits: { maxDiskBytes } });
  t.not(many.exitCode, 0, 'the cap is on the total written, not per file');
  const sink = await run(jb, dir, 'seq 1 100000 > /dev/null && seq 1 100000 >> /dev/null && echo quiet', { limits: { maxDiskBytes } });
  t.is(sink.stdout, 'quiet\n', '/dev/null takes everything and counts nothing');
});

test.serial('just-bash: no way out of the folder: .., absolute paths, symlinks', async (t) => {
  const data = await secretFolder(`secret-${MARKER}`);
  const dir = await workFolder(jb, { 'a.txt': 'a\n' });
  await symlink('/etc/passwd', join(dir, 'passwd-link'));
  await symlink(data, join(dir, 'data-link'));
  const r = await run(
    jb,
    dir,
    `cat ../../etc/passwd; cat /etc/passwd; cat ${join(data, 'secret.txt')}; cat ../${join(data, 'secret.txt')}; cat passwd-link; cat data-link/secret.txt; cd ../..; pwd; ls /`,
  );
  t.false(r.stdout.includes('root:'), 'no /etc/passwd');
  t.false(r.stdout.includes('secret-'), 'no data folder');
  t.is(r.stdout, '/\ndev\ntmp\nwork\n', 'the root is virtual: /dev (null only), /tmp and /work');
  const link = await run(jb, dir, 'ln -s /etc/passwd made-link || ln -s ../.. up');
  t.not(link.exitCode, 0);
  await t.throwsAsync(lstat(join(dir, 'made-link')), { code: 'ENOENT' });
  await t.throwsAsync(lstat(join(dir, 'up')), { code: 'ENOENT' });
  const write = await run(jb, dir, 'echo x > passwd-link; echo y > data-link/secret.txt');
  t.not(write.exitCode, 0);
  t.is(await readFile(join(data, 'secret.txt'), 'utf8'), `secret-${MARKER}`);
});

test.serial('just-bash: no network and nothing of the service environment', async (t) => {
  const dir = await workFolder(jb);
  connections = 0;
  const r = await run(jb, dir, `curl -s http://127.0.0.1:${serverPort}/; wget http://127.0.0.1:${serverPort}/; python3 -c 1; node -e 1; env`);
  t.regex(r.stderr, /curl: command not found/);
  t.is(connections, 0);
  t.false(r.stdout.includes(CANARY));
  t.false(r.stdout.includes('CNS_RT_JB_CANARY'));
  t.regex(r.stdout, /^PATH=/m);
});

test.serial('just-bash: a memory hog is stopped at the limit and the next run works', async (t) => {
  const dir = await workFolder(jb);
  const r = await run(jb, dir, 'x=aaaaaaaaaaaaaaaa; while true; do x=$x$x; done', { limits: { memoryBytes: 64 * 1024 * 1024, timeoutMs: 20_000 } });
  t.not(r.exitCode, 0);
  t.false(r.timedOut);
  t.regex(r.stderr, /memory|string length|size limit/i);
  const next = await run(jb, dir, 'echo fine', { limits: { memoryBytes: 64 * 1024 * 1024 } });
  t.is(next.stdout, 'fine\n');
});

test.serial('just-bash: a child that dies during a command (OOM killer, V8 abort) is a killed run, and the next run works', async (t) => {
  const dir = await workFolder(jb);
  await run(jb, dir, 'true');
  const running = run(jb, dir, 'while true; do :; done', { limits: { timeoutMs: 30_000 } });
  // The host kills the child: every just-bash child of this process.
  const deadline = Date.now() + 30_000;
  let children: number[] = [];
  while (children.length === 0 && Date.now() < deadline) {
    children = await justBashChildren();
    for (const pid of children) process.kill(pid, 'SIGKILL');
  }
  const r = await running;
  t.is(r.exitCode, 137);
  t.false(r.timedOut);
  t.regex(r.stderr, /just-bash ended \(SIGKILL\)/);
  t.is((await run(jb, dir, 'echo fine')).stdout, 'fine\n');
});

test.serial('just-bash: stdin, exit codes and an abort signal', async (t) => {
  const dir = await workFolder(jb);
  const piped = await run(jb, dir, 'tr a-z A-Z', { stdin: 'hello\n' });
  t.is(piped.stdout, 'HELLO\n');
  const empty = await run(jb, dir, 'cat | wc -c');
  t.is(empty.stdout.trim(), '0');
  const code = await run(jb, dir, 'echo oops >&2; exit 3');
  t.is(code.exitCode, 3);
  t.is(code.stderr, 'oops\n');
  const aborted = await run(jb, dir, 'while true; do :; done', { signal: AbortSignal.timeout(300) });
  t.is(aborted.exitCode, 137);
  t.false(aborted.timedOut);
});

test.serial('just-bash: idle warm children do not keep the service process alive', async (t) => {
  const dir = await workFolder(jb);
  const runtimeUrl = new URL('../../src/sandbox/runtime/justBashRuntime.ts', import.meta.url).href;
  const script = `const { JustBashRuntime } = await import(${JSON.stringify(runtimeUrl)});
    const r = await new JustBashRuntime().run({ command: 'echo hi', workDir: ${JSON.stringify(dir)}, readOnly: false,
      limits: { timeoutMs: 5000, memoryBytes: 64 << 20, maxProcesses: 8, maxOutputBytes: 100, maxDiskBytes: 100 } });
    console.log(r.stdout.trim());`;
  const started = Date.now();
  const { stdout } = await promisify(execFile)(process.execPath, ['--import=tsx', '--input-type=module', '-e', script], { timeout: 30_000 });
  t.is(stdout.trim(), 'hi');
  t.true(Date.now() - started < 30_000, 'the process ended by itself after the run');
});

test.serial('just-bash: files written in a run are readable by the service', async (t) => {
  const dir = await workFolder(jb);
  await writeFile(join(dir, 'in.json'), '{"a":1}');
  const r = await run(jb, dir, "jq '.a + 1' in.json > out.txt");
  t.is(r.exitCode, 0, r.stderr);
  t.is(await readFile(join(dir, 'out.txt'), 'utf8'), '2\n');
  t.is((await stat(join(dir, 'out.txt'))).uid, process.getuid!());
});
