import Database from 'better-sqlite3';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import * as sqliteVec from 'sqlite-vec';
import type { Chunk } from './chunker.ts';

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

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS docs (
  node_id TEXT PRIMARY KEY,
  path TEXT NOT NULL,
  type TEXT NOT NULL,
  version INTEGER NOT NULL,
  content_hash TEXT
);
CREATE INDEX IF NOT EXISTS docs_path ON docs(path);
CREATE TABLE IF NOT EXISTS chunks (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  node_id TEXT NOT NULL,
  chunk_index INTEGER NOT NULL,
  heading_path TEXT NOT NULL,
  hash TEXT NOT NULL,
  embedded INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS chunks_node ON chunks(node_id);
CREATE INDEX IF NOT EXISTS chunks_pending ON chunks(id) WHERE embedded = 0;
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(text, heading_path, tokenize = 'porter unicode61');
CREATE TABLE IF NOT EXISTS embed_cache (model TEXT NOT NULL, hash TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (model, hash)) WITHOUT ROWID;
`;

/**
 * The search index of one project: its own SQLite file under the data folder, so that indexing
 * never holds the main database's write lock (content writes never wait for it). Everything in
 * it is derived from content: deleting the file rebuilds it. Chunks are ranked with FTS5 BM25;
 * vectors live in a sqlite-vec `vec0` table (cosine), created with the provider's dimension.
 */
export class SearchIndex {
  private readonly db: Database.Database;
  private readonly st: Record<string, Database.Statement>;
  private vectorStatements: { insert: Database.Statement; remove: Database.Statement; knn: Database.Statement } | null = null;

  constructor(readonly file: string) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // Derived data: a lost tail after a power cut is re-indexed from the persisted position.
    this.db.pragma('synchronous = NORMAL');
    // Vector KNN reads every vector: through mmap instead of the page cache it is ~3x faster.
    this.db.pragma('mmap_size = 2147483648');
    sqliteVec.load(this.db);
    this.db.exec(SCHEMA);
    // BM25 with the heading trail weighted half of the text; stored in the table (FTS5 `rank` config).
    this.db.prepare(`INSERT INTO chunks_fts (chunks_fts, rank) VALUES ('rank', 'bm25(1.0, 0.5)')`).run();
    const p = (sql: string) => this.db.prepare(sql);
    this.st = {
      getMeta: p('SELECT key, value FROM meta'),
      setMeta: p('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
      doc: p('SELECT node_id AS nodeId, path, type, version, content_hash AS contentHash FROM docs WHERE node_id = ?'),
      upsertDoc: p(`INSERT INTO docs (node_id, path, type, version, content_hash) VALUES (@nodeId, @path, @type, @version, @contentHash)
        ON CONFLICT(node_id) DO UPDATE SET path = excluded.path, type = excluded.type, version = excluded.version, content_hash = excluded.content_hash`),
      deleteDoc: p('DELETE FROM docs WHERE node_id = ?'),
      chunkIds: p('SELECT id FROM chunks WHERE node_id = ?'),
      deleteChunks: p('DELETE FROM chunks WHERE node_id = ?'),
      deleteFts: p('DELETE FROM chunks_fts WHERE rowid = ?'),
      insertChunk: p('INSERT INTO chunks (node_id, chunk_index, heading_path, hash) VALUES (?, ?, ?, ?)'),
      insertFts: p('INSERT INTO chunks_fts (rowid, text, heading_path) VALUES (?, ?, ?)'),
      docsUnder: p(`SELECT node_id AS nodeId, path, type, version, content_hash AS contentHash FROM docs WHERE path = @p OR (path > @p || '/' AND path < @p || '0')`),
      countAllDocs: p('SELECT COUNT(*) AS n FROM docs'),
      countAllChunks: p('SELECT COUNT(*) AS n FROM chunks'),
      countDocs: p(`SELECT COUNT(*) AS n FROM docs WHERE path = @p OR (path > @p || '/' AND path < @p || '0')`),
      countChunks: p(`SELECT COUNT(*) AS n FROM chunks c JOIN docs d ON d.node_id = c.node_id WHERE d.path = @p OR (d.path > @p || '/' AND d.path < @p || '0')`),
      pending: p(`SELECT c.id, c.hash, f.text FROM chunks c JOIN chunks_fts f ON f.rowid = c.id WHERE c.embedded = 0 ORDER BY c.id LIMIT ?`),
      pendingCount: p('SELECT COUNT(*) AS n FROM chunks WHERE embedded = 0'),
      markEmbedded: p('UPDATE chunks SET embedded = 1 WHERE id = ?'),
      cached: p('SELECT vector FROM embed_cache WHERE model = ? AND hash = ?'),
      cache: p('INSERT OR IGNORE INTO embed_cache (model, hash, vector) VALUES (?, ?, ?)'),
      rankAll: p(`SELECT rowid AS id, rank FROM chunks_fts WHERE chunks_fts MATCH @q ORDER BY rank LIMIT @k`),
      rankUnder: p(`SELECT f.rowid AS id, f.rank AS rank FROM chunks_fts f JOIN chunks c ON c.id = f.rowid JOIN docs d ON d.node_id = c.node_id
        WHERE chunks_fts MATCH @q AND (d.path = @p OR (d.path > @p || '/' AND d.path < @p || '0')) ORDER BY f.rank LIMIT @k`),
      // CAST: FTS5 given MATCH together with `rowid = ?` bound to a JS number ignores the rowid (every matching row comes back, and
      // the first one's snippet was shown for another chunk); compared as an integer expression the row is really narrowed.
      snippet: p(`SELECT snippet(chunks_fts, 0, '**', '**', '…', 24) AS s FROM chunks_fts WHERE chunks_fts MATCH ? AND rowid = CAST(? AS INTEGER)`),
      chunkRow: p(`SELECT c.id AS chunkId, c.node_id AS nodeId, d.path, d.type, d.version, c.chunk_index AS chunkIndex, c.heading_path AS headingPath, f.text AS text
        FROM chunks c JOIN docs d ON d.node_id = c.node_id JOIN chunks_fts f ON f.rowid = c.id WHERE c.id = ?`),
    };
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

  /** Replaces a document's chunks (its vectors go too; the embedder picks the new chunks up). */
  putDoc(doc: IndexedDoc, chunks: Chunk[]): void {
    this.removeChunks(doc.nodeId);
    this.st.upsertDoc.run(doc);
    for (const c of chunks) {
      const id = this.st.insertChunk.run(doc.nodeId, c.index, c.headingPath, c.hash).lastInsertRowid;
      this.st.insertFts.run(id, c.text, c.headingPath);
    }
  }

  /** Same content at another path or version (a move): only the document row changes. */
  relocate(doc: IndexedDoc): void {
    this.st.upsertDoc.run(doc);
  }

  deleteDoc(nodeId: string): void {
    this.removeChunks(nodeId);
    this.st.deleteDoc.run(nodeId);
  }

  private removeChunks(nodeId: string): void {
    const ids = this.st.chunkIds.all(nodeId) as { id: number }[];
    const vec = this.vectors();
    for (const { id } of ids) {
      this.st.deleteFts.run(id);
      vec?.remove.run(BigInt(id));
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
      if (meta.dimensions !== dims || meta.embeddingModel !== model) this.resetVectors(model, dims);
      const vec = this.vectors()!;
      for (const it of items) {
        if (it.vector.length !== dims) throw new Error(`the provider answered vectors of ${it.vector.length} and ${dims} dimensions`);
        const blob = Buffer.from(it.vector.buffer, it.vector.byteOffset, it.vector.byteLength);
        this.st.cache.run(model, it.hash, blob);
        // The chunk may have been replaced while its vector was computed.
        if (!this.st.chunkRow.get(it.id)) continue;
        vec.remove.run(BigInt(it.id));
        vec.insert.run(BigInt(it.id), blob);
        this.st.markEmbedded.run(it.id);
      }
    });
  }

  /** Another model or dimension: every vector is recomputed (cached vectors of that model are reused). */
  resetVectors(model: string, dims: number): void {
    this.db.exec('DROP TABLE IF EXISTS vectors');
    this.vectorStatements = null;
    this.db.exec(`CREATE VIRTUAL TABLE vectors USING vec0(embedding float[${dims}] distance_metric=cosine)`);
    this.db.exec('UPDATE chunks SET embedded = 0');
    this.setMeta({ embeddingModel: model, dimensions: dims });
  }

  private vectors() {
    if (this.vectorStatements) return this.vectorStatements;
    const exists = this.db.prepare(`SELECT 1 FROM sqlite_master WHERE name = 'vectors'`).get();
    if (!exists) return null;
    this.vectorStatements = {
      insert: this.db.prepare('INSERT INTO vectors (rowid, embedding) VALUES (?, ?)'),
      remove: this.db.prepare('DELETE FROM vectors WHERE rowid = ?'),
      knn: this.db.prepare('SELECT rowid AS id, distance FROM vectors WHERE embedding MATCH ? AND k = ? ORDER BY distance'),
    };
    return this.vectorStatements;
  }

  hasVectors(): boolean {
    return this.vectors() !== null;
  }

  // ------------------------------------------------------------ queries

  /**
   * BM25 over chunks beneath `prefix` ('' = everywhere), best first: chunks with every word
   * (`all`); when none has them all, chunks with any (`any`). Ranking a common word costs a pass
   * over every chunk that has it, so the broad query runs only when the precise one found nothing.
   * Ranking selects row ids only; text, paths and snippets are read for the `k` kept.
   */
  lexical(all: string, any: string | null, prefix: string, k: number): ChunkHit[] {
    const rank = (q: string) => (prefix === '' ? this.st.rankAll.all({ q, k }) : this.st.rankUnder.all({ q, p: prefix, k })) as { id: number; rank: number }[];
    const rows = rank(all).map((r) => ({ ...r, q: all }));
    if (rows.length === 0 && any !== null) rows.push(...rank(any).map((r) => ({ ...r, q: any })));
    const out: ChunkHit[] = [];
    for (const r of rows) {
      const c = this.st.chunkRow.get(r.id) as (Omit<ChunkHit, 'score' | 'snippet'> & { text: string }) | undefined;
      if (!c) continue;
      const { text: _text, ...hit } = c;
      void _text;
      out.push({ ...hit, score: -r.rank, snippet: (this.st.snippet.get(r.q, r.id) as { s: string } | undefined)?.s ?? '' });
    }
    return out;
  }

  /** Nearest chunks by cosine distance; `k` candidates before the prefix filter. */
  nearest(vector: Float32Array, prefix: string, k: number, candidates: number): (ChunkHit & { text: string })[] {
    const vec = this.vectors();
    if (!vec) return [];
    const rows = vec.knn.all(Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength), candidates) as { id: number; distance: number }[];
    const out: (ChunkHit & { text: string })[] = [];
    for (const r of rows) {
      const c = this.st.chunkRow.get(r.id) as (Omit<ChunkHit, 'score' | 'snippet'> & { text: string }) | undefined;
      if (!c) continue;
      if (prefix !== '' && c.path !== prefix && !c.path.startsWith(prefix + '/')) continue;
      out.push({ ...c, score: 1 - r.distance, snippet: '' });
      if (out.length >= k) break;
    }
    return out;
  }

  chunkText(chunkId: number): string | null {
    return (this.st.chunkRow.get(chunkId) as { text: string } | undefined)?.text ?? null;
  }

  close(): void {
    this.db.close();
  }

  /** Deletes the index files (a tool's project lost its last search tool, or a rebuild). */
  static destroy(file: string): void {
    for (const f of [file, `${file}-wal`, `${file}-shm`]) rmSync(f, { force: true });
  }
}
