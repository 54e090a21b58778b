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
// k-means++ seeding: each next centroid is a point drawn with a weight of its distance to the
// nearest centroid so far, so the initial centroids spread over the groups instead of two
// landing in one group (which plain Lloyd iterations rarely undo).
const centroids = new Float32Array(cells * dims);
const nearestSim = new Float32Array(n).fill(-Infinity);
let pick = Math.floor(random() * n);
for (let c = 0; c < cells; c++) {
  centroids.set(sample.subarray(pick * dims, pick * dims + dims), c * dims);
  let total = 0;
  for (let p = 0; p < n; p++) {
    let dot = 0;
    for (let i = 0; i < dims; i++) dot += sample[p * dims + i] * centroids[c * dims + i];
    if (dot > nearestSim[p]) nearestSim[p] = dot;
    total += Math.max(0, 1 - nearestSim[p]);
  }
  let r = random() * total;
  pick = n - 1;
  for (let p = 0; p < n; p++) {
    r -= Math.max(0, 1 - nearestSim[p]);
    if (r <= 0) {
      pick = p;
      break;
    }
  }
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
