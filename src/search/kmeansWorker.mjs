// Spherical k-means for the vector index's cells (see ivf.ts), in a worker thread: training on a
// sample of thousands of vectors is seconds of arithmetic that must not hold the event loop.
// Plain JavaScript: worker threads do not inherit the TypeScript loader of the main thread.
import { parentPort, workerData } from 'node:worker_threads';

/** @type {{ sample: Float32Array, dims: number, cells: number, iterations: number, seed: number }} */
const { sample, dims, cells, iterations, seed } = workerData;
const n = sample.length / dims;

let state = seed | 0;
const random = () => {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

function normalize(v, at) {
  let s = 0;
  for (let i = 0; i < dims; i++) s += v[at + i] * v[at + i];
  const f = s > 0 ? 1 / Math.sqrt(s) : 0;
  for (let i = 0; i < dims; i++) v[at + i] *= f;
}

for (let p = 0; p < n; p++) normalize(sample, p * dims);
// Greedy k-means++ seeding (as scikit-learn does): each next centroid is the best, by the total
// distance left, of a few points drawn with a weight of their distance to the nearest centroid so
// far. The centroids spread over the groups instead of two landing in one, which Lloyd
// iterations rarely undo.
const centroids = new Float32Array(cells * dims);
const nearestSim = new Float32Array(n).fill(-Infinity);
const trials = 2 + Math.floor(Math.log(cells));

function dotWith(p, from, at) {
  let dot = 0;
  for (let i = 0; i < dims; i++) dot += sample[p * dims + i] * from[at + i];
  return dot;
}

function place(c, p) {
  centroids.set(sample.subarray(p * dims, p * dims + dims), c * dims);
  for (let q = 0; q < n; q++) {
    const dot = dotWith(q, centroids, c * dims);
    if (dot > nearestSim[q]) nearestSim[q] = dot;
  }
}

function draw(total) {
  let r = random() * total;
  for (let p = 0; p < n; p++) {
    r -= Math.max(0, 1 - nearestSim[p]);
    if (r <= 0) return p;
  }
  return n - 1;
}

place(0, Math.floor(random() * n));
for (let c = 1; c < cells; c++) {
  let total = 0;
  for (let p = 0; p < n; p++) total += Math.max(0, 1 - nearestSim[p]);
  let best = -1;
  let bestLeft = Infinity;
  for (let t = 0; t < trials; t++) {
    const candidate = draw(total);
    const at = candidate * dims;
    let left = 0;
    for (let q = 0; q < n; q++) left += Math.max(0, 1 - Math.max(nearestSim[q], dotWith(q, sample, at)));
    if (left < bestLeft) {
      bestLeft = left;
      best = candidate;
    }
  }
  place(c, best);
}

const assigned = new Int32Array(n);
const best = new Float32Array(n);
for (let it = 0; it < iterations; it++) {
  for (let p = 0; p < n; p++) {
    const at = p * dims;
    let top = -Infinity;
    let cell = 0;
    for (let c = 0; c < cells; c++) {
      const ct = c * dims;
      let dot = 0;
      for (let i = 0; i < dims; i++) dot += sample[at + i] * centroids[ct + i];
      if (dot > top) {
        top = dot;
        cell = c;
      }
    }
    assigned[p] = cell;
    best[p] = top;
  }
  const sums = new Float64Array(cells * dims);
  const counts = new Int32Array(cells);
  for (let p = 0; p < n; p++) {
    const c = assigned[p];
    counts[c]++;
    for (let i = 0; i < dims; i++) sums[c * dims + i] += sample[p * dims + i];
  }
  // An empty cell takes the point its centroid fits worst, so every cell keeps a share.
  const worst = Array.from({ length: n }, (_, i) => i).sort((a, b) => best[a] - best[b]);
  let w = 0;
  for (let c = 0; c < cells; c++) {
    if (counts[c] === 0) {
      const p = worst[w++ % n];
      for (let i = 0; i < dims; i++) centroids[c * dims + i] = sample[p * dims + i];
      continue;
    }
    for (let i = 0; i < dims; i++) centroids[c * dims + i] = sums[c * dims + i] / counts[c];
    normalize(centroids, c * dims);
  }
}
parentPort.postMessage(centroids, [centroids.buffer]);
