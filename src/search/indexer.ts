import { join } from 'node:path';
import type { ContentStore, NodeInfo, TreeNode } from '../content/contentStore.ts';
import type { Logger } from '../logging/logger.ts';
import type { Changelog } from '../events/changelog.ts';
import { chunkJson, chunkMarkdown, chunkText, MAX_INDEXED_BYTES, type Chunk } from './chunker.ts';
import { EmbeddingsError, type EmbeddingsClient } from './embeddings.ts';
import { fileText } from './fileText.ts';
import { trainCentroids } from './ivf.ts';
import { QueryPool } from './queryPool.ts';
import type { SearchQueries } from './searcher.ts';
import { GREP_MAX_INDEXED_BYTES, grepTextOf } from './grepText.ts';
import { GREP_NONE, GREP_TEXT, GREP_UNINDEXED, SearchIndex, type GrepDoc, type IndexedDoc, type IndexStatus } from './searchIndex.ts';

export interface IndexerOptions {
  content: ContentStore;
  changelog: Changelog;
  dataDir: string;
  embeddings: EmbeddingsClient | null;
  logger?: Logger;
  /** Nodes read and written per batch (one transaction, then the event loop gets a turn). */
  batchNodes?: number;
  /** Commits read from the changelog at a time. */
  commitsPerPage?: number;
  /** Quiet time after a commit notification before indexing, so that a burst of writes is indexed together... */
  quietMs?: number;
  /** ...but never more than this after the first notification (freshness). */
  maxDelayMs?: number;
  /** False once a project has no search tool any more (deleted meanwhile): its runner stops. A failure to tell counts as wanted. */
  isWanted?: (projectId: string) => boolean | Promise<boolean>;
  onUnwanted?: (projectId: string) => void;
  /** First wait before retrying a failing embedding provider; doubles up to maxRetryMs. */
  retryMs?: number;
  maxRetryMs?: number;
  /** Query threads (default: one per core, at most 4). */
  queryThreads?: number;
}

export interface IndexState {
  status: IndexStatus;
  documents: number;
  chunks: number;
  indexed_project_version: number;
  project_version: number;
  lag_versions: number;
  mode: 'lexical' | 'hybrid';
  embedding_model: string | null;
  pending_embeddings: number;
  /** Hybrid only: cells of the vector index (0: every vector is scanned) and whether new cells are being filled. */
  vector_index: { cells: number; rebuilding: boolean } | null;
  last_error: string | null;
  updated_at: string;
}

type Op = { kind: 'put'; doc: IndexedDoc; chunks: Chunk[]; grep: GrepDoc } | { kind: 'relocate'; doc: IndexedDoc } | { kind: 'delete'; nodeId: string };

/**
 * Keeps the search index of every project that has a search tool up to date. It follows the
 * content store's commit notifications (every surface: REST, collab, git push, sync, agents)
 * and reads what changed from the changelog, re-indexing only those nodes; its position is a
 * project version persisted in the index itself, in the same transaction as the documents, so
 * after a crash or restart it resumes from there. Work is done in small batches with the event
 * loop free in between, in the index's own database file: content writes never wait for it.
 */
export class SearchIndexer {
  private readonly runners = new Map<string, ProjectRunner>();
  private closed = false;
  /** Queries run in worker threads with their own read-only connections to the index files. */
  private readonly pool: QueryPool;

  constructor(readonly options: IndexerOptions) {
    this.pool = new QueryPool(options.queryThreads, options.logger);
  }

  get mode(): 'lexical' | 'hybrid' {
    return this.options.embeddings ? 'hybrid' : 'lexical';
  }

  get embeddings(): EmbeddingsClient | null {
    return this.options.embeddings;
  }

  fileOf(projectId: string): string {
    return join(this.options.dataDir, 'search', `${projectId}.sqlite`);
  }

  /** Starts following a project (it has a search tool); catches up at once. */
  enable(projectId: string): void {
    if (this.closed) return;
    let r = this.runners.get(projectId);
    if (!r) {
      r = new ProjectRunner(projectId, new SearchIndex(this.fileOf(projectId)), this.options);
      this.runners.set(projectId, r);
    }
    r.schedule(0);
  }

  /** Stops following a project and deletes its index (its last search tool was deleted). */
  async disable(projectId: string): Promise<void> {
    const r = this.runners.get(projectId);
    this.runners.delete(projectId);
    if (r) await r.stop();
    await this.pool.forget(this.fileOf(projectId));
    SearchIndex.destroy(this.fileOf(projectId));
  }

