import test from 'ava';
import { readFileSync, writeFileSync } from 'node:fs';
import { ConversionError, convert } from '../../src/ingest/converters/index.ts';
import type { Progress } from '../../src/ingest/converters/converter.ts';
import { writePdf } from './fixtures/pdf.ts';
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
