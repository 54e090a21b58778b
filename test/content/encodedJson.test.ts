import test from 'ava';
import { EncodedJson } from '../../src/content/encodedJson.ts';
import { encodeContent } from '../../src/content/encoding.ts';
import { appendAt, putAt, removeAt } from '../../src/data/tables/edits.ts';

/** The canonical bytes, computed the plain way. */
const whole = (value: unknown) => Buffer.from(JSON.stringify(value, null, 2) + '\n', 'utf8');

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function value(rand: () => number, depth: number): unknown {
  const r = rand();
  if (depth > 3 || r < 0.35) {
    const scalars = [null, true, false, 0, -12.5, 1e21, 'plain', 'ünïcødé ✓ "quoted"\n', '', 'a'.repeat(40)];
    return scalars[Math.floor(rand() * scalars.length)];
  }
  const n = Math.floor(rand() * 6);
  if (r < 0.65) return Array.from({ length: n }, () => value(rand, depth + 1));
  const keys = ['id', 'name', 'é', '10', '2', '__proto__x', 'with "quote"', 'nested'];
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [keys[(i + Math.floor(rand() * 8)) % keys.length]!, value(rand, depth + 1)]));
}

/** Tokens of an existing member of `doc`, chosen at random (possibly []). */
function somePath(rand: () => number, doc: unknown): string[] {
  const tokens: string[] = [];
  let at = doc;
  while (at !== null && typeof at === 'object' && rand() < 0.8) {
    const keys = Array.isArray(at) ? at.map((_, i) => String(i)) : Object.keys(at);
    if (keys.length === 0) break;
    const key = keys[Math.floor(rand() * keys.length)]!;
    tokens.push(key);
    at = (at as Record<string, unknown>)[key];
  }
  return tokens;
}

test('a chain of spliced changes gives exactly the bytes of encoding each document whole', (t) => {
  for (let seed = 1; seed <= 300; seed++) {
    // Half the seeds descend into every container (the deepest splice), half re-encode whole members.
    const descend = seed % 2 === 0 ? 0 : 16 * 1024;
    const rand = random(seed);
    let doc = { rows: Array.from({ length: 30 }, () => value(rand, 1)), meta: value(rand, 1) } as object;
    let encoded = EncodedJson.of(doc);
    for (let step = 0; step < 15; step++) {
      const tokens = somePath(rand, doc);
      const choice = rand();
      const parentIsArray = Array.isArray(tokens.slice(0, -1).reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], doc));
      const edit =
        choice < 0.6 || tokens.length === 0
          ? putAt(doc, tokens.length === 0 ? ['meta'] : tokens, value(rand, 2), 'path')
          : choice < 0.8
            ? removeAt(doc, tokens, 'path')
            : parentIsArray || tokens.length === 0
              ? putAt(doc, [...tokens.slice(0, -1), parentIsArray ? '-' : 'added'], value(rand, 2), 'path')
              : appendAt(doc, tokens.slice(0, -1), { added: value(rand, 2) }, 'path', 'data');
      const next = edit.doc as object;
      encoded = edit.within.length === 0 ? EncodedJson.of(next) : encoded.replaced(edit.within, next, descend);
      doc = next;
      if (!encoded.bytes.equals(whole(doc))) {
        t.fail(`seed ${seed}, step ${step}: ${edit.pointer} differs`);
        return;
      }
    }
  }
  t.pass();
});

test('a change of one row of a large table re-encodes that row, and the store takes the spliced bytes as they are', (t) => {
  const doc = { rows: Array.from({ length: 20_000 }, (_, i) => ({ id: i, name: `customer ${i}`, tags: ['a', 'b'] })) };
  let encoded = EncodedJson.of(doc);
  let current: object = doc;
  for (let i = 0; i < 50; i++) {
    const edit = putAt(current, ['rows', String(i * 397), 'name'], `renamed ${i}`, 'path');
    encoded = encoded.replaced(edit.within, edit.doc as object);
    current = edit.doc as object;
  }
  t.true(encoded.bytes.equals(whole(current)));
  t.is(encoded.value, current);
  t.is(encodeContent('json', encoded), encoded.bytes, 'encodeContent hands the spliced bytes through');
});

test('a member that is not there, or a path through a scalar, falls back to encoding whole', (t) => {
  const doc = { a: [1, 2], b: 'x' };
  const added = { a: [1, 2], b: 'x', c: 3 };
  t.true(EncodedJson.of(doc).replaced(['c'], added, 0).bytes.equals(whole(added)));
  const appended = { a: [1, 2, 3], b: 'x' };
  t.true(EncodedJson.of(doc).replaced(['a', '2'], appended, 0).bytes.equals(whole(appended)));
  const scalar = { a: [1, 2], b: 'y' };
  t.true(EncodedJson.of(doc).replaced(['b', 'x'], scalar, 0).bytes.equals(whole(scalar)));
});
