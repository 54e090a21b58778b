import type { ContentStore } from '../../content/contentStore.ts';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import type { AccessConnectionStore } from '../../domain/connections/accessConnectionStore.ts';
import type { Logger } from '../../logging/logger.ts';
import type { Changelog } from '../../events/changelog.ts';
import type { WriteTimeGrants } from '../../policies/writeTimeGrant.ts';
import type { SyncRunRecord, SyncStateRecord } from '../../sync/syncRecords.ts';
import type { SyncStore } from '../../sync/syncStore.ts';
import type { PlatformConnector } from './connector.ts';
import type { CredentialSource } from './credentials.ts';
import type { ConvertInput, ConvertOutput } from '../../ingest/converters/converter.ts';
import { ItemStore } from './itemStore.ts';
import { PlatformRunStore } from './platformRunStore.ts';
import { runSync } from './runSync.ts';
import { firstRunAt, nextRunAt } from './schedule.ts';
import { requireWrite, runError, WriteRefused } from './writeGrant.ts';

export interface SyncRuntimeDeps {
  /** Where the runs, items and schedule are kept. */
  metadata: MetadataStore;
  store: SyncStore;
  connections: AccessConnectionStore;
  content: ContentStore;
  changelog: Changelog;
  credentials: CredentialSource;
  /** Each write of a run asks the policy again, as the sync's key stands then. */
  grants: Pick<WriteTimeGrants, 'require'>;
  logger: Logger;
  connectors: PlatformConnector[];
  /** The ingestion converters, in their own processes (a Drive sync's `convert`). */
  convert: (input: ConvertInput, signal?: AbortSignal) => Promise<ConvertOutput>;
  /** Read at each use: `sync.maxConcurrentRuns`, `sync.apiBase`, `urlFetchAllowPrivate`, `maxContentBytes`. */
  settings: () => { sync: { maxConcurrentRuns: number; apiBase: Record<string, string> }; urlFetchAllowPrivate: boolean; maxContentBytes: number };
  /** Waits of rate limits and backoff (tests make them instant). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  now?: () => number;
  /**
   * Several workers (issue 29): whether this process runs the project's scheduled runs (it owns
   * the project, or takes it now). Absent: every project's, as the one process.
   */
  adopt?: (projectId: string) => boolean;
  /** Whether start-up marks runs left queued or running as interrupted: only when no other process can be running them. Default true. */
  recover?: boolean;
  /**
   * The cluster node this process is (issue 31): recorded on the runs it queues and starts, and
   * start-up's recovery touches only those (and runs from before the cluster). Null: a single
   * box, whose recovery takes every run.
   */
  nodeId: string | null;
}

/** A run asked for: its record now, and the record once it has finished. */
export interface RunHandle {
  run: SyncRunRecord;
  done: Promise<SyncRunRecord>;
}

interface Active {
  /** The run's queued record, being made when the run is asked for. */
  record: Promise<SyncRunRecord>;
  runId: string | null;
  controller: AbortController;
  done: Promise<SyncRunRecord>;
  resolve: (r: SyncRunRecord) => void;
  started: boolean;
}

/** Longest the scheduler sleeps between looks at the schedule (a changed clock, a missed wake-up). */
const MAX_TIMER_MS = 30_000;
/** Several workers: how soon it looks again while another process's sync is due (its owner takes it). */
const OTHERS_DUE_MS = 1000;

/**
 * The platform sync runtime (issue 16): the scheduler of interval syncs (the next run time in
 * the metadata store, so the schedule survives restarts), a queue under a global cap on runs at once, at
 * most one run per sync at a time, and the runs themselves (runSync). A failing sync fails its
 * own run only.
 */
