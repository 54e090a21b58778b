import test from 'ava';
import { writeFileSync } from 'node:fs';
import { ConversionError, convert } from '../../src/ingest/converters/index.ts';
import { inferValue } from '../../src/ingest/converters/csv.ts';
import type { ConvertOutput } from '../../src/ingest/converters/converter.ts';
import { limits, workDir } from './fixtures/workDir.ts';

const work = workDir('tabular');

async function run(name: string, text: string | Buffer, mode: 'markdown' | 'json' | null = 'json'): Promise<ConvertOutput> {
  const file = work.path(name);
  writeFileSync(file, text);
  return convert({ file, name, mode, limits });
}

const content = (out: ConvertOutput) => {
  const node = out.nodes[0]!;
  return node.type === 'file' ? null : node.content;
};

test('the CSV delimiter is detected among comma, semicolon, tab and pipe', async (t) => {
  for (const d of [',', ';', '\t', '|']) {
    const out = await run(`d${d.charCodeAt(0)}.csv`, ['city', 'people', 'note'].join(d) + '\n' + ['Lyon', '522000', `"a${d}b"`].join(d) + '\n');
    t.deepEqual(content(out), [{ city: 'Lyon', people: 522000, note: `a${d}b` }], JSON.stringify(d));
  }
});

test('CSV types are inferred: numbers, booleans, empty as null; text that only looks numeric stays text', async (t) => {
  const csv = '\uFEFFid,active,score,zip,big,amount,empty,label\r\n1,true,3.5,01234,12345678901234567890,"1,234",,x\r\n-2,FALSE,-2e3,99999,42,0.5,  ,007\r\n';
  const out = await run('types.csv', csv);
  t.deepEqual(content(out), [
    { id: 1, active: true, score: 3.5, zip: '01234', big: '12345678901234567890', amount: '1,234', empty: null, label: 'x' },
    { id: -2, active: false, score: -2000, zip: 99999, big: 42, amount: 0.5, empty: null, label: '007' },
  ]);
  t.deepEqual(out.nodes.map((n) => [n.name, n.type]), [['types.json', 'json']]);
  t.is(inferValue('0'), 0);
  t.is(inferValue('.5'), 0.5);
  t.is(inferValue('1e999'), '1e999');
  t.is(inferValue('True'), true);
  t.is(inferValue(' 12 '), 12);
  t.is(inferValue('12a'), '12a');
});

test('CSV and TSV without a mode are JSON rows keyed by the header (types inferred) plus a Markdown preview, as an XLSX sheet', async (t) => {
  const rows = Array.from({ length: 60 }, (_, i) => `${i + 1},item ${i + 1},${i % 2 === 0},007`);
  const out = await run('stock.csv', `id,name,in stock,code\n${rows.join('\n')}\n`, null);
  t.deepEqual(out.nodes.map((n) => [n.name, n.type]), [
    ['stock.json', 'json'],
    ['stock.md', 'markdown'],
  ]);
  const json = out.nodes[0]!.type === 'json' ? (out.nodes[0]!.content as Record<string, unknown>[]) : [];
  t.is(json.length, 60, 'every row in the JSON');
  t.deepEqual(json[0], { id: 1, name: 'item 1', 'in stock': true, code: '007' });
  const preview = out.nodes[1]!.type === 'markdown' ? out.nodes[1]!.content : '';
  t.true(preview.startsWith('# stock.csv\n\n| id | name | in stock | code |\n| --- | --- | --- | --- |\n| 1 | item 1 | true | 007 |\n'), preview.slice(0, 200));
  t.true(preview.includes('| 50 | item 50 |'));
  t.false(preview.includes('| 51 | item 51 |'), 'the preview holds the first 50 rows');
  t.regex(preview, /The first 50 of 60 rows; all rows are in `stock\.json`/);
  t.deepEqual(out.warnings, []);

  const tsv = await run('small.tsv', 'a\tb\n1\tx\n', null);
  t.deepEqual(tsv.nodes, [
    { name: 'small.json', type: 'json', content: [{ a: 1, b: 'x' }] },
    { name: 'small.md', type: 'markdown', content: '# small.tsv\n\n| a | b |\n| --- | --- |\n| 1 | x |\n' },
  ]);
  // Asked for: one node, as before.
  t.deepEqual((await run('small.tsv', 'a\tb\n1\tx\n', 'json')).nodes.map((n) => n.name), ['small.json']);
  t.deepEqual((await run('small.tsv', 'a\tb\n1\tx\n', 'markdown')).nodes.map((n) => n.name), ['small.md']);
});

