import test from 'ava';
import { clampLimit } from '../../src/util/limits.ts';

const rows: [string, number | undefined, number, number | undefined, number][] = [
  ['absent: the fallback', undefined, 50, undefined, 50],
  ['in range: kept', 20, 50, undefined, 20],
  ['fractions: truncated', 7.9, 50, undefined, 7],
  ['zero and below: 1', 0, 50, undefined, 1],
  ['negative: 1', -5, 50, undefined, 1],
  ['above the default max (1000): 1000', 5000, 50, undefined, 1000],
  ['above a given max: that max', 300, 100, 200, 200],
  ['NaN: the fallback', Number.NaN, 100, undefined, 100],
  ['Infinity: the fallback', Number.POSITIVE_INFINITY, 100, undefined, 100],
];

for (const [title, limit, fallback, max, expected] of rows) {
  test(`clampLimit: ${title}`, (t) => {
    t.is(clampLimit(limit, fallback, max), expected);
  });
}