export class SyncRuntime {
  readonly items: ItemStore;
  readonly runs: PlatformRunStore;
  private readonly byProvider = new Map<string, PlatformConnector>();
  /** Providers whose runs are made elsewhere (url syncs): the scheduler only starts their interval runs. */
  private readonly elsewhere = new Map<string, (syncId: string) => Promise<unknown>>();
  private readonly active = new Map<string, Active>();
  private readonly queue: string[] = [];
  private running = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopped = true;
  /** The last look at the schedule left a due sync to another process. */
  private leftToOthers = false;
  /** Counts arm() calls: only the latest one sets the timer (each reads the schedule first). */
  private armed = 0;
  private readonly now: () => number;

  constructor(private readonly d: SyncRuntimeDeps) {
    this.items = new ItemStore(d.metadata);
    this.runs = new PlatformRunStore(d.metadata, d.store, d.nodeId);
    this.now = d.now ?? Date.now;
    for (const c of d.connectors) this.register(c);
  }

  /** Adds a connector (tests add fakes); a provider registered twice keeps the last. */
  register(connector: PlatformConnector): void {
    this.byProvider.set(connector.spec.provider, connector);
  }

  /**
   * Lets the scheduler start interval runs of a provider it does not run itself (url syncs): when
   * such a sync is due, `run` is called (it records its own run; one at a time is its concern).
   */
  scheduleElsewhere(provider: string, run: (syncId: string) => Promise<unknown>): void {
    this.elsewhere.set(provider, run);
  }

  connector(provider: string): PlatformConnector | undefined {
    return this.byProvider.get(provider);
  }

  get connectors(): PlatformConnector[] {
    return [...this.byProvider.values()];
  }

  /**
   * Starts scheduling; runs a stopped process left behind are recorded as interrupted (among
   * several workers, only by the first of the box: the others' runs may be going on; in a
   * cluster, only this node's runs).
   */
  async start(): Promise<void> {
    if (this.d.recover !== false) {
      const n = await this.runs.interruptLeftovers('the service stopped during the run');
      if (n > 0) this.d.logger.warn({ runs: n }, 'sync runs interrupted by a restart');
    }
    this.stopped = false;
    this.arm();
  }

  /** Stops scheduling, aborts the runs going on and waits for them to record themselves. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const pending = [...this.active.values()];
    for (const a of pending) a.controller.abort();
    await Promise.all(pending.filter((a) => a.started).map((a) => a.done));
  }

  /**
   * A run of the sync now (`manual` or `webhook`), or the one already queued or running: a sync
   * never runs twice at once.
   */
  async runNow(syncId: string, trigger: string): Promise<RunHandle> {
    const going = this.active.get(syncId);
    if (going) return this.handleOf(going);
    let resolve!: (r: SyncRunRecord) => void;
    const done = new Promise<SyncRunRecord>((r) => (resolve = r));
    // Taken before the first await: a second ask meanwhile joins this run.
    const record = (async () => this.runs.queueRun(await this.d.store.require(syncId), trigger))();
    const a: Active = { record, runId: null, controller: new AbortController(), done, resolve, started: false };
    this.active.set(syncId, a);
    let run: SyncRunRecord;
    try {
      run = await record;
    } catch (err) {
      if (this.active.get(syncId) === a) this.active.delete(syncId);
      throw err;
    }
    a.runId = run.id;
    // Cancelled while its record was made: cancel() records it interrupted.
    if (a.controller.signal.aborted) return { run, done };
    this.queue.push(syncId);
    this.pump();
    return { run, done };
  }

  /** The run of the sync queued or going on, if any. */
  async activeRun(syncId: string): Promise<RunHandle | null> {
    const a = this.active.get(syncId);
    return a ? this.handleOf(a) : null;
  }

  /** A run asked for as it stands now. */
  private async handleOf(a: Active): Promise<RunHandle> {
    const queued = await a.record;
    return { run: (await this.d.store.findRun(queued.id)) ?? queued, done: a.done };
  }

  /** Sets the trigger mode; an interval sync gets its first run time, spread over one interval. */
  async schedule(syncId: string, mode: string, intervalS: number | null, webhookSecret: string | null): Promise<SyncStateRecord> {
    const nextRunAt = mode === 'interval' && intervalS ? firstRunAt(this.now(), intervalS) : null;
    const state = await this.runs.setTrigger(syncId, { mode, intervalS: mode === 'interval' ? intervalS : null, nextRunAt, webhookSecret });
    this.arm();
    return state;
  }

