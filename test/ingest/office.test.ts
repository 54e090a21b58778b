import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import ExcelJS from 'exceljs';
import { ConversionError, convert } from '../../src/ingest/converters/index.ts';
import { assertZipWithinLimit } from '../../src/content/archives/zipGuard.ts';
import { writeDocx } from './fixtures/docx.ts';
import { limits, workDir } from './fixtures/workDir.ts';
import { writeZip } from './fixtures/zip.ts';

const work = workDir('office');
const MiB = 1024 * 1024;

test('a DOCX becomes Markdown: headings, paragraphs, and a table with its first row as header', async (t) => {
  const file = work.path('minutes.docx');
  writeDocx(file, [
    { heading: 1, text: 'Board minutes' },
    { text: 'Profit & loss were reviewed.' },
    { heading: 2, text: 'Figures' },
    { table: [['Region', 'Sales'], ['North', '10 | 12'], ['South', '7']] },
  ]);
  const out = await convert({ file, name: 'minutes.docx', mode: 'markdown', limits });
  t.deepEqual(out.warnings, []);
  t.deepEqual(out.nodes, [
    {
      name: 'minutes.md',
      type: 'markdown',
      content:
        '# Board minutes\n\nProfit & loss were reviewed.\n\n## Figures\n\n| Region | Sales |\n| --- | --- |\n| North | 10 \\| 12 |\n| South | 7 |\n',
    },
  ]);
});

test('a DOCX whose zip declares more than the decompressed limit is refused before anything is inflated', async (t) => {
  // The document part really holds a few hundred bytes but declares 4 GB: a converter that
  // inflated it would succeed, so too_large proves the guard read only the central directory.
  const lying = work.path('lying.docx');
  writeDocx(lying, [{ text: 'tiny' }], [{ name: 'word/media/huge.bin', data: 'x', declaredSize: 0xfffffffe }]);
  const err = await t.throwsAsync(convert({ file: lying, name: 'lying.docx', mode: 'markdown', limits }), { instanceOf: ConversionError });
  t.is(err.code, 'too_large');
  t.regex(err.message, /DOCX would expand to more than 52428800 bytes/);

  // A real bomb: 64 MiB of zeros deflate to ~64 KiB.
  const bomb = work.path('bomb.docx');
  writeDocx(bomb, [{ text: 'tiny' }], [{ name: 'word/media/zeros.bin', data: Buffer.alloc(64 * MiB) }]);
  const started = performance.now();
  const e2 = await t.throwsAsync(convert({ file: bomb, name: 'bomb.docx', mode: 'markdown', limits }), { instanceOf: ConversionError });
  t.is(e2.code, 'too_large');
  t.true(performance.now() - started < 1000);
  const sizes = await assertZipWithinLimit(bomb, 100 * MiB, 'DOCX');
  t.true(sizes.declaredBytes > 64 * MiB);
  t.true(sizes.names.has('word/document.xml'));

  // The same bomb declaring 10 bytes: found out while inflating, stopped at the limit.
  const liar = work.path('liar.docx');
  writeDocx(liar, [{ text: 'tiny' }], [{ name: 'word/media/zeros.bin', data: Buffer.alloc(64 * MiB), declaredSize: 10 }]);
  const e3 = await t.throwsAsync(convert({ file: liar, name: 'liar.docx', mode: 'markdown', limits }), { instanceOf: ConversionError });
  t.is(e3.code, 'too_large');
});

test('a DOCX that is not a zip, or a zip without a document, fails as corrupt', async (t) => {
  const junk = work.path('junk.docx');
  writeFileSync(junk, 'not a zip');
  const e1 = await t.throwsAsync(convert({ file: junk, name: 'junk.docx', mode: 'markdown', limits }), { instanceOf: ConversionError });
  t.is(e1.code, 'corrupt');
  t.regex(e1.message, /not a zip/);
  const empty = work.path('empty.docx');
  writeZip(empty, [{ name: 'hello.txt', data: 'hi' }]);
  const e2 = await t.throwsAsync(convert({ file: empty, name: 'empty.docx', mode: 'markdown', limits }), { instanceOf: ConversionError });
  t.is(e2.code, 'corrupt');
});

