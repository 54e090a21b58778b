import test from 'ava';
import { frontMatter } from '../../src/util/frontMatter.ts';

// The front matter reader the dashboard and published pages share.

test('properties in order, lists joined, nested values as JSON, the title', (t) => {
  const fm = frontMatter('---\ntitle: Launch plan\ntags: [a, b]\nowner: {name: ana}\ndate: 2026-11-29\ndraft: false\n---\n# Body\n');
  t.is(fm.kind, 'ok');
  if (fm.kind !== 'ok') return;
  t.deepEqual(fm.properties, [
    ['title', 'Launch plan'],
    ['tags', 'a, b'],
    ['owner', '{"name":"ana"}'],
    ['date', '2026-11-29'],
    ['draft', 'false'],
  ]);
  t.is(fm.title, 'Launch plan');
  t.is(fm.body, '# Body\n');
});

test('no front matter, an empty one, and the "..." closing fence', (t) => {
  t.deepEqual(frontMatter('# Just text\n'), { kind: 'none', body: '# Just text\n' });
  t.like(frontMatter('---\n---\nbody'), { kind: 'ok', properties: [], title: null, body: 'body' });
  t.like(frontMatter('---\na: 1\n...\nbody'), { kind: 'ok', properties: [['a', '1']], body: 'body' });
});

test('malformed front matter is reported with the whole text kept, never thrown', (t) => {
  for (const text of ['---\ntitle: [unclosed\n---\nbody', '---\nno closing fence\n', '---\n- a list\n- not properties\n---\n', '---\njust a string\n---\n']) {
    const fm = frontMatter(text);
    t.is(fm.kind, 'invalid', text);
    if (fm.kind !== 'invalid') continue;
    t.is(fm.raw + fm.body, text, 'nothing is lost');
    t.true(fm.error.length > 0);
  }
  // An alias bomb fails fast rather than expanding.
  const bomb = ['---', 'a: &a [x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 9 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}, *${String.fromCharCode(97 + i)}]`), '---', ''].join('\n');
  t.is(frontMatter(bomb).kind, 'invalid');
});
