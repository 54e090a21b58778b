import test from 'ava';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { ConversionError } from '../../src/ingest/converters/converter.ts';
import type { ConvertInput, Progress } from '../../src/ingest/converters/converter.ts';
import { ConversionPool } from '../../src/ingest/worker/conversionPool.ts';
import { textPages, writeBombPdf, writePdf } from './fixtures/pdf.ts';
import { limits, workDir } from './fixtures/workDir.ts';

const work = workDir('pool');
const bigPdf = work.path('big.pdf');
writePdf(bigPdf, textPages(400));
const pdfInput: ConvertInput = { file: bigPdf, name: 'big.pdf', mode: 'markdown', limits };
/** Enough pages to report progress before it ends, for the tests where the length does not matter. */
const shortPdf = work.path('short.pdf');
writePdf(shortPdf, textPages(60));
const shortInput: ConvertInput = { ...pdfInput, file: shortPdf, name: 'short.pdf' };

/** This process's child processes (the pool's conversion children), from /proc. */
function childPids(): number[] {
  const text = readFileSync(`/proc/self/task/${process.pid}/children`, 'utf8').trim();
  return text ? text.split(' ').map(Number) : [];
}

async function until(condition: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test.serial('conversions run in child processes and report progress; the event loop keeps ticking', async (t) => {
  const pool = new ConversionPool({ size: 2, spare: false });
  t.teardown(() => pool.close());
  // Warm up both children (a first job loads the converters in its child).
  await Promise.all([pool.run(shortInput), pool.run(shortInput)]);
  // Ticks every 10 ms; the gaps between them show how long the event loop was held.
  const gaps: number[] = [];
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
  }, 10);
  const progress: Progress[] = [];
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const [a, b] = await Promise.all([pool.run(pdfInput, { onProgress: (p) => progress.push(p) }), pool.run(pdfInput)]);
  const took = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(ticker);
  gaps.sort((x, y) => x - y);
  const p99 = gaps[Math.floor(gaps.length * 0.99)]!;
  const ownCpuMs = (cpu.user + cpu.system) / 1000;
  t.log(`two 400-page PDFs in ${Math.round(took)} ms; tick gaps p99 ${p99.toFixed(1)} ms, worst ${gaps.at(-1)!.toFixed(1)} ms; this process used ${Math.round(ownCpuMs)} ms of CPU`);
  // The CPU time says the conversions did not run here, whatever else the machine is doing. The
  // gaps between ticks depend on how busy the machine is, so they are bounded by the work itself:
  // a conversion run on this event loop would hold it for about half of `took` in one gap.
  t.true(ownCpuMs < took * 0.15, `this process used ${ownCpuMs} ms of CPU in ${took} ms`);
  t.true(gaps.at(-1)! < took / 8, `the longest tick gap (${gaps.at(-1)} ms) is far from a conversion's length (${took / 2} ms)`);
  t.deepEqual(a, b);
  const content = a.nodes[0]!.type === 'markdown' ? a.nodes[0]!.content : '';
  t.true(content.includes('<!-- page 400 -->\n\nPage 400 line 1:'));
  t.true(progress.length >= 1);
  t.deepEqual(progress.at(-1), { done: 400, total: 400, unit: 'pages' });
  t.true(progress.every((p) => p.unit === 'pages' && p.total === 400));
  t.deepEqual(pool.stats(), { size: 2, busy: 0, queued: 0 });
  t.is(childPids().length, 2);
});

test.serial('a ConversionError from the child keeps its code', async (t) => {
  const pool = new ConversionPool({ size: 1 });
  t.teardown(() => pool.close());
  const junk = work.path('junk.pdf');
  writeFileSync(junk, 'not a pdf');
  const err = await t.throwsAsync(pool.run({ ...pdfInput, file: junk, name: 'junk.pdf' }), { instanceOf: ConversionError });
  t.is(err.code, 'corrupt');
});

test.serial('cancel stops a running conversion (its process is killed) and the pool goes on', async (t) => {
  const pool = new ConversionPool({ size: 1, spare: false });
  t.teardown(() => pool.close());
  const tiny = work.path('tiny.pdf');
  writePdf(tiny, [['warm-up']]);
  await pool.run({ ...pdfInput, file: tiny });
  const before = childPids();
  t.is(before.length, 1);
  const controller = new AbortController();
  const cancelled = pool.run(shortInput, { signal: controller.signal, onProgress: () => controller.abort() });
  const err = await t.throwsAsync(cancelled);
  t.is(err.name, 'AbortError');
  await until(() => !existsSync(`/proc/${before[0]}`) || readFileSync(`/proc/${before[0]}/stat`, 'utf8').includes(') Z'), 'the cancelled child to end');
  const out = await pool.run(shortInput);
  t.is(out.nodes.length, 1);
  t.notDeepEqual(childPids(), before);
});

