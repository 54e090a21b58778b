import type { ServerResponse } from 'node:http';
import type { Changelog } from './changelog.ts';
import { FeedClient, type AccessCheck } from './feedClient.ts';

export interface ChangeFeedOptions {
  /** Comment lines on idle connections so proxies and clients keep them open. */
  heartbeatMs?: number;
  /** Unsent bytes a client may accumulate before it is told to resync. */
  maxBufferBytes?: number;
  /** Open streams one credential may hold at a time (0 = no cap). */
  maxStreamsPerHolder?: number;
  /** A fan-out that failed after waiting for access checks that answered with promises (logged). */
  onError?: (err: unknown, projectId: string) => void;
}

export interface AttachInput {
  projectId: string;
  scope: string;
  lastEventId: number | null;
  /** The credential holding the stream (`key:<id>`, `user:<id>`). */
  holder?: string;
  /** Re-checks access before each fan-out and heartbeat; the stream closes once it answers null. */
  check?: AccessCheck;
}

/** Commits read from the index per query while fanning out or catching up. */
const BATCH = 200;

/**
 * The live change feed: one event per project commit, for every open subscriber of the project.
 * The content store calls `notify(projectId)` after each acknowledged batch (API, sync, git
 * push alike); events are then read from the changelog, so live events, resumes from
 * Last-Event-ID and the changelog API are the same data.
 */
export class ChangeFeed {
  private readonly clients = new Map<string, Set<FeedClient>>();
  /** Per project with subscribers: the last commit number fanned out. */
  private readonly lastSeen = new Map<string, number>();
  private heartbeat: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly heartbeatMs: number;
  private readonly maxBufferBytes: number;
  private readonly maxStreamsPerHolder: number;
  private readonly perHolder = new Map<string, number>();
  private readonly onError: (err: unknown, projectId: string) => void;

  constructor(
    private readonly changelog: Changelog,
    options: ChangeFeedOptions = {},
  ) {
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
    this.maxBufferBytes = options.maxBufferBytes ?? 1024 * 1024;
    this.maxStreamsPerHolder = options.maxStreamsPerHolder ?? 0;
    this.onError = options.onError ?? (() => {});
  }

  /** Whether `holder` may open one more stream (checked before the response starts). */
  mayOpen(holder: string): boolean {
    return this.maxStreamsPerHolder <= 0 || (this.perHolder.get(holder) ?? 0) < this.maxStreamsPerHolder;
  }

  get streamCap(): number {
    return this.maxStreamsPerHolder;
  }

  get size(): number {
    let n = 0;
    for (const set of this.clients.values()) n += set.size;
    return n;
  }

  /**
   * Subscribes an already started SSE response. With `lastEventId` it first replays the commits
   * after it; everything runs synchronously, so no commit can slip between replay and live.
   */
  attach(res: ServerResponse, input: AttachInput): FeedClient {
    const latest = this.changelog.latest(input.projectId);
    // An id beyond the project's last commit (another server, a restored backup) resumes from now.
    const start = Math.min(input.lastEventId ?? latest, latest);
    const holder = input.holder ?? '';
    const client = new FeedClient(res, input.projectId, input.scope, start, this.maxBufferBytes, (c) => this.detach(c), holder, input.check);
    if (this.closed) {
      client.end();
      return client;
    }
    if (holder) this.perHolder.set(holder, (this.perHolder.get(holder) ?? 0) + 1);
    let set = this.clients.get(input.projectId);
    if (!set) {
      set = new Set();
      this.clients.set(input.projectId, set);
      this.lastSeen.set(input.projectId, latest);
    }
    set.add(client);
    client.comment('cns change feed');
    while (client.isOpen && client.sentUpTo < latest) {
      const commits = this.changelog.commits(input.projectId, client.sentUpTo, BATCH);
      if (commits.length === 0) break;
      for (const c of commits) client.deliver(c);
    }
    if (client.isOpen) client.event('ready', { project_id: input.projectId, project_version: client.sentUpTo });
    this.startHeartbeat();
    return client;
  }

  /**
   * New commits exist in `projectId`: send them to its subscribers. Access is re-checked before
   * anything is sent: a revoked key or removed member gets nothing more. Checks that answer with a
   * promise (the async metadata store) are waited for, and the fan-out asked again once they have
   * answered; checks that answer at once fan out at once, as before.
   */
  notify(projectId: string): void {
    const set = this.clients.get(projectId);
    if (!set || set.size === 0) return;
    const pending: Promise<boolean>[] = [];
    for (const client of [...set]) {
      const open = client.revalidate(false);
      if (open instanceof Promise) pending.push(open);
    }
    if (pending.length > 0) {
      void Promise.all(pending)
        .then(() => this.notify(projectId))
        .catch((err: unknown) => this.onError(err, projectId));
      return;
    }
    this.fanOut(projectId, set);
  }

  private fanOut(projectId: string, set: Set<FeedClient>): void {
    if (set.size === 0) return;
    let seen = this.lastSeen.get(projectId) ?? 0;
    for (;;) {
      const commits = this.changelog.commits(projectId, seen, BATCH);
      if (commits.length === 0) break;
      for (const c of commits) for (const client of set) client.deliver(c);
      seen = commits[commits.length - 1]!.projectVersion;
      if (commits.length < BATCH) break;
    }
    this.lastSeen.set(projectId, seen);
  }

  /** Re-checks every open stream now (after credentials or memberships changed) and closes those whose access ended. */
  revalidate(): void {
    for (const set of [...this.clients.values()]) for (const c of [...set]) void c.revalidate();
  }

  /** Ends every stream (server shutdown): clients reconnect with their Last-Event-ID elsewhere or later. */
  close(): void {
    this.closed = true;
    for (const set of [...this.clients.values()]) for (const c of [...set]) c.end();
    this.stopHeartbeat();
  }

  private detach(c: FeedClient): void {
    const set = this.clients.get(c.projectId);
    if (!set) return;
    if (!set.delete(c)) return;
    if (c.holder) {
      const n = (this.perHolder.get(c.holder) ?? 1) - 1;
      if (n > 0) this.perHolder.set(c.holder, n);
      else this.perHolder.delete(c.holder);
    }
    if (set.size === 0) {
      this.clients.delete(c.projectId);
      this.lastSeen.delete(c.projectId);
    }
    if (this.clients.size === 0) this.stopHeartbeat();
  }

  private startHeartbeat(): void {
    if (this.heartbeat || this.clients.size === 0) return;
    // Idle streams are re-checked too, so a revoked credential does not keep a connection open.
    this.heartbeat = setInterval(() => {
      for (const set of [...this.clients.values()]) {
        for (const c of [...set]) {
          const open = c.revalidate();
          if (open === true) c.comment('keep-alive');
          else if (open instanceof Promise) void open.then((still) => still && c.comment('keep-alive'));
        }
      }
    }, this.heartbeatMs);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }
}
