import { watch, type FSWatcher } from 'chokidar';
import type { Stats } from 'node:fs';
import { ApiError } from '../client/errors.ts';
import type { CycleReport } from './cycleReport.ts';
import { FeedSubscription, type FeedEvent } from './feedSubscription.ts';
import type { FolderStore } from './folderState.ts';
import { IgnoreRules } from './ignoreRules.ts';
import { toRel } from './localFiles.ts';
import type { SyncEngine } from './syncEngine.ts';

/** Editors save in several steps (truncate, write, rename): wait this long for the burst to end. */
const LOCAL_SETTLE_MS = 30;
/** After a failed cycle (server unreachable…), try again after this long. */
const RETRY_MS = 2_000;
/** A full scan of the folder at least this often, in case the watcher missed an event. */
const FULL_SCAN_MS = 5 * 60_000;

export interface WatchHandlers {
  onCycle: (r: CycleReport) => void;
  onError: (err: Error) => void;
  /** A failure retrying cannot fix (the key was revoked): the watch ends. */
  onFatal: (err: Error) => void;
}

/**
 * `cns sync --watch`: local changes arrive from chokidar, remote ones from the live change feed;
 * either schedules a cycle. Cycles never overlap: changes arriving during one schedule the next.
 * No polling: an idle folder costs one open feed connection and the file watches.
 */
export class FolderWatcher {
  private watcher: FSWatcher | null = null;
  private feed: FeedSubscription | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private pending = false;
  private stopped = false;
  /** Paths reported since the last cycle; null means the next cycle scans the whole folder. */
  private dirty: Set<string> | null = null;
  private lastFullScan = 0;
  private rules: IgnoreRules;

  constructor(
    private readonly engine: SyncEngine,
    private readonly store: FolderStore,
    private readonly handlers: WatchHandlers,
  ) {
    this.rules = new IgnoreRules(store.root);
  }

  async start(): Promise<void> {
    const root = this.store.root;
    this.watcher = watch(root, {
      ignoreInitial: true,
      alwaysStat: true,
      ignored: (p: string, stats?: Stats) => this.rules.ignores(toRel(root, p), stats?.isDirectory() ?? false),
    });
    this.watcher.on('all', (event: string, path: string, stats?: Stats) => this.onLocal(event, path, stats));
    this.watcher.on('error', (err: unknown) => this.handlers.onError(err as Error));
    await new Promise<void>((resolve) => this.watcher!.once('ready', () => resolve()));
    const { config, api } = this.engine;
    this.feed = new FeedSubscription(api.eventsUrl(config.projectId), this.store.readKey(), (e) => this.onRemote(e), (err) =>
      this.handlers.onError(new Error(`change feed: ${err.message}; reconnecting`)),
    );
    this.feed.start();
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.feed?.stop();
    await this.watcher?.close();
    while (this.running) await this.running;
  }

  private onLocal(event: string, abs: string, stats?: Stats): void {
    const rel = toRel(this.store.root, abs);
    if (rel === '.cnsignore') this.rules = new IgnoreRules(this.store.root);
    const known = this.engine.tracked(rel);
    // The sync's own writes come back as events: skip those that match what it recorded.
    if ((event === 'add' || event === 'change') && known && stats && known.size === stats.size && known.mtimeMs === stats.mtimeMs) return;
    if (event === 'unlink' && !known) return;
    if (event === 'addDir' || event === 'unlinkDir' || rel === '.cnsignore') this.dirty = null;
    else this.dirty?.add(rel);
    if (event === 'addDir') return; // its files are reported one by one
    this.schedule(LOCAL_SETTLE_MS);
  }

  private onRemote(e: FeedEvent): void {
    if (e.event === 'change') {
      const actorId = (JSON.parse(e.data) as { actor?: { id?: string } }).actor?.id;
      if (actorId === this.engine.config.syncId) return; // our own push
    } else if (e.event !== 'ready' && e.event !== 'resync') {
      return;
    }
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.running) {
      this.pending = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.run();
    }, delayMs);
  }

  private run(): void {
    if (this.running) {
      this.pending = true;
      return;
    }
    this.pending = false;
    const full = this.dirty === null || Date.now() - this.lastFullScan > FULL_SCAN_MS;
    const dirty = full ? null : this.dirty;
    this.dirty = new Set();
    if (full) this.lastFullScan = Date.now();
    this.running = this.engine
      .cycle(dirty)
      .then((r) => this.handlers.onCycle(r))
      .catch((err: Error) => {
        if (err instanceof ApiError && (err.status === 401 || err.status === 403 || err.status === 404)) {
          this.handlers.onFatal(err);
          return;
        }
        this.handlers.onError(err);
        this.dirty = null;
        setTimeout(() => this.schedule(0), RETRY_MS).unref();
      })
      .finally(() => {
        this.running = null;
        if (this.pending) this.schedule(0);
      });
  }
}
