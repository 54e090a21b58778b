import test from 'ava';
import { writeFileSync } from 'node:fs';
import { ConversionError, convert, formats } from '../../src/ingest/converters/index.ts';
import { detectFormat } from '../../src/ingest/converters/detect.ts';
import { outputName, safeName } from '../../src/ingest/converters/names.ts';
import { limits, workDir } from './fixtures/workDir.ts';

const work = workDir('dispatch');

test('raw mode and unknown formats keep the file unchanged as a file node', async (t) => {
  const file = work.path('upload-1');
  writeFileSync(file, '{"a":1}');
  t.deepEqual(await convert({ file, name: 'data.json', mode: 'raw', limits }), { nodes: [{ name: 'data.json', type: 'file', file }], warnings: [] });
  t.deepEqual(await convert({ file, name: 'archive.7z', mode: 'markdown', limits }), {
    nodes: [{ name: 'archive.7z', type: 'file', file }],
    warnings: ['no converter reads this kind of file; it was stored unchanged'],
  });
});

test('json mode on a format that only becomes Markdown is unsupported, with the way out', async (t) => {
  const file = work.path('notes.txt');
  writeFileSync(file, 'hello');
  for (const name of ['a.pdf', 'a.docx', 'a.html', 'a.png', 'a.txt']) {
    const err = await t.throwsAsync(convert({ file, name, mode: 'json', limits }), { instanceOf: ConversionError }, name);
    t.is(err.code, 'unsupported');
    t.regex(err.message, /becomes Markdown, not JSON: use mode markdown/);
  }
});

test('the format comes from the extension, else from the mime type', async (t) => {
  t.is(detectFormat('Report.PDF'), 'pdf');
  t.is(detectFormat('page', 'text/html; charset=utf-8'), 'html');
  t.is(detectFormat('data.csv', 'application/octet-stream'), 'csv');
  t.is(detectFormat('blob', 'application/octet-stream'), null);
  const file = work.path('fetched');
  writeFileSync(file, '<p>from a URL</p>');
  const out = await convert({ file, name: 'index', mimeType: 'text/html', mode: 'markdown', limits });
  t.deepEqual(out.nodes, [{ name: 'index.md', type: 'markdown', content: 'from a URL\n' }]);
});

test('output names are safe for the content store', (t) => {
  t.is(outputName('report.final.pdf', 'md'), 'report.final.md');
  t.is(outputName('../../etc/passwd.txt', 'md'), '.._.._etc_passwd.md');
  t.is(safeName('a\u0000b\u001f\u007fc/d\\e.txt'), 'abc_d_e.txt');
  t.is(safeName('..'), '_..');
  t.is(safeName('.git'), '_.git');
  t.is(safeName('.cnskeep'), '_.cnskeep');
  t.is(safeName('  \u0007 '), 'untitled');
  const long = safeName(`${'é'.repeat(200)}.xlsx`);
  t.true(Buffer.byteLength(long) <= 255);
  t.true(long.endsWith('é.xlsx'));
});

test('a node over the node limit fails as too_large', async (t) => {
  const file = work.path('big.txt');
  writeFileSync(file, 'x'.repeat(2000));
  const err = await t.throwsAsync(convert({ file, name: 'big.txt', mode: 'markdown', limits: { ...limits, maxNodeBytes: 1000 } }), { instanceOf: ConversionError });
  t.is(err.code, 'too_large');
  t.regex(err.message, /^big\.md would be larger than 1000 bytes/);
});

test('formats() lists each converter, its extensions and modes, and OCR availability', (t) => {
  const info = formats();
  t.true(info.ocr);
  t.deepEqual(info.ocrLanguages, ['eng']);
  t.false(info.pdfPageOcr);
  const byFormat = Object.fromEntries(info.formats.map((f) => [f.format, f]));
  t.deepEqual(byFormat.csv, { format: 'csv', extensions: ['csv'], modes: ['markdown', 'json'], available: true });
  t.deepEqual(byFormat.image, { format: 'image', extensions: ['png', 'jpg', 'jpeg', 'webp'], modes: ['markdown'], available: true });
  t.deepEqual(byFormat.text!.extensions, ['txt', 'text', 'md', 'markdown']);
});
