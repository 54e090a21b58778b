import Database from 'better-sqlite3';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import * as sqliteVec from 'sqlite-vec';
import type { Chunk } from './chunker.ts';
import { CellMap, IVF_MIN_VECTORS, IVF_RETRAIN_GROWTH, cellCountFor, trainingSampleSize } from './ivf.ts';

/** A node as the search index holds it. */
export interface IndexedDoc {
  nodeId: string;
  path: string;
  type: string;
  version: number;
  contentHash: string | null;
}

/** One ranked chunk, before the caller's rights and the current state of the node are applied. */
export interface ChunkHit {
  chunkId: number;
  nodeId: string;
  path: string;
  type: string;
  version: number;
  chunkIndex: number;
  headingPath: string;
  /** BM25 for lexical hits (higher is better), 1 - cosine distance for vector hits. */
  score: number;
  snippet: string;
}

export type IndexStatus = 'pending' | 'indexing' | 'ready' | 'error';

/** The index's persisted state: its position in the project's history and its embedding setup. */
export interface IndexMeta {
  status: IndexStatus;
  /** Project version everything up to which is indexed (the resume point after a restart). */
  indexedVersion: number;
  /** Set while a full build runs: the version it started from (a restart starts it over, skipping unchanged nodes). */
  buildVersion: number | null;
  lastError: string | null;
  embeddingModel: string | null;
  dimensions: number | null;
  updatedAt: string;
}

/**
 * The layout of the index file (SQLite `user_version`); see `migrate`. 3: file nodes hold their
 * readable text only (fileText.ts), so indexes made before are rebuilt without HTML markup and
 * PDF internals. 4: the raw-text trigram index grep narrows with (`grep_fts`, `docs.grep`).
 */
const LAYOUT = 4;

/**
 * What grep finds of a document in the index (`docs.grep`): its raw text is in `grep_fts`
 * (TEXT), grep reads nothing in it (NONE: a file that is not text), or it was not indexed (too
 * large; UNINDEXED: grep always reads it).
 */
export const GREP_UNINDEXED = 0;
export const GREP_TEXT = 1;
export const GREP_NONE = 2;
export type GrepState = typeof GREP_UNINDEXED | typeof GREP_TEXT | typeof GREP_NONE;

