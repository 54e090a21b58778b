import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { bestSnippet } from './hybrid.ts';
import { CellMap, probeCount } from './ivf.ts';
import type { ChunkHit } from './searchIndex.ts';

type HitRow = Omit<ChunkHit, 'score' | 'snippet'>;

/** The vector table queries read now: its generation, cells and statements. */
interface VectorView {
  gen: number;
  cells: CellMap | null;
  trainedAt: number;
  knnAll: Database.Statement;
  knnCells: Database.Statement;
}

/**
 * Answers queries on a project's search index through its own read-only connection: the
 * indexer writes through `SearchIndex`, and any number of readers (the query workers, see
 * `queryPool.ts`) read the last committed state beside it (WAL). Holds no state of its own but
 * the vector table's generation, which it follows when the indexer replaces it.
 */
export class SearchReader {
  private readonly db: Database.Database;
  private readonly st: Record<string, Database.Statement>;
  private view: VectorView | null = null;

  constructor(readonly file: string) {
    this.db = new Database(file, { readonly: true, fileMustExist: true });
    // Vector scans read every vector of the cells probed: through mmap rather than copies in the page cache.
    this.db.pragma('mmap_size = 2147483648');
    sqliteVec.load(this.db);
    const p = (sql: string) => this.db.prepare(sql);
    this.st = {
      // BM25 with the heading trail weighted half of the text. Called by name rather than through
      // FTS5's configurable `rank` column, which costs ~1.7x as much per matching row.
      rankAll: p(`SELECT rowid AS id, bm25(chunks_fts, 1.0, 0.5) AS rank FROM chunks_fts WHERE chunks_fts MATCH @q ORDER BY rank LIMIT @k`),
      rankUnder: p(`SELECT f.rowid AS id, bm25(chunks_fts, 1.0, 0.5) AS rank FROM chunks_fts f JOIN chunks c ON c.id = f.rowid JOIN docs d ON d.node_id = c.node_id
        WHERE chunks_fts MATCH @q AND (d.path = @p OR (d.path > @p || '/' AND d.path < @p || '0')) ORDER BY rank LIMIT @k`),
      hit: p(`SELECT c.id AS chunkId, c.node_id AS nodeId, d.path, d.type, d.version, c.chunk_index AS chunkIndex, c.heading_path AS headingPath
        FROM chunks c JOIN docs d ON d.node_id = c.node_id WHERE c.id = ?`),
      text: p('SELECT text FROM chunks WHERE id = ?'),
      grepDocsAll: p('SELECT node_id AS nodeId, content_hash AS contentHash, grep FROM docs'),
      grepDocsUnder: p(`SELECT node_id AS nodeId, content_hash AS contentHash, grep FROM docs WHERE path = @p OR (path > @p || '/' AND path < @p || '0')`),
      grepHits: p('SELECT d.node_id AS nodeId FROM grep_fts f JOIN docs d ON d.rowid = f.rowid WHERE grep_fts MATCH @q'),
      vectorMeta: p(`SELECT key, value FROM meta WHERE key IN ('vec_gen', 'vec_trained')`),
      centroids: p('SELECT vectors FROM centroids WHERE gen = ?'),
    };
  }

  /**
   * BM25 over chunks beneath `prefix` ('' = everywhere), best first: chunks with every word
   * (`all`); when none has them all, chunks with any (`any`). Ranking a common word costs a pass
   * over every chunk that has it, so the broad query runs only when the precise one found nothing.
   * Ranking selects row ids only; paths, text and snippets (the query's `terms` marked) are read
   * for the `k` kept.
   */
  lexical(all: string, any: string | null, prefix: string, k: number, terms: string[]): ChunkHit[] {
    return this.snapshot(() => this.rankLexical(all, any, prefix, k, terms));
  }

  private rankLexical(all: string, any: string | null, prefix: string, k: number, terms: string[]): ChunkHit[] {
    const rank = (q: string) => (prefix === '' ? this.st.rankAll.all({ q, k }) : this.st.rankUnder.all({ q, p: prefix, k })) as { id: number; rank: number }[];
    let rows = rank(all);
    if (rows.length === 0 && any !== null) rows = rank(any);
    const out: ChunkHit[] = [];
    for (const r of rows) {
      const hit = this.st.hit.get(r.id) as HitRow | undefined;
      if (hit) out.push({ ...hit, score: -r.rank, snippet: bestSnippet((this.st.text.get(r.id) as { text: string }).text, terms) });
    }
    return out;
  }

