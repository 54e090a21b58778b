import test from 'ava';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunkHash } from '../../src/search/chunker.ts';
import { CellMap, cellCountFor, probeCount, trainCentroids } from '../../src/search/ivf.ts';
import { SearchIndex } from '../../src/search/searchIndex.ts';
import { SearchReader } from '../../src/search/searchReader.ts';

const DIMS = 8;
const dirs: string[] = [];
test.after.always(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempFile = () => {
  const d = mkdtempSync(join(tmpdir(), 'cns-ivf-'));
  dirs.push(d);
  return join(d, 'index.sqlite');
};

// Points around 12 well-separated directions: a k-means that works puts each group in one cell.
let seed = 7;
const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
/** The groups of the first test, made with their own seeds: whatever order the tests run in. */
const groupPoints = (groups: number, perGroup: number, seedOf: number) => {
  let s = seedOf;
  const r = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32);
  return Array.from({ length: groups * perGroup }, (_, i) => ({ g: i % groups, v: centre(i % groups).map((x) => x + (r() - 0.5) * 0.1) }));
};
const centre = (g: number) => Float32Array.from({ length: DIMS }, (_, i) => (i === g % DIMS ? (g < DIMS ? 1 : -1) : 0) + (i === (g + 3) % DIMS ? 0.5 : 0));
const around = (g: number) => centre(g).map((x) => x + (rand() - 0.5) * 0.1);

for (const seedOf of [1, 2, 3]) {
  test(`k-means in a worker learns unit centroids that keep each group of points in one cell (points ${seedOf})`, async (t) => {
    const groups = 12;
    const points = groupPoints(groups, 40, seedOf);
    const sample = new Float32Array(points.length * DIMS);
    points.forEach((p, i) => sample.set(p.v, i * DIMS));
    const centroids = await trainCentroids(sample, DIMS, groups);
    t.is(centroids.length, groups * DIMS);
    const cells = new CellMap(centroids, DIMS);
    for (let c = 0; c < groups; c++) {
      const norm = Math.hypot(...centroids.subarray(c * DIMS, (c + 1) * DIMS));
      t.true(Math.abs(norm - 1) < 1e-4, `centroid ${c} is a unit vector`);
    }
    const cellOf = new Map<number, Set<number>>();
    for (const p of points) cellOf.set(p.g, (cellOf.get(p.g) ?? new Set()).add(cells.nearest(p.v)));
    t.true([...cellOf.values()].every((s) => s.size === 1), 'every group lands in a single cell');
    t.is(new Set([...cellOf.values()].map((s) => [...s][0])).size, groups, 'and no two groups share one');
    // Probing lists the nearest cell first.
    t.is(cells.probe(points[0]!.v, 3)[0], cells.nearest(points[0]!.v));
  });
}

test('training refuses a sample smaller than its cells', async (t) => {
  await t.throwsAsync(trainCentroids(new Float32Array(4 * DIMS), DIMS, 12), { message: /cannot train 12 cells/ });
});

test('cell and probe counts grow with the index and with the candidates asked for', (t) => {
  t.is(cellCountFor(20_000), 35);
  t.is(cellCountFor(100_000), 79);
  t.is(cellCountFor(100_000_000), 256);
  t.is(probeCount(79, 100_000, 50), 8);
  t.is(probeCount(79, 100_000, 4096), 13, 'a path prefix asks for 4,096 candidates: cells holding 4x that');
  t.is(probeCount(10, 100, 4096), 10, 'never more cells than there are');
});

function fill(index: SearchIndex, from: number, to: number): void {
  index.transaction(() => {
    for (let i = from; i < to; i++) {
      const text = `chunk ${i}`;
      index.putDoc({ nodeId: `n${i}`, path: `docs/d${i}.md`, type: 'markdown', version: 1, contentHash: null }, [{ index: 0, headingPath: '', text, hash: chunkHash(text) }]);
    }
  });
  const pending = index.pendingEmbeddings(to - from);
  index.storeVectors(
    'm',
    pending.map((p) => ({ id: p.id, hash: p.hash, vector: around(Number(p.text.split(' ')[1]) % 12) })),
  );
}

const vectorTables = (file: string) => {
  const db = new Database(file, { readonly: true });
  const names = (db.prepare(`SELECT name FROM sqlite_master WHERE name GLOB 'vectors*'`).all() as { name: string }[]).map((r) => r.name);
  db.close();
  return names;
};

/** The mechanism at a tenth of the real threshold (`IVF_MIN_VECTORS`): the same steps, a tenth of the work. */
const IVF_MIN_VECTORS = 2_000;

