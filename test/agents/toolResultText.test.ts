import test from 'ava';
import { abbreviated, forModel, MAX_TOOL_RESULT_CHARS } from '../../src/agents/chat/toolResultText.ts';

test('a short result goes to the model whole, as JSON', (t) => {
  t.deepEqual(forModel({ a: 1 }), { text: '{"a":1}', truncated: false });
  t.deepEqual(forModel(undefined), { text: 'null', truncated: false });
});

test('a long result is cut with a note saying how much is missing and how to ask for less', (t) => {
  const { text, truncated } = forModel({ content: 'x'.repeat(50_000) });
  t.true(truncated);
  t.true(text.startsWith('{"content":"xxx'));
  t.regex(text, /\[truncated: \d+ of 50014 characters left out\. Ask for less at a time/);
  t.true(text.length < MAX_TOOL_RESULT_CHARS + 300);
});

test('the cut never splits a surrogate pair', (t) => {
  // '"' then emoji pairs: the cut at 10 falls between the two halves of one.
  const { text } = forModel('😀'.repeat(20), 10);
  const kept = text.slice(0, text.indexOf('\n['));
  t.is(kept, '"' + '😀'.repeat(4));
});

test('execution records shorten long strings at any depth and keep the rest', (t) => {
  const long = 'y'.repeat(2000);
  t.deepEqual(abbreviated({ path: 'a.md', content: long, list: [long, 1, true, null] }), {
    path: 'a.md',
    content: `${'y'.repeat(500)}… (2000 characters)`,
    list: [`${'y'.repeat(500)}… (2000 characters)`, 1, true, null],
  });
});