  isEnabled(projectId: string): boolean {
    return this.runners.has(projectId);
  }

  /** A commit landed in a project: index it soon (a no-op for projects without a search tool). */
  notify(projectId: string): void {
    this.runners.get(projectId)?.schedule(this.options.quietMs ?? 20, this.options.maxDelayMs ?? 200);
  }

  index(projectId: string): SearchIndex | null {
    return this.runners.get(projectId)?.index ?? null;
  }

  /** Queries on a project's index (null until it has a search tool), answered by the query threads. */
  queries(projectId: string): SearchQueries | null {
    const index = this.index(projectId);
    if (!index) return null;
    const file = this.fileOf(projectId);
    const pool = this.pool;
    return {
      hasVectors: () => index.hasVectors(),
      lexical: (...args) => pool.run(file, 'lexical', ...args),
      nearest: (...args) => pool.run(file, 'nearest', ...args),
      chunkTexts: (ids) => pool.run(file, 'texts', ids),
      grepCandidates: (...args) => pool.run(file, 'grep', ...args),
    };
  }

  state(projectId: string, prefix: string): IndexState | null {
    return this.runners.get(projectId)?.state(prefix, this.mode) ?? null;
  }

  /** Resolves when the project's index has caught up with `version` (tests and benchmarks). */
  async caughtUp(projectId: string, version: number): Promise<void> {
    await this.runners.get(projectId)?.waitFor(version);
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.runners.values()];
    this.runners.clear();
    await Promise.all(all.map((r) => r.stop()));
    await this.pool.close();
  }
}

class ProjectRunner {
  private running: Promise<void> | null = null;
  private dirty = false;
  private stopped = false;
  private started = false;
  /** The last failure of the indexing loop itself (embedding failures are persisted in the index). */
  private indexError: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private firstPendingAt: number | null = null;
  /** The soonest a commit notified during a run asked to be indexed (see `schedule`). */
  private deferred: { quietMs: number; maxWaitMs: number } | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryDelay: number;
  private readonly waiters: { version: number; resolve: () => void }[] = [];
  private training: Promise<void> | null = null;
  private trainingFailed = false;

  constructor(
    readonly projectId: string,
    readonly index: SearchIndex,
    private readonly o: IndexerOptions,
  ) {
    this.retryDelay = o.retryMs ?? 1000;
  }