test.serial('cancel of a queued job: it never runs; an aborted signal is refused at once', async (t) => {
  const pool = new ConversionPool({ size: 1 });
  t.teardown(() => pool.close());
  const controller = new AbortController();
  const first = pool.run(shortInput);
  const second = pool.run(shortInput, { signal: controller.signal, onProgress: () => t.fail('the cancelled job ran') });
  t.is(pool.stats().queued, 1);
  controller.abort();
  t.is((await t.throwsAsync(second)).name, 'AbortError');
  t.is(pool.stats().queued, 0);
  t.is((await first).nodes.length, 1);
  t.is((await t.throwsAsync(pool.run(shortInput, { signal: AbortSignal.abort() }))).name, 'AbortError');
});

test.serial('a crashed child fails its job with a clear error and is replaced', async (t) => {
  const pool = new ConversionPool({ size: 1, spare: false });
  t.teardown(() => pool.close());
  let killed = false;
  const job = pool.run(shortInput, {
    onProgress: () => {
      if (killed) return;
      killed = true;
      for (const pid of childPids()) process.kill(pid, 'SIGSEGV');
    },
  });
  const err = await t.throwsAsync(job, { instanceOf: ConversionError });
  t.is(err.code, 'crashed');
  t.regex(err.message, /stopped during the conversion: it was killed by SIGSEGV/);
  t.is((await pool.run(shortInput)).nodes.length, 1);
});

test.serial('a child that runs out of heap fails its job as crashed: out of memory', async (t) => {
  const pool = new ConversionPool({ size: 1, heapMb: 96 });
  t.teardown(() => pool.close());
  const csv = work.path('wide.csv');
  const row = Array.from({ length: 40 }, (_, i) => `value number ${i}`).join(',');
  writeFileSync(csv, Array.from({ length: 40 }, (_, i) => `column${i}`).join(',') + '\n' + `${row}\n`.repeat(100_000));
  const err = await t.throwsAsync(pool.run({ file: csv, name: 'wide.csv', mode: 'json', limits: { ...limits, maxNodeBytes: 2 ** 31 } }), { instanceOf: ConversionError });
  t.is(err.code, 'crashed');
  t.regex(err.message, /ran out of memory/);
  t.is((await pool.run(shortInput)).nodes.length, 1);
});

test.serial('close rejects waiting and running jobs and ends the children', async (t) => {
  const pool = new ConversionPool({ size: 1, spare: false });
  const running = pool.run(pdfInput);
  const waiting = pool.run(pdfInput);
  await until(() => childPids().length === 1, 'the child to start');
  const pids = childPids();
  await pool.close();
  await t.throwsAsync(running, { message: /pool is closed/ });
  await t.throwsAsync(waiting, { message: /pool is closed/ });
  await t.throwsAsync(pool.run(pdfInput), { message: /pool is closed/ });
  t.false(childPids().some((pid) => pids.includes(pid)));
});

test.serial('a conversion past timeoutMs fails "timeout", and its process has exited when the job fails', async (t) => {
  const pool = new ConversionPool({ size: 1, spare: false, timeoutMs: 1000 });
  t.teardown(() => pool.close());
  const bomb = work.path('bomb.pdf');
  writeBombPdf(bomb, 200, 1024 * 1024);
  const job = pool.run({ file: bomb, name: 'bomb.pdf', mode: 'markdown', limits: { ...limits, maxDecompressedBytes: 2 ** 40 } });
  const failed = t.throwsAsync(job, { instanceOf: ConversionError });
  await until(() => childPids().length === 1, 'the child to start');
  const pids = childPids();
  const err = await failed;
  t.is(err.code, 'timeout');
  t.regex(err.message, /longer than 1 s/);
  t.false(existsSync(`/proc/${pids[0]}`), 'its process is gone');
  const small = work.path('small.txt');
  writeFileSync(small, 'small');
  t.is((await pool.run({ file: small, name: 'small.txt', mode: null, limits })).nodes.length, 1, 'the pool goes on');
});

test.serial('while every slot converts a warm spare waits: the job after a kill runs on it at once', async (t) => {
  const pool = new ConversionPool({ size: 1 });
  t.teardown(() => pool.close());
  // Which child converts is the pool's own business: read from its running jobs.
  const converting = () => [...(pool as unknown as { running: Map<{ process: { pid: number } }, unknown> }).running.keys()].map((c) => c.process.pid);
  const controller = new AbortController();
  let started = false;
  const long = pool.run(pdfInput, { signal: controller.signal, onProgress: () => (started = true) });
  await until(() => started && childPids().length === 2, 'the conversion and a spare');
  const [killed] = converting();
  const [spare] = childPids().filter((pid) => pid !== killed);
  controller.abort();
  await t.throwsAsync(long);
  let ranOn: number[] = [];
  const next = await pool.run(shortInput, { onProgress: () => (ranOn = ranOn.length ? ranOn : converting()) });
  t.is(next.nodes.length, 1);
  t.deepEqual(ranOn, [spare], 'the spare took the next job');
  t.false(existsSync(`/proc/${killed}`) && !readFileSync(`/proc/${killed}/stat`, 'utf8').includes(') Z'), 'the killed child is gone');
  t.true(childPids().length <= 2, 'never more than size + 1 children');
});