  /** Pauses (a run going on is stopped, recorded as interrupted) or resumes a sync. */
  async setPaused(syncId: string, paused: boolean, reason: string | null = paused ? 'user' : null): Promise<SyncStateRecord> {
    const state = await this.d.store.setStatus(syncId, paused ? 'paused' : 'active', reason);
    if (paused) await this.cancel(syncId);
    else this.arm();
    return state;
  }

  /**
   * Pauses every sync of a project using `provider` (its connection was disconnected or lost its
   * grant). Never rejects (its callers do not wait for it): a store that fails is logged.
   */
  async pauseProvider(projectId: string, provider: string, reason: string): Promise<void> {
    try {
      const syncs = (await this.runs.listByProvider(projectId, provider)).filter((s) => s.status === 'active');
      for (const s of syncs) await this.d.store.setStatus(s.sync_id, 'paused', reason);
      if (syncs.length > 0) this.d.logger.warn({ project_id: projectId, provider, reason, syncs: syncs.length }, 'syncs paused');
      await Promise.all(syncs.map((s) => this.cancel(s.sync_id)));
    } catch (err) {
      this.d.logger.error({ err, project_id: projectId, provider, reason }, 'pausing syncs failed');
    }
  }

  /** Before a sync is deleted: its run is stopped and its item map dropped (the content stays). */
  async forget(syncId: string): Promise<void> {
    await this.cancel(syncId);
    await this.items.forget(syncId);
  }

  private async cancel(syncId: string): Promise<void> {
    const a = this.active.get(syncId);
    if (!a) return;
    a.controller.abort();
    if (!a.started) {
      // Still queued: it never starts.
      const i = this.queue.indexOf(syncId);
      if (i >= 0) this.queue.splice(i, 1);
      this.active.delete(syncId);
      const run = await a.record.catch(() => null);
      if (run) a.resolve(await this.runs.finishPlatformRun(run.id, emptySummary(this.d.changelog.latest(run.project_id), true)));
      return;
    }
    await a.done;
  }

  /** Starts queued runs while slots are free. */
  private pump(): void {
    while (this.running < this.d.settings().sync.maxConcurrentRuns && this.queue.length > 0) {
      const syncId = this.queue.shift()!;
      const a = this.active.get(syncId);
      if (!a) continue;
      a.started = true;
      this.running++;
      void this.execute(syncId, a)
        .catch(async (err: unknown) => {
          // The run could not even be recorded (the metadata store failed): its waiters still hear of it.
          this.d.logger.error({ err, sync_id: syncId, run_id: a.runId }, 'sync run could not be recorded');
          a.resolve({ ...(await a.record), status: 'failed', finished_at: new Date().toISOString(), errors: JSON.stringify([runError(err)]) });
        })
        .finally(() => {
          this.running--;
          this.active.delete(syncId);
          this.pump();
        });
    }
  }

