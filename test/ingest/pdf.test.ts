import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { ConversionError, convert } from '../../src/ingest/converters/index.ts';
import type { Progress } from '../../src/ingest/converters/converter.ts';
import { writeBombPdf, writePdf } from './fixtures/pdf.ts';
import { limits, workDir } from './fixtures/workDir.ts';

const work = workDir('pdf');

test('a PDF text layer becomes Markdown with a marker per page, paragraphs kept', async (t) => {
  const file = work.path('report.pdf');
  writePdf(file, [['Annual report (2024)', 'Revenue grew \\ by 12%.', '', 'A new paragraph.'], ['Second page text']]);
  const progress: Progress[] = [];
  const out = await convert({ file, name: 'report.pdf', mode: 'markdown', limits }, (p) => progress.push(p));
  t.deepEqual(out.warnings, []);
  t.is(out.nodes.length, 1);
  const node = out.nodes[0]!;
  t.is(node.name, 'report.md');
  t.is(node.type, 'markdown');
  t.is(
    node.type === 'markdown' ? node.content : null,
    '<!-- page 1 -->\n\nAnnual report (2024)\nRevenue grew \\ by 12%.\n\nA new paragraph.\n\n<!-- page 2 -->\n\nSecond page text\n',
  );
  t.deepEqual(progress.at(-1), { done: 2, total: 2, unit: 'pages' });
});

test('pages without a text layer are named in a warning that says why there is no OCR', async (t) => {
  const file = work.path('scan.pdf');
  writePdf(file, [['Cover'], null, null, ['Middle'], null]);
  const out = await convert({ file, name: 'scan.pdf', mode: 'markdown', limits });
  t.is(out.warnings.length, 1);
  t.regex(out.warnings[0]!, /^pages 2-3, 5 have no text layer/);
  t.regex(out.warnings[0]!, /canvas/);
  const content = out.nodes[0]!.type === 'markdown' ? out.nodes[0]!.content : '';
  t.true(content.includes('<!-- page 3 -->\n\n<!-- page 4 -->\n\nMiddle'));
});

test('a password-protected PDF fails as encrypted', async (t) => {
  const file = work.path('locked.pdf');
  writePdf(file, [['secret']], { encrypted: true });
  const err = await t.throwsAsync(convert({ file, name: 'locked.pdf', mode: 'markdown', limits }), { instanceOf: ConversionError });
  t.is(err.code, 'encrypted');
  t.regex(err.message, /password/);
});

test('a file that is not a PDF, or a cut one, fails as corrupt', async (t) => {
  const junk = work.path('junk.pdf');
  writeFileSync(junk, 'this is not a PDF at all');
  const e1 = await t.throwsAsync(convert({ file: junk, name: 'junk.pdf', mode: 'markdown', limits }), { instanceOf: ConversionError });
  t.is(e1.code, 'corrupt');
  const whole = work.path('whole.pdf');
  writePdf(whole, [['some text']]);
  const cut = work.path('cut.pdf');
  writeFileSync(cut, readFileSync(whole).subarray(0, 60));
  const e2 = await t.throwsAsync(convert({ file: cut, name: 'cut.pdf', mode: 'markdown', limits }), { instanceOf: ConversionError });
  t.is(e2.code, 'corrupt');
});

test('a PDF whose text would exceed the node limit fails as too_large', async (t) => {
  const file = work.path('long.pdf');
  writePdf(file, Array.from({ length: 20 }, () => Array.from({ length: 40 }, () => 'x'.repeat(80))));
  const err = await t.throwsAsync(convert({ file, name: 'long.pdf', mode: 'markdown', limits: { ...limits, maxNodeBytes: 20_000 } }), { instanceOf: ConversionError });
  t.is(err.code, 'too_large');
  t.regex(err.message, /long\.md .*20000 bytes.*mode raw/);
});

test('a PDF whose pages share one huge Flate stream is refused as too_large before a page is read', async (t) => {
  const file = work.path('bomb.pdf');
  // 2,000 pages, one stream of 64 MiB once inflated: pdf.js would inflate and parse it 2,000 times.
  writeBombPdf(file, 2000, 64 * 1024 * 1024);
  const progress: Progress[] = [];
  const started = performance.now();
  const err = await t.throwsAsync(convert({ file, name: 'bomb.pdf', mode: 'markdown', limits }, (p) => progress.push(p)), { instanceOf: ConversionError });
  t.is(err.code, 'too_large');
  t.regex(err.message, /streams would expand to more than 52428800 bytes .*CNS_INGEST_MAX_DECOMPRESSED_BYTES/);
  t.deepEqual(progress, [], 'no page was read');
  t.log(`refused in ${Math.round(performance.now() - started)} ms`);
});

test('streams are counted once per use: the same pages sharing a small stream convert', async (t) => {
  const file = work.path('shared.pdf');
  writeBombPdf(file, 20, 64 * 1024);
  const out = await convert({ file, name: 'shared.pdf', mode: 'markdown', limits: { ...limits, maxDecompressedBytes: 20 * 64 * 1024 + 1024 } });
  t.is(out.nodes[0]!.type, 'markdown');
  const tight = await t.throwsAsync(convert({ file, name: 'shared.pdf', mode: 'markdown', limits: { ...limits, maxDecompressedBytes: 19 * 64 * 1024 } }), { instanceOf: ConversionError });
  t.is(tight.code, 'too_large', 'twenty uses of 64 KiB do not fit in nineteen');
});

test('a PDF with more pages than maxPdfPages fails as too_many_pages', async (t) => {
  const file = work.path('pages.pdf');
  writePdf(file, Array.from({ length: 12 }, (_, i) => [`page ${i + 1}`]));
  const err = await t.throwsAsync(convert({ file, name: 'pages.pdf', mode: 'markdown', limits: { ...limits, maxPdfPages: 11 } }), { instanceOf: ConversionError });
  t.is(err.code, 'too_many_pages');
  t.regex(err.message, /12 pages, more than the 11 .*CNS_INGEST_MAX_PDF_PAGES/);
  const ok = await convert({ file, name: 'pages.pdf', mode: 'markdown', limits: { ...limits, maxPdfPages: 12 } });
  t.is(ok.nodes.length, 1);
});
