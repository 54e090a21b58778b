import type { NodeInfo } from '../content/types.ts';
import type { Logger } from '../logging/logger.ts';
import type { AnalyticsStore, CountRow, VisitorRow } from './analyticsStore.ts';
import type { VisitorHasher } from './visitorHash.ts';

/** A public view of published content (GET /p/{key}). */
export interface ViewHit {
  projectId: string;
  publishId: string;
  nodeId: string;
  /** The client's address and user agent: hashed with the day's salt at once, never kept. */
  address: string;
  userAgent: string;
}

/**
 * An authenticated API request. `projectId` is null when only the node tells it; `node` is the node
 * the route named, by id or by path (resolved when flushed, off the request path).
 */
export interface ApiHit {
  projectId: string | null;
  /** The access key's connection ('' for a signed-in user). */
  connectionId: string;
  node: { id: string } | { path: string } | null;
}

/** How the counter finds a node named by a request (the content store's index). */
export interface NodeLookup {
  findById(id: string): NodeInfo | null;
  findByPath(projectId: string, path: string): NodeInfo | null;
}

interface Pending {
  projectId: string | null;
  minute: number;
  publishId: string;
  connectionId: string;
  nodeId: string | null;
  nodePath: string | null;
  views: number;
  apiCalls: number;
}

export interface AccessCounterOptions {
  store: AnalyticsStore;
  hasher: VisitorHasher;
  nodes: NodeLookup;
  logger: Logger;
  enabled: boolean;
  flushMs: number;
  /** Pending aggregates past this many are flushed at once rather than at the next tick (memory stays bounded). */
  maxPending?: number;
  now?: () => number;
}

const minuteOf = (ms: number) => Math.floor(ms / 60_000);

/**
 * Usage counting with a per-request cost of a Map increment: hits are summed in memory per
 * minute, publish, connection and node, and written in one transaction of the metadata store every `flushMs`
 * (and on close) by a timer, never by a request. Nodes named by path are looked up at flush time.
 */
export class AccessCounter {
  readonly enabled: boolean;
  private counts = new Map<string, Pending>();
  private visitors = new Map<string, VisitorRow>();
  private readonly timer: NodeJS.Timeout | null;
  private readonly maxPending: number;
  private readonly now: () => number;
  private flushSoon = false;
  private closed = false;
  /** The visitor hashes being made (a view's visitor is added when its hash is ready). */
  private readonly hashing = new Set<Promise<void>>();
  /** The batches being written, in order. */
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly o: AccessCounterOptions) {
    this.enabled = o.enabled;
    this.maxPending = o.maxPending ?? 50_000;
    this.now = o.now ?? Date.now;
    this.timer = o.enabled ? setInterval(() => void this.flush(), o.flushMs) : null;
    this.timer?.unref();
  }

  view(hit: ViewHit): void {
    if (!this.enabled || this.closed) return;
    const at = this.now();
    const minute = minuteOf(at);
    this.bump(hit.projectId, minute, hit.publishId, '', hit.nodeId, null, 1, 0);
    // Hashed with the day's salt (read from the store once a day); the address is not kept.
    const hashing = this.o.hasher.hash(hit.address, hit.userAgent, at).then(
      (visitor) => {
        const key = `${hit.projectId}\0${minute}\0${hit.publishId}\0${hit.nodeId}\0${visitor}`;
        if (this.visitors.has(key)) return;
        this.visitors.set(key, { projectId: hit.projectId, minute, publishId: hit.publishId, nodeId: hit.nodeId, visitor });
        this.bounded();
      },
      (err) => this.o.logger.warn({ err }, 'analytics: a visitor could not be counted'),
    );
    this.hashing.add(hashing);
    void hashing.finally(() => this.hashing.delete(hashing));
  }

  apiCall(hit: ApiHit, at = this.now()): void {
    if (!this.enabled || this.closed) return;
    if (hit.projectId === null && hit.node === null) return; // nothing to count it against
    const byId = hit.node && 'id' in hit.node ? hit.node.id : null;
    const byPath = hit.node && 'path' in hit.node ? hit.node.path : null;
    this.bump(hit.projectId, minuteOf(at), '', hit.connectionId, byId, byPath, 0, 1);
  }

  /**
   * Writes what is pending in one transaction, the visitors of views made so far included. Safe to
   * call at any time: batches are written one after the other, and a failure is logged and its
   * batch dropped. Resolves once this batch and those before it are written.
   */
  flush(): Promise<void> {
    this.flushSoon = false;
    this.writing = this.writing.then(async () => {
      await Promise.all(this.hashing);
      if (this.counts.size === 0 && this.visitors.size === 0) return;
      const counts = this.counts;
      const visitors = this.visitors;
      this.counts = new Map();
      this.visitors = new Map();
      // The nodes named by path are looked up now, in the index as it stands.
      const rows = [...this.resolve(counts.values())];
      await this.o.store.add(rows, visitors.values()).catch((err) => this.o.logger.warn({ err, rows: counts.size + visitors.size }, 'analytics: a batch of counts could not be written'));
    });
    return this.writing;
  }

  /** Stops counting and the timer, and writes what is pending (shutdown, before the metadata store closes). */
  close(): Promise<void> {
    if (this.closed) return this.writing;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    return this.flush();
  }

  private bump(projectId: string | null, minute: number, publishId: string, connectionId: string, nodeId: string | null, nodePath: string | null, views: number, apiCalls: number): void {
    const key = `${projectId ?? ''}\0${minute}\0${publishId}\0${connectionId}\0${nodeId ?? ''}\0${nodePath ?? ''}`;
    const p = this.counts.get(key);
    if (p) {
      p.views += views;
      p.apiCalls += apiCalls;
      return;
    }
    this.counts.set(key, { projectId, minute, publishId, connectionId, nodeId, nodePath, views, apiCalls });
    this.bounded();
  }

  /** Past `maxPending` entries (many distinct nodes or visitors in one interval), the next turn of the event loop writes them. */
  private bounded(): void {
    if (this.counts.size + this.visitors.size > this.maxPending && !this.flushSoon) {
      this.flushSoon = true;
      setImmediate(() => void this.flush());
    }
  }

  /** Pending aggregates as rows: the node a request named by path or id becomes its id (and its project, when the request named none). */
  private *resolve(pending: Iterable<Pending>): Iterable<CountRow> {
    for (const p of pending) {
      const node = this.nodeOf(p);
      const projectId = p.projectId ?? node?.projectId ?? null;
      if (projectId === null) continue;
      const nodeId = p.publishId ? (p.nodeId ?? '') : node && node.projectId === projectId ? node.id : '';
      yield { projectId, minute: p.minute, publishId: p.publishId, connectionId: p.connectionId, nodeId, views: p.views, apiCalls: p.apiCalls };
    }
  }

  private nodeOf(p: Pending): NodeInfo | null {
    if (p.publishId) return null; // views name their node already
    try {
      if (p.nodeId !== null) return this.o.nodes.findById(p.nodeId);
      if (p.nodePath !== null && p.projectId !== null) return this.o.nodes.findByPath(p.projectId, p.nodePath);
    } catch {
      // a request's project or path that is not valid names no node
    }
    return null;
  }
}