  /**
   * Runs the loop after `quietMs` without a new call, but no later than `maxWaitMs` after the
   * first call (a trailing debounce): a burst of writes is indexed in one pass after it, so the
   * indexing work does not interleave with every single write.
   */
  schedule(quietMs: number, maxWaitMs = quietMs): void {
    if (this.stopped) return;
    this.dirty = true;
    const now = Date.now();
    this.firstPendingAt ??= now;
    if (this.running) {
      // Kept for when this run ends (it then schedules the next with them).
      this.deferred = { quietMs: Math.min(this.deferred?.quietMs ?? quietMs, quietMs), maxWaitMs: Math.min(this.deferred?.maxWaitMs ?? maxWaitMs, maxWaitMs) };
      return;
    }
    const delay = Math.max(0, Math.min(quietMs, this.firstPendingAt + maxWaitMs - now));
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.start();
    }, delay);
  }

  private start(): void {
    this.firstPendingAt = null;
    if (this.running || this.stopped) return;
    this.running = this.loop()
      .catch(async (err) => {
        if (this.stopped) return;
        const { isWanted } = this.o;
        if (isWanted && !(await Promise.resolve(this.projectId).then(isWanted).catch(() => true))) {
          this.o.onUnwanted?.(this.projectId);
          return;
        }
        if (this.stopped) return;
        this.o.logger?.error({ err, projectId: this.projectId }, 'search indexing failed; retrying');
        this.indexError = `indexing failed: ${(err as Error).message}`;
        // Try again later (the cause may be passing: a busy disk, a repository being repacked).
        this.retryTimer ??= setTimeout(() => {
          this.retryTimer = null;
          this.schedule(0);
        }, this.retryDelay);
        this.retryDelay = Math.min(this.retryDelay * 2, this.o.maxRetryMs ?? 30_000);
      })
      .finally(() => {
        this.running = null;
        const next = this.deferred ?? { quietMs: 0, maxWaitMs: 0 };
        this.deferred = null;
        if (this.dirty && !this.stopped) this.schedule(next.quietMs, next.maxWaitMs);
      });
  }

  /**
   * One run: catches up with the commits so far, then embeds and maintains the vector index until
   * done or until new commits arrive. Those end the run, and the next one starts after the same
   * quiet time as any commit (see `schedule`): under a steady stream of writes the index follows
   * in batches instead of one transaction per commit, which would tax every write.
   */
  private async loop(): Promise<void> {
    this.started = true;
    if (this.dirty) {
      this.dirty = false;
      await this.catchUp();
    }
    while (!this.stopped && !this.dirty && this.o.embeddings && !this.retryTimer) {
      if (await this.embedBatch()) continue;
      // Nothing left to embed: the vector index's cells are (re)learned and filled now, between commits.
      await this.maintainVectors();
      break;
    }
  }

  // ---------------------------------------------------------------- following commits

  private async catchUp(): Promise<void> {
    const { content, changelog } = this.o;
    let meta = this.index.meta();
    const latest = changelog.latest(this.projectId);
    if (meta.buildVersion !== null || (meta.indexedVersion === 0 && latest > 0 && this.index.counts('').documents === 0)) {
      await this.build(meta.buildVersion ?? content.projectVersion(this.projectId));
      meta = this.index.meta();
    }
    let position = meta.indexedVersion;
    for (;;) {
      if (this.stopped) return;
      const commits = changelog.commits(this.projectId, position, this.o.commitsPerPage ?? 200);
      if (commits.length === 0) break;
      const last = commits[commits.length - 1]!.projectVersion;
      // Each node once per page: its current state is what gets indexed.
      const nodes = new Set<string>();
      const folders: { path: string; oldPath: string | null; nodeId: string }[] = [];
      for (const c of commits) {
        for (const e of c.changes) {
          if (e.nodeType === 'folder') folders.push({ path: e.path, oldPath: e.oldPath, nodeId: e.nodeId });
          else nodes.add(e.nodeId);
        }
      }
      // A folder moved, trashed, restored or deleted: its descendants have no entries of their own.
      for (const f of folders) {
        for (const p of [f.path, f.oldPath]) if (p !== null) for (const d of this.index.docsUnder(p)) nodes.add(d.nodeId);
        const folder = content.findById(f.nodeId);
        if (folder && folder.state === 'active' && folder.projectId === this.projectId) {
          for (const n of await this.filesUnder(folder.path)) nodes.add(n.id);
        }
      }
      const ids = [...nodes];
      const batch = this.o.batchNodes ?? BATCH_NODES;
      for (let i = 0; i < ids.length; i += batch) {
        if (this.stopped) return;
        const ops = await this.prepare(ids.slice(i, i + batch));
        const final = i + batch >= ids.length;
        this.index.transaction(() => {
          this.apply(ops);
          if (final) this.index.setMeta({ indexedVersion: last, status: 'indexing' });
        });
        await yieldTurn();
      }
      if (ids.length === 0) this.index.setMeta({ indexedVersion: last });
      position = last;
      this.resolveWaiters(position);
    }
    this.indexError = null;
    this.finishStatus();
  }

  /** The first index of a project: every content node at `version` (a restart starts over, skipping what is done). */
  private async build(version: number): Promise<void> {
    this.index.setMeta({ buildVersion: version, status: 'indexing' });
    const all = await this.filesUnder('');
    const todo = all.filter((n) => {
      const d = this.index.doc(n.id);
      return !d || d.contentHash !== n.contentHash || d.path !== n.path;
    });
    const batch = this.o.batchNodes ?? BATCH_NODES;
    for (let i = 0; i < todo.length; i += batch) {
      if (this.stopped) return;
      const ops = await this.prepare(todo.slice(i, i + batch).map((n) => n.id));
      this.index.transaction(() => this.apply(ops));
      await yieldTurn();
    }
    this.index.setMeta({ indexedVersion: version, buildVersion: null });
    this.resolveWaiters(version);
  }

  /** Every content node beneath `path`, read page by page so that a large tree does not hold the event loop. */
  private async filesUnder(path: string): Promise<NodeInfo[]> {
    const out: NodeInfo[] = [];
    let cursor: string | null = null;
    do {
      const page = await this.o.content.treePage(this.projectId, path, { maxDepth: -1, limit: 2000, cursor });
      out.push(...flatten(page.root));
      cursor = page.nextCursor;
      await yieldTurn();
    } while (cursor && !this.stopped);
    return [...new Map(out.map((n) => [n.id, n])).values()];
  }

  /** Reads the nodes' current content (async) and turns each into an index operation. */
  private async prepare(ids: string[]): Promise<Op[]> {
    const ops: Op[] = [];
    for (const id of ids) {
      const node = this.o.content.findById(id);
      if (!node || node.projectId !== this.projectId || node.state !== 'active' || node.type === 'folder') {
        ops.push({ kind: 'delete', nodeId: id });
        continue;
      }
      const doc: IndexedDoc = { nodeId: node.id, path: node.path, type: node.type, version: node.version, contentHash: node.contentHash };
      const known = this.index.doc(id);
      if (known && known.contentHash === node.contentHash) {
        if (known.path !== node.path || known.version !== node.version) ops.push({ kind: 'relocate', doc });
        continue;
      }
      ops.push({ kind: 'put', doc, ...(await this.textsOf(node)) });
    }
    return ops;
  }

  /** A node's chunks for search and its raw text for grep, from one read of its content. */
  private async textsOf(node: NodeInfo): Promise<{ chunks: Chunk[]; grep: GrepDoc }> {
    const unindexed: GrepDoc = { state: GREP_UNINDEXED };
    if (node.size > MAX_INDEXED_BYTES && node.size > GREP_MAX_INDEXED_BYTES) return { chunks: [], grep: unindexed };
    let bytes: Buffer;
    try {
      bytes = (await this.o.content.readContent(this.projectId, { id: node.id })).bytes;
    } catch {
      return { chunks: [], grep: unindexed }; // gone meanwhile: the next commit's entry removes it
    }
    let grep = unindexed;
    if (bytes.length <= GREP_MAX_INDEXED_BYTES) {
      const text = grepTextOf(node.type, bytes);
      grep = text === null ? { state: GREP_NONE } : { state: GREP_TEXT, text };
    }
    return { chunks: node.size > MAX_INDEXED_BYTES ? [] : this.chunksOf(node, bytes), grep };
  }

  private chunksOf(node: NodeInfo, bytes: Buffer): Chunk[] {
    if (node.type === 'json') {
      try {
        return chunkJson(JSON.parse(bytes.toString('utf8')));
      } catch {
        return [];
      }
    }
    const text = node.type === 'markdown' ? bytes.toString('utf8') : fileText(node.mimeType, bytes);
    if (text === null) return [];
    return node.type === 'markdown' || /\.(md|markdown)$/i.test(node.path) ? chunkMarkdown(text) : chunkText(text);
  }

  private apply(ops: Op[]): void {
    for (const op of ops) {
      if (op.kind === 'delete') this.index.deleteDoc(op.nodeId);
      else if (op.kind === 'relocate') this.index.relocate(op.doc);
      else this.index.putDoc(op.doc, op.chunks, op.grep);
    }
  }

  private finishStatus(): void {
    const meta = this.index.meta();
    if (meta.lastError) return; // the embedder clears it when the provider answers again
    const waiting = this.o.embeddings && this.index.pendingCount() > 0;
    const status: IndexStatus = waiting ? 'indexing' : 'ready';
    if (meta.status !== status) this.index.setMeta({ status });
  }

  // ---------------------------------------------------------------- embeddings

  /** Embeds one batch of chunks that have no vector yet; false when nothing is left or the provider fails. */
  private async embedBatch(): Promise<boolean> {
    const client = this.o.embeddings!;
    const pending = this.index.pendingEmbeddings(client.batchSize * client.parallel);
    if (pending.length === 0) {
      this.finishStatus();
      return false;
    }
    const model = client.model;
    const ready: { id: number; hash: string; vector: Float32Array }[] = [];
    const misses: typeof pending = [];
    const meta = this.index.meta();
    for (const p of pending) {
      const v = meta.embeddingModel === model || meta.embeddingModel === null ? this.index.cachedVector(model, p.hash) : null;
      if (v) ready.push({ id: p.id, hash: p.hash, vector: v });
      else misses.push(p);
    }
    // Chunks with the same text in this batch are embedded once.
    const unique = [...new Map(misses.map((m) => [m.hash, m])).values()];
    try {
      if (unique.length > 0) {
        const vectors = await client.embed(unique.map((m) => m.text));
        const byHash = new Map(unique.map((m, i) => [m.hash, vectors[i]!]));
        for (const m of misses) ready.push({ id: m.id, hash: m.hash, vector: byHash.get(m.hash)! });
      }
    } catch (err) {
      if (this.stopped) return false;
      const message = err instanceof EmbeddingsError ? err.message : `embedding failed: ${(err as Error).message}`;
      this.index.setMeta({ status: 'error', lastError: message });
      this.o.logger?.warn({ projectId: this.projectId, error: message }, 'embedding provider failed; lexical search keeps answering');
      this.retryTimer = setTimeout(() => {
        this.retryTimer = null;
        this.schedule(0);
      }, this.retryDelay);
      this.retryDelay = Math.min(this.retryDelay * 2, this.o.maxRetryMs ?? 30_000);
      return false;
    }
    if (this.stopped) return false;
    this.index.storeVectors(model, ready);
    if (this.index.meta().lastError) this.index.setMeta({ lastError: null });
    this.retryDelay = this.o.retryMs ?? 1000;
    await yieldTurn();
    return true;
  }

  /**
   * Learns the vector index's cells when it has grown enough (k-means in a worker thread, while
   * this loop goes on following commits), then copies the vectors into the new cells in small
   * steps, each one transaction with the event loop free in between; a commit interrupts the copy.
   */
  private async maintainVectors(): Promise<void> {
    const due = this.training || this.trainingFailed ? null : this.index.trainingDue();
    if (due !== null) {
      const plan = this.index.trainingPlan(due);
      this.training = trainCentroids(plan.sample, plan.dims, plan.cells)
        .then((centroids) => {
          if (!this.stopped) this.index.beginRebuild(centroids, plan);
        })
        .catch((err: Error) => {
          // Search stays exact (every vector scanned); tried again after a restart.
          this.trainingFailed = true;
          this.o.logger?.warn({ projectId: this.projectId, error: err.message }, 'learning the vector index cells failed');
        })
        .finally(() => {
          this.training = null;
          if (!this.stopped) this.schedule(0);
        });
    }
    while (!this.stopped && !this.dirty && this.index.maintenanceStep()) await yieldTurn();
  }

  // ---------------------------------------------------------------- state

  state(prefix: string, mode: 'lexical' | 'hybrid'): IndexState {
    const meta = this.index.meta();
    const latest = this.o.changelog.latest(this.projectId);
    const { documents, chunks } = this.index.counts(prefix);
    const pendingEmbeddings = mode === 'hybrid' ? this.index.pendingCount() : 0;
    const lastError = this.indexError ?? meta.lastError;
    let status: IndexStatus = 'ready';
    if (!this.started) status = 'pending';
    else if (lastError) status = 'error';
    else if (meta.indexedVersion < latest || meta.buildVersion !== null || pendingEmbeddings > 0) status = 'indexing';
    return {
      status,
      documents,
      chunks,
      indexed_project_version: meta.indexedVersion,
      project_version: latest,
      lag_versions: Math.max(0, latest - meta.indexedVersion),
      mode,
      embedding_model: mode === 'hybrid' ? this.o.embeddings!.model : null,
      pending_embeddings: pendingEmbeddings,
      vector_index: mode === 'hybrid' ? this.vectorIndexState() : null,
      last_error: lastError,
      updated_at: meta.updatedAt,
    };
  }

  private vectorIndexState(): { cells: number; rebuilding: boolean } {
    const v = this.index.vectorIndex();
    const due = !this.trainingFailed && !v.rebuilding && this.training === null && this.index.trainingDue() !== null;
    return { cells: v.cells, rebuilding: v.rebuilding || this.training !== null || due };
  }

  waitFor(version: number): Promise<void> {
    if (this.index.meta().indexedVersion >= version) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ version, resolve }));
  }

  private resolveWaiters(position: number): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (this.waiters[i]!.version <= position) this.waiters.splice(i, 1)[0]!.resolve();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.timer = this.retryTimer = null;
    await this.running;
    for (const w of this.waiters.splice(0)) w.resolve();
    this.index.close();
  }
}

/** Every non-folder node of a tree. */
function flatten(root: TreeNode): NodeInfo[] {
  const out: NodeInfo[] = [];
  const walk = (n: TreeNode) => {
    if (n.type !== 'folder') out.push(n);
    for (const c of n.children ?? []) walk(c);
  };
  walk(root);
  return out;
}

/** Nodes indexed per transaction, the event loop free in between: ~1-2 ms of work, which is all a write arriving meanwhile waits. */
const BATCH_NODES = 5;
const yieldTurn = () => new Promise<void>((r) => setImmediate(r));