test('CSV in markdown mode is a Markdown table with the text unchanged; ragged rows are counted', async (t) => {
  const out = await run('sales.csv', 'region;total;note\nNorth;01;a|b\nSouth;2\n\nEast;3;x;extra\n', 'markdown');
  t.deepEqual(out.nodes.map((n) => [n.name, n.type]), [['sales.md', 'markdown']]);
  t.is(
    content(out),
    '| region | total | note | column_4 |\n| --- | --- | --- | --- |\n| North | 01 | a\\|b |  |\n| South | 2 |  |  |\n| East | 3 | x | extra |\n',
  );
  t.deepEqual(out.warnings, ['2 rows have a different number of fields than the header']);
});

test('a CSV that is not UTF-8 is read as windows-1252', async (t) => {
  const out = await run('latin.csv', Buffer.from('name;price\ncaf\xe9;\x80 5\n', 'latin1'));
  t.deepEqual(content(out), [{ name: 'café', price: '€ 5' }]);
  t.deepEqual(out.warnings, ['the file is not UTF-8; it was read as windows-1252']);
});

test('a TSV is tab-separated whatever its first line looks like; blank and repeated headers get names', async (t) => {
  const out = await run('data.tsv', 'a,b\t\ta,b\n1\t2\t3\n');
  t.deepEqual(content(out), [{ 'a,b': 1, column_2: 2, 'a,b_2': 3 }]);
});

test('a CSV whose JSON would exceed the node limit stops early as too_large', async (t) => {
  const file = work.path('big.csv');
  writeFileSync(file, 'n,text\n' + Array.from({ length: 5000 }, (_, i) => `${i},some words here`).join('\n'));
  const err = await t.throwsAsync(convert({ file, name: 'big.csv', mode: 'json', limits: { ...limits, maxNodeBytes: 10_000 } }), { instanceOf: ConversionError });
  t.is(err.code, 'too_large');
});

test('JSON becomes a json node; invalid JSON is corrupt; a lone value is kept as a file', async (t) => {
  const ok = await run('data.json', '\uFEFF{"a":[1,2],"b":{"c":null}}', 'markdown');
  t.deepEqual(ok.nodes, [{ name: 'data.json', type: 'json', content: { a: [1, 2], b: { c: null } } }]);
  const err = await t.throwsAsync(run('bad.json', '{"a": [1, 2'), { instanceOf: ConversionError });
  t.is(err.code, 'corrupt');
  t.regex(err.message, /not valid JSON/);
  const lone = await run('n.json', '42');
  t.is(lone.nodes[0]!.type, 'file');
  t.regex(lone.warnings[0]!, /single value/);
});

test('TXT and MD become Markdown nodes; non-UTF-8 text is read as windows-1252', async (t) => {
  const txt = await run('notes.txt', 'line one\r\nline two\n', 'markdown');
  t.deepEqual(txt, { nodes: [{ name: 'notes.md', type: 'markdown', content: 'line one\nline two\n' }], warnings: [] });
  const md = await run('readme.md', '# Title\n\n- item\n', 'markdown');
  t.deepEqual(md.nodes, [{ name: 'readme.md', type: 'markdown', content: '# Title\n\n- item\n' }]);
  const latin = await run('old.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x80]), 'markdown');
  t.is(content(latin), 'café €');
  t.deepEqual(latin.warnings, ['the file is not UTF-8; it was read as windows-1252']);
});