  private async execute(syncId: string, a: Active): Promise<void> {
    let record: SyncRunRecord;
    try {
      const state = await this.d.store.require(syncId);
      const connection = await this.d.connections.find(syncId);
      const connector = this.byProvider.get(state.provider);
      if (!connector) throw new Error(`no ${state.provider} connector runs here`);
      if (!connection) {
        // The sync's key was deleted: the policy says so (UNAUTHORIZED), as it would at a write.
        await requireWrite(this.d.grants, syncId, state.project_id, []);
        throw new Error(`sync ${syncId} has no connection`);
      }
      const s = this.d.settings();
      const summary = await runSync(
        {
          runs: this.runs,
          items: this.items,
          content: this.d.content,
          changelog: this.d.changelog,
          credentials: this.d.credentials,
          grants: this.d.grants,
          apiBase: (p) => s.sync.apiBase[p] ?? '',
          allowPrivate: () => this.d.settings().urlFetchAllowPrivate,
          maxContentBytes: () => this.d.settings().maxContentBytes,
          convert: this.d.convert,
          sleep: this.d.sleep,
        },
        { runId: a.runId!, state, connection, connector, signal: a.controller.signal },
      );
      record = await this.runs.finishPlatformRun(a.runId!, summary);
      // Not awaited: pausing waits for this very run to be done.
      if (summary.needsReauth) void this.pauseProvider(state.project_id, state.provider, 'needs_reauth');
      if (summary.error) this.d.logger.warn({ sync_id: syncId, run_id: a.runId, provider: state.provider, err: summary.error }, 'sync run failed');
    } catch (err) {
      // A bug or a vanished sync: the run is still recorded, and nothing else is held up.
      if (!(err instanceof WriteRefused)) this.d.logger.error({ err, sync_id: syncId, run_id: a.runId }, 'sync run crashed');
      const state = await this.d.store.find(syncId);
      record = await this.runs.finishPlatformRun(a.runId!, { ...emptySummary(state ? this.d.changelog.latest(state.project_id) : 0, false), error: runError(err) });
    }
    a.resolve(record);
  }

  /** Sets the timer for the next due interval sync (the latest call wins; a failed look tries again later). */
  private arm(): void {
    if (this.stopped) return;
    const turn = ++this.armed;
    void this.runs.nextDue().then(
      (next) => {
        // A sync left to its owner stays due here: not a reason to look again at once.
        const soonest = this.leftToOthers ? OTHERS_DUE_MS : 0;
        this.setTimer(turn, next === null ? MAX_TIMER_MS : Math.min(MAX_TIMER_MS, Math.max(soonest, Date.parse(next) - this.now())));
      },
      (err: unknown) => {
        this.d.logger.error({ err }, 'sync scheduler failed');
        this.setTimer(turn, MAX_TIMER_MS);
      },
    );
  }

  private setTimer(turn: number, wait: number): void {
    if (this.stopped || turn !== this.armed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), wait);
    this.timer.unref();
  }

  /**
   * Queues a run of every due interval sync that is not running, and moves its next run time on.
   * Among several workers, only syncs of projects this process runs, each claimed by a
   * compare-and-swap on its next run time: a due run starts in one process only.
   */
  private async tick(): Promise<void> {
    this.timer = null;
    if (this.stopped) return;
    this.leftToOthers = false;
    try {
      const now = this.now();
      for (const state of await this.runs.due(new Date(now).toISOString(), 1000)) {
        if (this.d.adopt && !this.d.adopt(state.project_id)) {
          this.leftToOthers = true;
          continue;
        }
        if (!(await this.runs.claimDue(state.sync_id, state.next_run_at!, nextRunAt(Date.parse(state.next_run_at!), now, state.interval_s ?? 60)))) continue;
        const elsewhere = this.elsewhere.get(state.provider);
        if (elsewhere) {
          // A failed run records itself; anything else thrown is logged, and the schedule goes on.
          void elsewhere(state.sync_id).catch((err: unknown) => this.d.logger.warn({ err, sync_id: state.sync_id }, 'scheduled sync run failed'));
          continue;
        }
        // A run still going on when the next is due: that one is skipped (never two at once).
        if (!this.active.has(state.sync_id)) {
          void this.runNow(state.sync_id, 'interval').catch((err: unknown) => this.d.logger.warn({ err, sync_id: state.sync_id }, 'scheduled sync run failed'));
        }
      }
    } catch (err) {
      this.d.logger.error({ err }, 'sync scheduler failed');
    }
    this.arm();
  }
}

function emptySummary(projectVersion: number, interrupted: boolean) {
  return { created: 0, updated: 0, deleted: 0, pushed: 0, conflicts: [], warnings: [], error: null, interrupted, cursorAfter: null, projectVersion, httpCalls: 0, rateLimitedMs: 0 };
}
