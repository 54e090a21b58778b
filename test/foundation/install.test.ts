import test from 'ava';
import { readFileSync } from 'node:fs';

// What `npm ci` installs runs on the oldest Node the project claims, so it prints no EBADENGINE.

const root = new URL('../../', import.meta.url);
const json = (file: string) => JSON.parse(readFileSync(new URL(file, root), 'utf8'));

type Version = [number, number, number];

/** `v20.19` → [20, 19, 0]; wildcards (`x`, `*`) and missing parts are left as null. */
function parts(text: string): (number | null)[] {
  const p = text.replace(/^v/, '').split('.').slice(0, 3);
  return [0, 1, 2].map((i) => (p[i] === undefined || /^[x*]$/i.test(p[i]!) ? null : Number(p[i])));
}

const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
const filled = (p: (number | null)[]): Version => [p[0] ?? 0, p[1] ?? 0, p[2] ?? 0];

/** One comparator of an npm semver range (`>=20.19.0`, `^20.19`, `~1.2`, `20.x`, `*`) against `v`. */
function satisfiesOne(v: Version, comparator: string): boolean {
  const m = /^(>=|<=|>|<|=|\^|~)?\s*(.*)$/.exec(comparator)!;
  const op = m[1] ?? '';
  const p = parts(m[2]!);
  const low = filled(p);
  if (op === '>=') return compare(v, low) >= 0;
  if (op === '>') return compare(v, low) > 0;
  if (op === '<=') return compare(v, low) <= 0;
  if (op === '<') return compare(v, low) < 0;
  // ^, ~ and plain or x-ranges: at least `low`, below the next step of the part that may not change.
  const fixed = op === '^' ? (p[0] !== 0 || p[1] === null ? 1 : 2) : op === '~' ? (p[1] === null ? 1 : 2) : p.findIndex((x) => x === null);
  const keep = fixed === -1 ? 3 : fixed;
  if (keep === 0) return true;
  const high: Version = [0, 0, 0];
  for (let i = 0; i < keep; i++) high[i] = low[i]!;
  if (keep < 3) high[keep - 1]! += 1;
  return compare(v, low) >= 0 && (keep === 3 ? compare(v, low) === 0 : compare(v, high) < 0);
}

/** Whether `version` satisfies an npm `engines` range: `||` of space-separated comparators. */
function satisfies(version: string, range: string): boolean {
  const v = filled(parts(version));
  return range.split('||').some((set) => {
    const comparators = set.trim().replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').split(/\s+/).filter(Boolean);
    return comparators.every((c) => satisfiesOne(v, c));
  });
}

test('the range check reads the forms the lockfile uses', (t) => {
  for (const ok of ['>=18', '>= 20', '^20.19.0 || >=22.12.0', '20 || >=22', '20.x || 22.x', '>=v12.22.7', '6.* || 8.* || >= 10.*', '>=10 <11 || >=12 <13 || >=14', '*', '^20.19', '>=18.20.0 <20 || >=20.12.1', '>=16 || 14 >=14.17'])
    t.true(satisfies('20.19.0', ok), ok);
  for (const no of ['>=22.19.0', '>=22.12.0', '^20.20.0', '^22.12.0 || >=24.0.0', '18 || >=22', '>=20.20 <21', '~20.18.1'])
    t.false(satisfies('20.19.0', no), no);
});

test('every package of the lockfile (dev dependencies included) supports the oldest Node the project claims', (t) => {
  const claimed = json('package.json').engines.node as string;
  const oldest = /^>=\s*(\d+\.\d+(?:\.\d+)?)$/.exec(claimed)?.[1];
  t.truthy(oldest, `engines.node is a lower bound: ${claimed}`);
  t.true(readFileSync(new URL('README.md', root), 'utf8').includes(`Node.js ${oldest} or newer`), `README: Node.js ${oldest} or newer`);
  const refused = Object.entries(json('package-lock.json').packages as Record<string, { engines?: { node?: string } }>)
    .filter(([path, p]) => path !== '' && p.engines?.node && !satisfies(oldest!, p.engines.node))
    .map(([path, p]) => `${path.replace(/^.*node_modules\//, '')} wants Node ${p.engines!.node}`);
  t.deepEqual(refused, []);
});

test('the README documents the production install', (t) => {
  t.true(readFileSync(new URL('README.md', root), 'utf8').includes('npm ci --omit=dev && npm start'), 'README: npm ci --omit=dev && npm start');
});
