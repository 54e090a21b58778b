import test from 'ava';
import { RE2JS } from 're2js';
import { requiredLiterals } from '../../src/tools/types/grepLiterals.ts';

test('literals a match must contain: fixed strings whole, regexes by their top-level plain runs', (t) => {
  t.deepEqual(requiredLiterals('hello world', true, false), ['hello world']);
  t.deepEqual(requiredLiterals('a.b', true, false), ['a.b'], 'a fixed string is itself, dots included');
  t.deepEqual(requiredLiterals('ab', true, false), [], 'shorter than a trigram');
  t.deepEqual(requiredLiterals('foo\\.bar\\d+baz', false, false), ['foo.bar', 'baz']);
  t.deepEqual(requiredLiterals('colou?r scheme', false, false), ['colo', 'r scheme']);
  t.deepEqual(requiredLiterals('abcd*ef', false, false), ['abc']);
  t.deepEqual(requiredLiterals('abcd+ef', false, false), ['abcd']);
  t.deepEqual(requiredLiterals('^error: (.*) at line \\d+$', false, false), ['error: ', ' at line ']);
  t.deepEqual(requiredLiterals('name[0-9]{2,3}suffix', false, false), ['name', 'suffix']);
  t.deepEqual(requiredLiterals('[]abc]xyz', false, false), ['xyz']);
  t.deepEqual(requiredLiterals('[[:alpha:]]+_id', false, false), ['_id']);
  t.deepEqual(requiredLiterals('tab\\there', false, false), ['tab', 'here']);
  t.deepEqual(requiredLiterals('(group)outside', false, false), ['outside'], 'a group is left out');
  t.deepEqual(requiredLiterals('ünïcødé', false, false), ['ünïcødé']);
});

test('no literal (a full scan) when the pattern cannot be read safely', (t) => {
  for (const p of ['foo|bar', '(?i)hello', 'a\\Qb.c\\E', 'abc{', 'x{,2}yz', '(unclosed', '[unclosed', 'ab']) t.deepEqual(requiredLiterals(p, false, false), [], p);
});

test('ignore_case keeps only ASCII pieces without k or s (RE2 folds them with non-ASCII letters)', (t) => {
  t.deepEqual(requiredLiterals('Hello World', false, true), ['Hello World']);
  t.deepEqual(requiredLiterals('kelvin', false, true), ['elvin']);
  t.deepEqual(requiredLiterals('password', false, true), ['word']);
  t.deepEqual(requiredLiterals('Grüße aus Köln', false, true), ['e au']);
  t.deepEqual(requiredLiterals('Straße', true, true), ['tra']);
});

test('every line a pattern matches contains its literals (checked with RE2 on a varied corpus)', (t) => {
  const lines = [
    'hello world', 'Hello World', 'HELLO', 'colour scheme', 'color scheme', 'foo.bar123baz', 'error: boom at line 42', 'name12suffix',
    'abcef', 'abcdddef', '\u212Aelvin', 'kelvin', 'ſecret', 'Secret', 'tab\there', 'ünïcødé', 'ÜNÏCØDÉ', 'x_id', ']xyz', 'grüße aus köln', 'STRASSE', 'straße',
  ];
  const patterns = ['hello world', 'colou?r scheme', 'foo\\.bar\\d+baz', '^error: (.*) at line \\d+$', 'name[0-9]{2,3}suffix', 'abcd*ef', 'kelvin', 'secret', 'tab\\there', 'ünïcødé', '[[:alpha:]]+_id', '[]abc]xyz', 'grüße aus köln', 'straße'];
  let checked = 0;
  for (const p of patterns) {
    for (const ignoreCase of [false, true]) {
      const re = RE2JS.compile(p, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
      const literals = requiredLiterals(p, false, ignoreCase);
      for (const line of lines) {
        if (!re.test(line)) continue;
        checked++;
        // The index folds case (ASCII and Unicode lower case); a literal must be in the line so folded.
        for (const l of literals) t.true(line.toLowerCase().includes(l.toLowerCase()), `${p} (ignore_case ${ignoreCase}) matches "${line}", which lacks "${l}"`);
      }
    }
  }
  t.true(checked > 20);
});