/** A document's raw text as grep reads it (grepText.ts), for the trigram index. */
export interface GrepDoc {
  state: GrepState;
  text?: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS docs (
  node_id TEXT PRIMARY KEY,
  path TEXT NOT NULL,
  type TEXT NOT NULL,
  version INTEGER NOT NULL,
  content_hash TEXT,
  grep INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS docs_path ON docs(path);
CREATE TABLE IF NOT EXISTS chunks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  node_id TEXT NOT NULL,
  chunk_index INTEGER NOT NULL,
  heading_path TEXT NOT NULL,
  hash TEXT NOT NULL,
  text TEXT NOT NULL,
  embedded INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chunks_node ON chunks(node_id);
CREATE INDEX IF NOT EXISTS chunks_pending ON chunks(id) WHERE embedded = 0;
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(text, heading_path, content = '', contentless_delete = 1, tokenize = 'porter unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS grep_fts USING fts5(body, content = '', contentless_delete = 1, tokenize = 'trigram');
CREATE TABLE IF NOT EXISTS embed_cache (model TEXT NOT NULL, hash TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (model, hash)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS centroids (gen INTEGER PRIMARY KEY, vectors BLOB NOT NULL);
`;

/** One generation of the vector table (`vectors_<gen>`) as the indexer writes it: its cells (null: one cell, scanned whole). */
interface VectorTable {
  gen: number;
  cells: CellMap | null;
  /** Vectors in the index when its cells were learned (0 without cells). */
  trainedAt: number;
  insert: Database.Statement;
  remove: Database.Statement;
}

/** What the vector index needs next: cells learned from a sample, or nothing. */
export interface TrainingPlan {
  /** The model whose vectors the sample holds: cells learned for another are not used. */
  model: string;
  cells: number;
  vectors: number;
  sample: Float32Array;
  dims: number;
}

/**
 * The search index of one project: its own SQLite file under the data folder, so that indexing
 * never holds the main database's write lock (content writes never wait for it). Everything in
 * it is derived from content: deleting the file rebuilds it. Chunks are ranked with FTS5 BM25;
 * vectors live in a sqlite-vec `vec0` table (cosine), created with the provider's dimension.
 */
export class SearchIndex {
  private readonly db: Database.Database;
  private readonly st: Record<string, Database.Statement>;
  /** The table queries read, and the next generation while it is being filled (see `beginRebuild`). */
  private current: VectorTable | null = null;
  private next: VectorTable | null = null;

  /** Vectors from which they are grouped into cells (the default, `IVF_MIN_VECTORS`, but for tests of the mechanism). */
  private readonly ivfMinVectors: number;

  constructor(
    readonly file: string,
    options: { ivfMinVectors?: number } = {},
  ) {
    this.ivfMinVectors = options.ivfMinVectors ?? IVF_MIN_VECTORS;
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // Derived data: a lost tail after a power cut is re-indexed from the persisted position.
    this.db.pragma('synchronous = NORMAL');
    // Vector KNN reads every vector: through mmap instead of the page cache it is ~3x faster.
    this.db.pragma('mmap_size = 2147483648');
    sqliteVec.load(this.db);
    this.migrate();
    this.db.exec(SCHEMA);
    const p = (sql: string) => this.db.prepare(sql);
    this.st = {
      getMeta: p('SELECT key, value FROM meta'),
      metaValue: p('SELECT value FROM meta WHERE key = ?'),
      setMeta: p('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
      doc: p('SELECT node_id AS nodeId, path, type, version, content_hash AS contentHash FROM docs WHERE node_id = ?'),
      upsertDoc: p(`INSERT INTO docs (node_id, path, type, version, content_hash) VALUES (@nodeId, @path, @type, @version, @contentHash)
        ON CONFLICT(node_id) DO UPDATE SET path = excluded.path, type = excluded.type, version = excluded.version, content_hash = excluded.content_hash`),
      deleteDoc: p('DELETE FROM docs WHERE node_id = ?'),
      docRow: p('SELECT rowid AS id, grep FROM docs WHERE node_id = ?'),
      setGrep: p('UPDATE docs SET grep = ? WHERE rowid = ?'),
      insertGrep: p('INSERT INTO grep_fts (rowid, body) VALUES (?, ?)'),
      deleteGrep: p('DELETE FROM grep_fts WHERE rowid = ?'),
      chunkIds: p('SELECT id FROM chunks WHERE node_id = ?'),
      deleteChunks: p('DELETE FROM chunks WHERE node_id = ?'),
      deleteFts: p('DELETE FROM chunks_fts WHERE rowid = ?'),
      insertChunk: p('INSERT INTO chunks (node_id, chunk_index, heading_path, hash, text) VALUES (?, ?, ?, ?, ?)'),
      insertFts: p('INSERT INTO chunks_fts (rowid, text, heading_path) VALUES (?, ?, ?)'),
      docsUnder: p(`SELECT node_id AS nodeId, path, type, version, content_hash AS contentHash FROM docs WHERE path = @p OR (path > @p || '/' AND path < @p || '0')`),
      countAllDocs: p('SELECT COUNT(*) AS n FROM docs'),
      countAllChunks: p('SELECT COUNT(*) AS n FROM chunks'),
      countDocs: p(`SELECT COUNT(*) AS n FROM docs WHERE path = @p OR (path > @p || '/' AND path < @p || '0')`),
      countChunks: p(`SELECT COUNT(*) AS n FROM chunks c JOIN docs d ON d.node_id = c.node_id WHERE d.path = @p OR (d.path > @p || '/' AND d.path < @p || '0')`),
      pending: p('SELECT id, hash, text FROM chunks WHERE embedded = 0 ORDER BY id LIMIT ?'),
      pendingCount: p('SELECT COUNT(*) AS n FROM chunks WHERE embedded = 0'),
      markEmbedded: p('UPDATE chunks SET embedded = 1 WHERE id = ?'),
      cached: p('SELECT vector FROM embed_cache WHERE model = ? AND hash = ?'),
      cache: p('INSERT OR IGNORE INTO embed_cache (model, hash, vector) VALUES (?, ?, ?)'),
      isChunk: p('SELECT 1 FROM chunks WHERE id = ?'),
      embeddedAfter: p(`SELECT c.id, e.vector FROM chunks c JOIN embed_cache e ON e.model = @model AND e.hash = c.hash
        WHERE c.embedded = 1 AND c.id > @after ORDER BY c.id LIMIT @limit`),
      sample: p(`SELECT e.vector FROM chunks c JOIN embed_cache e ON e.model = @model AND e.hash = c.hash WHERE c.embedded = 1 AND c.id % @step = 0 LIMIT @limit`),
    };
    this.openVectors();
  }

  /**
   * An index of an earlier layout is emptied, all but the embedding cache, and rebuilt from
   * content by the indexer (in batches, as a first index is; vectors come back from the cache).
   * Layout 2 keeps the chunks' text in `chunks` and the full-text index contentless, so that
   * replacing a chunk deletes its postings without reading and tokenizing its old text again.
   */
  private migrate(): void {
    const version = this.db.pragma('user_version', { simple: true }) as number;
    if (version === LAYOUT) return;
    const tables = this.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'embed_cache' AND name NOT LIKE 'sqlite_%' AND sql LIKE 'CREATE VIRTUAL TABLE%'`).all() as { name: string }[];
    this.db.transaction(() => {
      for (const { name } of tables) this.db.exec(`DROP TABLE IF EXISTS "${name}"`);
      const rest = this.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'embed_cache' AND name NOT LIKE 'sqlite_%'`).all() as { name: string }[];
      for (const { name } of rest) this.db.exec(`DROP TABLE IF EXISTS "${name}"`);
      this.db.pragma(`user_version = ${LAYOUT}`);
    })();
  }

  meta(): IndexMeta {
    const m = new Map((this.st.getMeta.all() as { key: string; value: string }[]).map((r) => [r.key, r.value]));
    const num = (k: string) => (m.has(k) ? Number(m.get(k)) : null);
    return {
      status: (m.get('status') as IndexStatus | undefined) ?? 'pending',
      indexedVersion: num('indexed_version') ?? 0,
      buildVersion: num('build_version'),
      lastError: m.get('last_error') || null,
      embeddingModel: m.get('embedding_model') || null,
      dimensions: num('dimensions'),
      updatedAt: m.get('updated_at') ?? new Date(0).toISOString(),
    };
  }

  setMeta(changes: Partial<{ status: IndexStatus; indexedVersion: number; buildVersion: number | null; lastError: string | null; embeddingModel: string | null; dimensions: number | null }>): void {
    const keys: Record<string, string> = { status: 'status', indexedVersion: 'indexed_version', buildVersion: 'build_version', lastError: 'last_error', embeddingModel: 'embedding_model', dimensions: 'dimensions' };
    this.db.transaction(() => {
      for (const [k, v] of Object.entries(changes)) {
        if (k === 'buildVersion' && v === null) this.db.prepare('DELETE FROM meta WHERE key = ?').run('build_version');
        else this.st.setMeta.run(keys[k]!, v === null ? '' : String(v));
      }
      this.st.setMeta.run('updated_at', new Date().toISOString());
    })();
  }

  /** Runs `fn` in one transaction (a batch of document changes plus the new position). */
  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn)();
  }

  doc(nodeId: string): IndexedDoc | null {
    return (this.st.doc.get(nodeId) as IndexedDoc | undefined) ?? null;
  }

  docsUnder(path: string): IndexedDoc[] {
    return this.st.docsUnder.all({ p: path }) as IndexedDoc[];
  }

  /** Replaces a document's chunks (its vectors go too; the embedder picks the new chunks up) and its raw text for grep. */
  putDoc(doc: IndexedDoc, chunks: Chunk[], grep: GrepDoc = { state: GREP_UNINDEXED }): void {
    this.removeChunks(doc.nodeId);
    this.removeGrep(doc.nodeId);
    this.st.upsertDoc.run(doc);
    for (const c of chunks) {
      const id = this.st.insertChunk.run(doc.nodeId, c.index, c.headingPath, c.hash, c.text).lastInsertRowid;
      this.st.insertFts.run(id, c.text, c.headingPath);
    }
    const row = this.st.docRow.get(doc.nodeId) as { id: number };
    this.st.setGrep.run(grep.state, row.id);
    if (grep.state === GREP_TEXT) this.st.insertGrep.run(row.id, grep.text ?? '');
  }

  /** The document's postings in the trigram index go (the index is contentless: only its rowid is needed). */
  private removeGrep(nodeId: string): void {
    const row = this.st.docRow.get(nodeId) as { id: number; grep: number } | undefined;
    if (row?.grep === GREP_TEXT) this.st.deleteGrep.run(row.id);
  }

  /** Same content at another path or version (a move): only the document row changes. */
  relocate(doc: IndexedDoc): void {
    this.st.upsertDoc.run(doc);
  }

  deleteDoc(nodeId: string): void {
    this.removeChunks(nodeId);
    this.removeGrep(nodeId);
    this.st.deleteDoc.run(nodeId);
  }

  private removeChunks(nodeId: string): void {
    const ids = this.st.chunkIds.all(nodeId) as { id: number }[];
    for (const { id } of ids) {
      this.st.deleteFts.run(id);
      this.current?.remove.run(BigInt(id));
      this.next?.remove.run(BigInt(id));
    }
    this.st.deleteChunks.run(nodeId);
  }

  counts(prefix: string): { documents: number; chunks: number } {
    if (prefix === '') return { documents: (this.st.countAllDocs.get() as { n: number }).n, chunks: (this.st.countAllChunks.get() as { n: number }).n };
    return {
      documents: (this.st.countDocs.get({ p: prefix }) as { n: number }).n,
      chunks: (this.st.countChunks.get({ p: prefix }) as { n: number }).n,
    };
  }

  // ------------------------------------------------------------ vectors

  pendingEmbeddings(limit: number): { id: number; hash: string; text: string }[] {
    return this.st.pending.all(limit) as { id: number; hash: string; text: string }[];
  }

  pendingCount(): number {
    return (this.st.pendingCount.get() as { n: number }).n;
  }

  cachedVector(model: string, hash: string): Float32Array | null {
    const row = this.st.cached.get(model, hash) as { vector: Buffer } | undefined;
    return row ? new Float32Array(row.vector.buffer.slice(row.vector.byteOffset, row.vector.byteOffset + row.vector.byteLength)) : null;
  }

  /** Stores vectors for chunks (and in the cache by chunk hash), creating the vec0 table on first use. */
  storeVectors(model: string, items: { id: number; hash: string; vector: Float32Array }[]): void {
    if (items.length === 0) return;
    const dims = items[0]!.vector.length;
    this.transaction(() => {
      const meta = this.meta();
      if (meta.dimensions !== dims || meta.embeddingModel !== model || !this.current) this.resetVectors(model, dims);
      const after = this.next ? Number(this.metaValue('vec_next_cursor') ?? 0) : 0;
      for (const it of items) {
        if (it.vector.length !== dims) throw new Error(`the provider answered vectors of ${it.vector.length} and ${dims} dimensions`);
        const blob = Buffer.from(it.vector.buffer, it.vector.byteOffset, it.vector.byteLength);
        this.st.cache.run(model, it.hash, blob);
        // The chunk may have been replaced while its vector was computed.
        if (!this.st.isChunk.get(it.id)) continue;
        putVector(this.current!, it.id, it.vector, blob);
        // The next generation copies chunks above its cursor itself; those below it are written here.
        if (this.next && it.id <= after) putVector(this.next, it.id, it.vector, blob);
        this.st.markEmbedded.run(it.id);
      }
    });
  }

  /** Another model or dimension: every vector is recomputed (cached vectors of that model are reused). */
  resetVectors(model: string, dims: number): void {
    this.transaction(() => {
      this.dropVectorTables();
      this.current = this.createVectorTable(this.nextGen(), dims, null, 0);
      this.setMetaValue('vec_gen', String(this.current.gen));
      this.db.exec('UPDATE chunks SET embedded = 0');
      this.setMeta({ embeddingModel: model, dimensions: dims });
    });
  }

  hasVectors(): boolean {
    return this.current !== null;
  }

  /** Cells and whether the next generation is being filled (the index status shows them). */
  vectorIndex(): { cells: number; rebuilding: boolean } {
    return { cells: this.current?.cells?.count ?? 0, rebuilding: this.next !== null };
  }

  /**
   * Whether the vectors should be grouped into (new) cells: once there are `IVF_MIN_VECTORS`, and
   * again each time their number has grown `IVF_RETRAIN_GROWTH`-fold. Answers how many there are.
   */
  trainingDue(): number | null {
    const meta = this.meta();
    if (!this.current || this.next || this.metaValue('vec_drop_gen') || !meta.embeddingModel || !meta.dimensions || this.pendingCount() > 0) return null;
    const vectors = this.countVectors();
    if (vectors < this.ivfMinVectors || (this.current.trainedAt > 0 && vectors < this.current.trainedAt * IVF_RETRAIN_GROWTH)) return null;
    return vectors;
  }

  /** The cells to learn for `vectors` vectors, and a sample of them spread over the index to learn them from. */
  trainingPlan(vectors: number): TrainingPlan {
    const { embeddingModel, dimensions } = this.meta();
    const dims = dimensions!;
    const cells = cellCountFor(vectors);
    const want = trainingSampleSize(cells);
    const rows = this.st.sample.all({ model: embeddingModel, step: Math.max(1, Math.floor(vectors / want)), limit: want }) as { vector: Buffer }[];
    const sample = new Float32Array(rows.length * dims);
    rows.forEach((r, i) => sample.set(new Float32Array(r.vector.buffer.slice(r.vector.byteOffset, r.vector.byteOffset + r.vector.byteLength)), i * dims));
    return { model: embeddingModel!, cells: Math.min(cells, rows.length), vectors, sample, dims };
  }

  /**
   * Starts the next generation of the vector table with the learned cells. Queries keep reading
   * the current one until `maintenanceStep` has copied every vector (from the embedding cache) into
   * the next, which then replaces it; the cursor is persisted, so a restart continues the copy.
   */
  beginRebuild(centroids: Float32Array, plan: TrainingPlan): void {
    const { dims, vectors: trainedAt } = plan;
    const meta = this.meta();
    if (!this.current || this.next || this.metaValue('vec_drop_gen') || dims !== meta.dimensions || plan.model !== meta.embeddingModel) return;
    this.transaction(() => {
      const gen = this.nextGen();
      this.db.prepare('INSERT OR REPLACE INTO centroids (gen, vectors) VALUES (?, ?)').run(gen, Buffer.from(centroids.buffer, centroids.byteOffset, centroids.byteLength));
      this.next = this.createVectorTable(gen, dims, new CellMap(centroids, dims), trainedAt);
      this.setMetaValue('vec_next_gen', String(gen));
      this.setMetaValue('vec_next_cursor', '0');
      this.setMetaValue('vec_next_trained', String(trainedAt));
    });
  }

  /**
   * One step of vector index maintenance, at most ~`budgetMs` of work in one transaction: copies
   * vectors into the next generation (which replaces the current one once complete), then frees
   * the replaced generation a few pages at a time (dropping 100,000 vectors at once holds the
   * thread for ~0.2 s). False when nothing is left to do.
   */
  maintenanceStep(budgetMs = 8): boolean {
    const started = performance.now();
    if (this.next) return this.transaction(() => this.copyStep(this.next!, started + budgetMs));
    const dropping = Number(this.metaValue('vec_drop_gen') ?? 0);
    if (dropping) return this.transaction(() => this.dropStep(dropping, started + budgetMs));
    return false;
  }

  private copyStep(next: VectorTable, until: number): true {
    const model = this.meta().embeddingModel;
    let after = Number(this.metaValue('vec_next_cursor') ?? 0);
    for (;;) {
      const rows = this.st.embeddedAfter.all({ model, after, limit: 32 }) as { id: number; vector: Buffer }[];
      for (const r of rows) putVector(next, r.id, new Float32Array(r.vector.buffer.slice(r.vector.byteOffset, r.vector.byteOffset + r.vector.byteLength)), r.vector);
      if (rows.length > 0) after = rows[rows.length - 1]!.id;
      if (rows.length < 32) break;
      if (performance.now() > until) {
        this.setMetaValue('vec_next_cursor', String(after));
        return true;
      }
    }
    // Complete (vectors stored meanwhile went into both): the next generation replaces the current one.
    this.setMetaValue('vec_drop_gen', String(this.current!.gen));
    this.db.prepare('DELETE FROM centroids WHERE gen = ?').run(this.current!.gen);
    this.current = next;
    this.next = null;
    this.setMetaValue('vec_gen', String(next.gen));
    this.setMetaValue('vec_trained', String(next.trainedAt));
    this.db.prepare(`DELETE FROM meta WHERE key IN ('vec_next_gen', 'vec_next_cursor', 'vec_next_trained')`).run();
    return true;
  }

  private dropStep(gen: number, until: number): boolean {
    // The vector blobs (~1.5 MB each, 1,024 vectors) are what makes a drop slow: a few at a time,
    // then the table itself. Its other shadow tables are small (and sqlite-vec guards some of them).
    const blobs = (this.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB ?`).all(`vectors_${gen}_vector_chunks*`) as { name: string }[]).map((r) => r.name);
    for (const t of blobs) {
      while (this.db.prepare(`DELETE FROM ${t} WHERE rowid IN (SELECT rowid FROM ${t} LIMIT 2)`).run().changes > 0) {
        if (performance.now() > until) return true;
      }
    }
    this.dropVectorTable(gen);
    this.db.prepare(`DELETE FROM meta WHERE key = 'vec_drop_gen'`).run();
    return false;
  }

  /** Opens the generations of the vector table recorded in the meta table. */
  private openVectors(): void {
    const dims = this.meta().dimensions;
    const gen = Number(this.metaValue('vec_gen') ?? 0);
    if (!dims || !gen) return;
    const open = (g: number, trainedAt: number) => {
      const row = this.db.prepare('SELECT vectors FROM centroids WHERE gen = ?').get(g) as { vectors: Buffer } | undefined;
      const cells = row ? new CellMap(new Float32Array(row.vectors.buffer.slice(row.vectors.byteOffset, row.vectors.byteOffset + row.vectors.byteLength)), dims) : null;
      return this.vectorTable(g, cells, trainedAt);
    };
    this.current = open(gen, Number(this.metaValue('vec_trained') ?? 0));
    const nextGen = Number(this.metaValue('vec_next_gen') ?? 0);
    if (nextGen) this.next = open(nextGen, Number(this.metaValue('vec_next_trained') ?? 0));
  }

  private countVectors(): number {
    return (this.st.countAllChunks.get() as { n: number }).n - this.pendingCount();
  }

  private createVectorTable(gen: number, dims: number, cells: CellMap | null, trainedAt: number): VectorTable {
    this.db.exec(`CREATE VIRTUAL TABLE vectors_${gen} USING vec0(cell integer partition key, embedding float[${dims}] distance_metric=cosine)`);
    return this.vectorTable(gen, cells, trainedAt);
  }

  private vectorTable(gen: number, cells: CellMap | null, trainedAt: number): VectorTable {
    const t = `vectors_${gen}`;
    return {
      gen,
      cells,
      trainedAt,
      insert: this.db.prepare(`INSERT INTO ${t} (rowid, cell, embedding) VALUES (?, ?, ?)`),
      remove: this.db.prepare(`DELETE FROM ${t} WHERE rowid = ?`),
    };
  }

  private dropVectorTables(): void {
    const tables = this.db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'vectors_[0-9]*' AND sql LIKE 'CREATE VIRTUAL TABLE%'`).all() as { name: string }[];
    for (const { name } of tables) this.db.exec(`DROP TABLE IF EXISTS ${name}`);
    this.db.exec('DELETE FROM centroids');
    this.db.prepare(`DELETE FROM meta WHERE key IN ('vec_gen', 'vec_trained', 'vec_next_gen', 'vec_next_cursor', 'vec_next_trained', 'vec_drop_gen')`).run();
    this.current = null;
    this.next = null;
  }

  private dropVectorTable(gen: number): void {
    this.db.exec(`DROP TABLE IF EXISTS vectors_${gen}`);
    this.db.prepare('DELETE FROM centroids WHERE gen = ?').run(gen);
  }

  private nextGen(): number {
    return Math.max(Number(this.metaValue('vec_gen') ?? 0), Number(this.metaValue('vec_next_gen') ?? 0)) + 1;
  }

  private metaValue(key: string): string | undefined {
    return (this.st.metaValue.get(key) as { value: string } | undefined)?.value;
  }

  private setMetaValue(key: string, value: string): void {
    this.st.setMeta.run(key, value);
  }

  close(): void {
    this.db.close();
  }

  /** Deletes the index files (a tool's project lost its last search tool, or a rebuild). */
  static destroy(file: string): void {
    for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  }
}

/** Puts a chunk's vector into a generation of the vector table, in its cell. */
function putVector(t: VectorTable, id: number, vector: Float32Array, blob: Buffer): void {
  t.remove.run(BigInt(id));
  t.insert.run(BigInt(id), BigInt(t.cells ? t.cells.nearest(vector) : 0), blob);
}
