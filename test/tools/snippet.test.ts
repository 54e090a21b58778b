import test from 'ava';
import { bestSnippet, matchesTerm } from '../../src/search/hybrid.ts';

test('a word matches a query term as stemming would, closely enough to mark it', (t) => {
  t.true(matchesTerm('searching', 'search'));
  t.true(matchesTerm('policies', 'policy'));
  t.true(matchesTerm('zebra', 'zebra'));
  t.false(matchesTerm('them', 'the'), 'short words only match themselves');
  t.false(matchesTerm('sea', 'search'));
  t.false(matchesTerm('river', 'road'));
});

test('the snippet is the 24-word window with the most distinct query terms, marked, with … where the chunk goes on', (t) => {
  const filler = (n: number, w: string) => Array.from({ length: n }, () => w).join(' ');
  const text = `${filler(30, 'alpha')} zebra ${filler(30, 'beta')} zebra giraffe here ${filler(30, 'gamma')}.`;
  const s = bestSnippet(text, ['zebra', 'giraffe']);
  t.regex(s, /^….*\*\*zebra\*\* \*\*giraffe\*\* here.*…$/);
  t.is(s.match(/\*\*/g)!.length, 4, 'the lone zebra 31 words earlier is outside the window');
  t.is(s.split(/\s+/).length, 24);
  // Punctuation at the chunk's edges stays when the window reaches them.
  t.is(bestSnippet('/server/codename: quetzal', ['quetzal']), '/server/codename: **quetzal**');
  t.is(bestSnippet('Welcome to the **team handbook**.', ['handbook']), 'Welcome to the **team handbook**.', 'already bold: not marked again');
  t.is(bestSnippet('No match in here at all.', ['zebra']), 'No match in here at all.', 'found by meaning only: the beginning');
  t.is(bestSnippet('', ['x']), '');
});

test('the marks never corrupt the Markdown around them: a word already bold stays as written', (t) => {
  t.is(bestSnippet('Run **install** first, then install the rest.', ['install']), 'Run **install** first, then **install** the rest.');
  t.is(bestSnippet('## **Install**\n\nTo install it, run `npm install`.', ['install']), '## **Install**\n\nTo **install** it, run `npm install`.');
  t.is(bestSnippet('***install*** and __install__ and *install*', ['install']), '***install*** and __**install**__ and ***install***');
  t.is(bestSnippet('compute 2**10 then install', ['install']), 'compute 2**10 then **install**');
  for (const text of ['**install**', 'a **b install** c', '**install it**', 'x **install**ation y', 'install**', '**install']) {
    const s = bestSnippet(text, ['install']);
    t.notRegex(s, /\*{4}/, `${text} → ${s}`);
    t.is(s.replace(/\*/g, ''), text.replace(/\*/g, ''), `${text} → ${s}: only marks added`);
  }
});