  /** Nearest chunks by cosine distance, without snippets (see `chunkText`); `candidates` read before the prefix filter. */
  nearest(vector: Float32Array, prefix: string, k: number, candidates: number): ChunkHit[] {
    return this.snapshot(() => this.rankNearest(vector, prefix, k, candidates));
  }

  private rankNearest(vector: Float32Array, prefix: string, k: number, candidates: number): ChunkHit[] {
    const t = this.vectorView();
    if (!t) return [];
    const v = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
    type Row = { id: number; distance: number };
    const rows = t.cells
      ? (t.knnCells.all({ v, k: candidates, cells: JSON.stringify(t.cells.probe(vector, probeCount(t.cells.count, t.trainedAt, candidates))) }) as Row[])
          .sort((a, b) => a.distance - b.distance)
          .slice(0, candidates)
      : (t.knnAll.all(v, candidates) as Row[]);
    const out: ChunkHit[] = [];
    for (const r of rows) {
      const hit = this.st.hit.get(r.id) as HitRow | undefined;
      if (!hit || (prefix !== '' && hit.path !== prefix && !hit.path.startsWith(prefix + '/'))) continue;
      out.push({ ...hit, score: 1 - r.distance, snippet: '' });
      if (out.length >= k) break;
    }
    return out;
  }

  chunkTexts(ids: number[]): (string | null)[] {
    return ids.map((id) => (this.st.text.get(id) as { text: string } | undefined)?.text ?? null);
  }

  /**
   * grep's candidates beneath `prefix`, in one read transaction: every document there with its
   * content hash and what grep finds of it (GrepState), and the documents whose raw text has all
   * of the FTS5 trigram `match` (substrings, case folded): a superset of those with a matching line.
   */
  grepCandidates(match: string, prefix: string): { docs: [string, string | null, number][]; hits: string[] } {
    return this.snapshot(() => {
      const rows = (prefix === '' ? this.st.grepDocsAll.all() : this.st.grepDocsUnder.all({ p: prefix })) as { nodeId: string; contentHash: string | null; grep: number }[];
      const hits = (this.st.grepHits.all({ q: match }) as { nodeId: string }[]).map((r) => r.nodeId);
      return { docs: rows.map((r) => [r.nodeId, r.contentHash, r.grep]), hits };
    });
  }

  /** The generation the indexer last committed (it changes when the vector index's cells are learned again). */
  private vectorView(): VectorView | null {
    const meta = new Map((this.st.vectorMeta.all() as { key: string; value: string }[]).map((r) => [r.key, Number(r.value)]));
    const gen = meta.get('vec_gen') ?? 0;
    if (!gen) return (this.view = null);
    if (this.view?.gen === gen) return this.view;
    const t = `vectors_${gen}`;
    const row = this.st.centroids.get(gen) as { vectors: Buffer } | undefined;
    const dims = Number((this.db.prepare(`SELECT value FROM meta WHERE key = 'dimensions'`).get() as { value: string } | undefined)?.value ?? 0);
    this.view = {
      gen,
      cells: row && dims ? new CellMap(new Float32Array(row.vectors.buffer.slice(row.vectors.byteOffset, row.vectors.byteOffset + row.vectors.byteLength)), dims) : null,
      trainedAt: meta.get('vec_trained') ?? 0,
      knnAll: this.db.prepare(`SELECT rowid AS id, distance FROM ${t} WHERE embedding MATCH ? AND k = ? ORDER BY distance`),
      // One KNN per cell (k each; sqlite-vec refuses a LIMIT besides k), merged by the caller.
      knnCells: this.db.prepare(`SELECT rowid AS id, distance FROM ${t} WHERE embedding MATCH @v AND k = @k AND cell IN (SELECT value FROM json_each(@cells))`),
    };
    return this.view;
  }

  /** One read transaction: the generation read from the meta table is the one scanned, even if the indexer swaps it meanwhile. */
  private snapshot<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  close(): void {
    this.db.close();
  }
}
