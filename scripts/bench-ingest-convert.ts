/**
 * Issue 15's conversion figures, through the ConversionPool (one child process per worker):
 *   1. PDF with a text layer: pages/s of ONE worker on a generated 200-page PDF (40 lines a
 *      page), warm (median of 5 runs) — target >= 20;
 *   2. peak RSS increase of a worker converting a ~50 MiB PDF (500 pages, each with text and a
 *      100 KiB image, which is what makes real PDFs that large): measured in a fresh process
 *      that converts the same way a pool child does (getrusage's peak RSS minus the RSS before
 *      the conversion, after a warm-up) — target < 300 MiB;
 *   3. OCR of one 1-page PNG at 150 dpi (1275 × 1650, 30 lines of text): cold (the worker loads
 *      the model) and warm — target < 5 s.
 * Run when the machine is idle (load < 1.5): node --import=tsx scripts/bench-ingest-convert.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConvertInput } from '../src/ingest/converters/converter.ts';
import { ConversionPool } from '../src/ingest/worker/conversionPool.ts';
import { textPages, writePdf } from '../test/ingest/fixtures/pdf.ts';
import { textPng } from '../test/ingest/fixtures/png.ts';

const MiB = 1024 * 1024;
const limits = { maxDecompressedBytes: 50 * MiB, maxPdfPages: 2000, maxNodeBytes: 64 * MiB };

// Child mode: convert one file in this process and print the memory figures.
if (process.argv[2] === '--rss-child') {
  const { convert } = await import('../src/ingest/converters/index.ts');
  const [warmFile, bigFile] = process.argv.slice(3) as [string, string];
  await convert({ file: warmFile, name: 'warm.pdf', mode: 'markdown', limits });
  global.gc?.();
  const before = process.memoryUsage.rss();
  const started = performance.now();
  const out = await convert({ file: bigFile, name: 'big.pdf', mode: 'markdown', limits });
  const ms = performance.now() - started;
  const peak = process.resourceUsage().maxRSS * 1024;
  const markdown = out.nodes[0]!.type === 'markdown' ? out.nodes[0]!.content : '';
  console.log(JSON.stringify({ before, peak, ms, markdownBytes: Buffer.byteLength(markdown) }));
  process.exit(0);
}

const deadline = setTimeout(() => {
  console.error('bench-ingest-convert: aborted after 10 minutes');
  process.exit(2);
}, 10 * 60_000);
deadline.unref();

const load = loadavg()[0]!;
console.log(`load average ${load.toFixed(2)}${load >= 1.5 ? ' — the machine is busy: figures will be low' : ''}`);
const work = mkdtempSync(join(tmpdir(), 'cns-bench-ingest-'));
const f1 = (n: number) => n.toFixed(1);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  const pool = new ConversionPool({ size: 1 });

  // 1. Pages per second, one worker.
  const pdf200 = join(work, 'text-200.pdf');
  writePdf(pdf200, textPages(200));
  const input: ConvertInput = { file: pdf200, name: 'text-200.pdf', mode: 'markdown', limits };
  await pool.run(input);
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    await pool.run(input);
    times.push(performance.now() - started);
  }
  const ms = median(times);
  console.log(`1. PDF text layer, 1 worker: 200 pages in ${Math.round(ms)} ms (median of 5) = ${f1((200 / ms) * 1000)} pages/s (target >= 20)`);

  // 2. Peak RSS of a worker converting a ~50 MiB PDF.
  const big = join(work, 'big-50mib.pdf');
  writePdf(big, textPages(500), { imageBytesPerPage: 100 * 1024 });
  const warm = join(work, 'warm.pdf');
  writePdf(warm, textPages(2));
  const child = JSON.parse(
    execFileSync(process.execPath, ['--import=tsx', '--expose-gc', '--max-old-space-size=1024', new URL(import.meta.url).pathname, '--rss-child', warm, big], { encoding: 'utf8' }),
  ) as { before: number; peak: number; ms: number; markdownBytes: number };
  console.log(
    `2. ${f1(statSync(big).size / MiB)} MiB PDF (500 pages): converted in ${Math.round(child.ms)} ms; RSS ${f1(child.before / MiB)} MiB before, peak ${f1(child.peak / MiB)} MiB: ` +
      `+${f1((child.peak - child.before) / MiB)} MiB (target < 300)`,
  );

  // 3. One page of OCR at 150 dpi.
  // Lines of different words and lengths, as on a real page (identical lines line up in columns,
  // which page segmentation reads as a table).
  const words = 'INVOICE TOTAL AMOUNT DUE PAYMENT TERMS NET THIRTY DAYS ORDER NUMBER CUSTOMER ACCOUNT SHIPPING ADDRESS TAX RATE SUBTOTAL DISCOUNT'.split(' ');
  const lines = Array.from({ length: 30 }, (_, i) => {
    const count = 4 + (i % 5);
    return [...Array.from({ length: count }, (_, w) => words[(i * 7 + w * 3) % words.length]), `${1000 + i * 37}.${(i * 13) % 100}`].join(' ');
  });
  const png = join(work, 'page-150dpi.png');
  writeFileSync(png, textPng(lines, { scale: 3, width: 1275, height: 1650 }));
  const ocrInput: ConvertInput = { file: png, name: 'page.png', mode: 'markdown', limits };
  let started = performance.now();
  const first = await pool.run(ocrInput);
  const cold = performance.now() - started;
  started = performance.now();
  await pool.run(ocrInput);
  const warmOcr = performance.now() - started;
  const text = first.nodes[0]!.type === 'markdown' ? first.nodes[0]!.content : '';
  // The 5×7 bitmap font at 10 pt is harder to read than real type (its V looks like a U).
  const expected = lines.join(' ').split(' ');
  const read = new Map<string, number>();
  for (const w of text.split(/\s+/)) read.set(w, (read.get(w) ?? 0) + 1);
  const right = expected.filter((w) => (read.get(w) ?? 0) > 0 && read.set(w, read.get(w)! - 1)).length;
  console.log(
    `3. OCR, 1 page 1275×1650 (150 dpi), 30 lines: ${Math.round(cold)} ms cold (model load included), ${Math.round(warmOcr)} ms warm (target < 5000); ` +
      `${right}/${expected.length} words read right`,
  );

  await pool.close();
} finally {
  rmSync(work, { recursive: true, force: true });
}