test.serial('the vector index learns cells at its threshold and swaps generations without losing a vector stored, removed or reopened meanwhile', async (t) => {
  const file = tempFile();
  let index = new SearchIndex(file, { ivfMinVectors: IVF_MIN_VECTORS });
  fill(index, 0, IVF_MIN_VECTORS - 1);
  t.is(index.trainingDue(), null, 'below the threshold every vector is scanned');
  t.deepEqual(index.vectorIndex(), { cells: 0, rebuilding: false });
  fill(index, IVF_MIN_VECTORS - 1, IVF_MIN_VECTORS + 100);
  const due = index.trainingDue();
  t.is(due, IVF_MIN_VECTORS + 100);
  const plan = index.trainingPlan(due!);
  t.is(plan.cells, cellCountFor(due!));
  t.true(plan.sample.length / DIMS >= plan.cells * 30, 'a sample of ~32 vectors per cell');
  index.beginRebuild(await trainCentroids(plan.sample, plan.dims, plan.cells), plan);
  t.deepEqual(index.vectorIndex(), { cells: 0, rebuilding: true });
  t.is(index.trainingDue(), null, 'no second training while one generation is filled');

  t.true(index.maintenanceStep(1), 'a step does a bounded part of the copy');
  // Meanwhile: a vector stored (above the cursor: copied later), one removed, and a restart.
  fill(index, IVF_MIN_VECTORS + 100, IVF_MIN_VECTORS + 101);
  index.deleteDoc('n5');
  index.close();
  index = new SearchIndex(file, { ivfMinVectors: IVF_MIN_VECTORS });
  t.true(index.vectorIndex().rebuilding, 'the copy resumes after a restart');
  let steps = 0;
  // A budget of 0 ms: one batch a step, however fast the machine.
  while (index.maintenanceStep(0)) steps++;
  t.true(steps > 1);
  t.deepEqual(index.vectorIndex(), { cells: plan.cells, rebuilding: false });
  const tables = vectorTables(file);
  t.true(tables.every((n) => n.startsWith('vectors_2')), `only the new generation is left: ${tables.join(' ')}`);

  // Every stored vector is found: a vector queried by itself is in its own cell, probed first.
  const db = new Database(file, { readonly: true });
  const rows = db.prepare('SELECT c.id, c.node_id AS nodeId, e.vector FROM chunks c JOIN embed_cache e ON e.hash = c.hash').all() as { id: number; nodeId: string; vector: Buffer }[];
  db.close();
  t.is(rows.length, IVF_MIN_VECTORS + 100);
  const reader = new SearchReader(file);
  for (const r of rows.filter((_, i) => i % 97 === 0).concat(rows.filter((r) => r.nodeId === `n${IVF_MIN_VECTORS + 100}`))) {
    const v = new Float32Array(r.vector.buffer.slice(r.vector.byteOffset, r.vector.byteOffset + r.vector.byteLength));
    const hits = reader.nearest(v, '', 2000, 2000);
    t.true(hits.some((h) => h.chunkId === r.id), `chunk ${r.id} is found`);
    t.is(hits[0]!.score > 0.99, true);
  }
  const five = reader.nearest(around(5), '', 4096, 4096);
  t.false(five.some((h) => h.nodeId === 'n5'), 'a removed chunk is not');
  t.true(five.length > 0 && five.every((h) => h.path.startsWith('docs/')));
  reader.close();
  index.close();
});

test('an index file of an earlier layout is emptied for a rebuild from content, keeping the embedding cache', (t) => {
  const file = tempFile();
  let index = new SearchIndex(file);
  fill(index, 0, 10);
  const hashes = index.pendingEmbeddings(10).map((p) => p.hash);
  t.is(hashes.length, 0, 'every chunk has its vector');
  index.close();
  const db = new Database(file);
  const cached = (db.prepare('SELECT hash FROM embed_cache').all() as { hash: string }[]).map((r) => r.hash);
  db.pragma('user_version = 1');
  db.close();
  index = new SearchIndex(file);
  t.deepEqual(index.counts(''), { documents: 0, chunks: 0 }, 'the indexer sees an empty index and builds it from content');
  t.is(index.meta().indexedVersion, 0);
  t.false(index.hasVectors());
  t.is(cached.length, 10);
  t.true(cached.every((h) => index.cachedVector('m', h) !== null), 'vectors come back from the cache, no provider call');
  t.deepEqual(vectorTables(file), []);
  index.close();
});

test('cells learned for another model or dimension are not used', (t) => {
  const index = new SearchIndex(tempFile());
  fill(index, 0, 10);
  const centroids = new Float32Array(2 * DIMS).fill(0.5);
  index.beginRebuild(centroids, { model: 'other', cells: 2, vectors: 10, sample: new Float32Array(0), dims: DIMS });
  index.beginRebuild(new Float32Array(2 * 4), { model: 'm', cells: 2, vectors: 10, sample: new Float32Array(0), dims: 4 });
  t.false(index.vectorIndex().rebuilding);
  index.beginRebuild(centroids, { model: 'm', cells: 2, vectors: 10, sample: new Float32Array(0), dims: DIMS });
  t.true(index.vectorIndex().rebuilding);
  while (index.maintenanceStep());
  t.deepEqual(index.vectorIndex(), { cells: 2, rebuilding: false });
  index.close();
});
