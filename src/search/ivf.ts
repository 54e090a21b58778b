import { Worker } from 'node:worker_threads';

/**
 * The vector index is an IVF (inverted file, as in FAISS' IVFFlat): vectors are grouped into
 * cells around centroids learned by k-means, stored in a `vec0` partition per cell, and a query
 * scans only the cells whose centroids are nearest to it. sqlite-vec 0.1.9 has no approximate
 * index of its own, and scanning every vector costs ~0.5 µs each (40 ms per 100,000 at 384
 * dimensions); below `IVF_MIN_VECTORS` the exact scan is cheap enough and is kept.
 */
export const IVF_MIN_VECTORS = 20_000;
/** Cells are learned again (and every vector reassigned) once the index has grown this much. */
export const IVF_RETRAIN_GROWTH = 4;
/** Vectors of the training sample per cell. */
const SAMPLE_PER_CELL = 32;
const ITERATIONS = 8;

/**
 * About √n / 4 cells of about 4√n vectors: sqlite-vec's fixed cost per partition scanned (~0.25
 * ms) makes a few large cells cheaper to probe than many small ones, and training and assigning
 * cost in proportion to the number of cells.
 */
export function cellCountFor(vectors: number): number {
  return Math.min(256, Math.max(16, Math.round(Math.sqrt(vectors) / 4)));
}

export function trainingSampleSize(cells: number): number {
  return cells * SAMPLE_PER_CELL;
}

/**
 * Cells to scan: a tenth of them (embeddings' neighbours sit in the few nearest cells), and
 * more when the caller wants many candidates (a path prefix filters them afterwards) so that
 * the scanned cells hold several times that many vectors.
 */
export function probeCount(cells: number, vectors: number, candidates: number): number {
  const perCell = Math.max(1, vectors / cells);
  return Math.min(cells, Math.max(4, Math.ceil(cells / 10), Math.ceil((candidates * 4) / perCell)));
}

/** Learns `cells` unit centroids from a sample (`dims` floats per vector) in a worker thread. */
export function trainCentroids(sample: Float32Array, dims: number, cells: number, seed = 1): Promise<Float32Array> {
  if (sample.length < cells * dims) return Promise.reject(new Error(`a sample of ${sample.length / dims} vectors cannot train ${cells} cells`));
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./kmeansWorker.mjs', import.meta.url), { workerData: { sample, dims, cells, iterations: ITERATIONS, seed } });
    // A service stopping does not wait for a training it no longer needs.
    worker.unref();
    worker.once('message', (centroids: Float32Array) => {
      resolve(centroids);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`k-means worker exited with ${code}`)));
  });
}

/** The centroids of one generation of the index: which cell a vector goes to, which cells a query reads. */
export class CellMap {
  readonly count: number;

  constructor(
    readonly centroids: Float32Array,
    readonly dims: number,
  ) {
    this.count = centroids.length / dims;
  }

  /** Cosine similarity to every centroid (the centroids are unit vectors, so the query's norm only scales). */
  private similarities(v: Float32Array): Float32Array {
    const { centroids, dims } = this;
    const out = new Float32Array(this.count);
    for (let c = 0; c < this.count; c++) {
      const at = c * dims;
      let dot = 0;
      for (let i = 0; i < dims; i++) dot += v[i]! * centroids[at + i]!;
      out[c] = dot;
    }
    return out;
  }

  nearest(v: Float32Array): number {
    const sims = this.similarities(v);
    let best = 0;
    for (let c = 1; c < sims.length; c++) if (sims[c]! > sims[best]!) best = c;
    return best;
  }

  /** The `n` cells nearest to `v`, nearest first. */
  probe(v: Float32Array, n: number): number[] {
    const sims = this.similarities(v);
    const cells = Array.from(sims.keys());
    if (n >= cells.length) return cells.sort((a, b) => sims[b]! - sims[a]!);
    return cells.sort((a, b) => sims[b]! - sims[a]!).slice(0, n);
  }
}