async function writeWorkbook(file: string): Promise<void> {
  const wb = new ExcelJS.Workbook();
  const sales = wb.addWorksheet('Sales 2024');
  sales.addRow(['Date', 'Region', 'Amount', 'Double', 'Note', '', 'Amount']);
  sales.addRow([new Date(Date.UTC(2024, 2, 1)), 'North', 10, { formula: 'C2*2', result: 20 }, { richText: [{ text: 'bold' }, { text: ' text' }] }, null, 1]);
  sales.addRow([]);
  sales.addRow([new Date(Date.UTC(2024, 2, 2, 13, 30)), 'South', 7.5, { formula: 'C4*2', result: 15 }, null, 'x', 2, 'extra']);
  for (let i = 0; i < 60; i++) sales.addRow([null, `R${i}`, i]);
  wb.addWorksheet('Blank');
  await wb.xlsx.writeFile(file);
}

test('an XLSX sheet becomes JSON rows keyed by the header row, and a Markdown preview', async (t) => {
  const file = work.path('book.xlsx');
  await writeWorkbook(file);
  const out = await convert({ file, name: 'book.xlsx', mode: 'json', limits });
  t.deepEqual(out.warnings, ['sheet "Blank" is empty; it was left out']);
  t.deepEqual(out.nodes.map((n) => [n.name, n.type]), [['book/Sales 2024.json', 'json'], ['book/Sales 2024.md', 'markdown']]);
  const rows = out.nodes[0]!.type === 'json' ? (out.nodes[0]!.content as Record<string, unknown>[]) : [];
  t.is(rows.length, 62);
  t.deepEqual(rows[0], { Date: '2024-03-01', Region: 'North', Amount: 10, Double: 20, Note: 'bold text', column_6: null, Amount_2: 1 });
  t.deepEqual(rows[1], { Date: '2024-03-02T13:30:00.000Z', Region: 'South', Amount: 7.5, Double: 15, Note: null, column_6: 'x', Amount_2: 2, column_8: 'extra' });
  const preview = out.nodes[1]!.type === 'markdown' ? out.nodes[1]!.content : '';
  t.true(preview.startsWith('# Sales 2024\n\n| Date | Region | Amount | Double | Note | column_6 | Amount_2 | column_8 |\n| --- |'));
  t.true(preview.includes('| 2024-03-01 | North | 10 | 20 | bold text |  | 1 |  |'));
  t.is(preview.split('\n').filter((l) => l.startsWith('| ')).length, 2 + 50);
  t.regex(preview, /The first 50 of 62 rows; all rows are in `Sales 2024.json`/);

  // Markdown mode gives the same nodes: a workbook's rows are data.
  const md = await convert({ file, name: 'book.xlsx', mode: 'markdown', limits });
  t.deepEqual(md.nodes.map((n) => n.name), ['book/Sales 2024.json', 'book/Sales 2024.md']);
});

test('an XLSX over the decompressed limit is refused; a damaged one is corrupt', async (t) => {
  const file = work.path('big.xlsx');
  const wb = new ExcelJS.Workbook();
  const sheet = wb.addWorksheet('Data');
  for (let i = 0; i < 20_000; i++) sheet.addRow([i, 'the same words again and again', i * 2]);
  await wb.xlsx.writeFile(file);
  const err = await t.throwsAsync(convert({ file, name: 'big.xlsx', mode: 'json', limits: { ...limits, maxDecompressedBytes: 1 * MiB } }), { instanceOf: ConversionError });
  t.is(err.code, 'too_large');
  const ok = await convert({ file, name: 'big.xlsx', mode: 'json', limits });
  t.is((ok.nodes[0]!.type === 'json' ? (ok.nodes[0]!.content as unknown[]) : []).length, 19_999);

  // Damaged compressed data inside an intact zip structure; a zip without a workbook part.
  const damaged = work.path('damaged.xlsx');
  const bytes = readFileSync(file);
  bytes.fill(0x55, 2000, 6000);
  writeFileSync(damaged, bytes);
  const e2 = await t.throwsAsync(convert({ file: damaged, name: 'damaged.xlsx', mode: 'json', limits }), { instanceOf: ConversionError });
  t.is(e2.code, 'corrupt');
  t.regex(e2.message, /damaged/);
  const partial = work.path('partial.xlsx');
  writeZip(partial, [{ name: 'xl/worksheets/sheet1.xml', data: '<worksheet><sheetData><row r="1"><c r="A1" t="s"><v>oops' }]);
  const e3 = await t.throwsAsync(convert({ file: partial, name: 'partial.xlsx', mode: 'json', limits }), { instanceOf: ConversionError });
  t.is(e3.code, 'corrupt');
  t.regex(e3.message, /no workbook part/);
});
