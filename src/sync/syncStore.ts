import { newId, nowIso } from '../util/ids.ts';
import type { MetadataDb, MetadataStore } from '../db/metadata/metadataStore.ts';
import { DomainError } from '../errors/domainError.ts';
import type { RunStatus, SyncRunRecord, SyncStateRecord, SyncStatus } from './syncRecords.ts';

export interface RunSummary {
  filesDown?: number;
  conflicts?: string[];
  errors?: string[];
  cursorTo?: number;
}

/** Run records kept per sync: a watching client records a run per cycle, so old ones are dropped. */
const KEEP_RUNS = 500;

/** Sync states and run records, on the metadata store (the connection itself lives in the AccessConnectionStore). */
export class SyncStore {
  private readonly finishedListeners = new Set<(run: SyncRunRecord) => void>();

  constructor(private readonly metadata: MetadataStore) {}

  /** Told about every run that finished, of any kind of sync (outgoing webhooks); returns the removal. */
  onRunFinished(fn: (run: SyncRunRecord) => void): () => void {
    this.finishedListeners.add(fn);
    return () => this.finishedListeners.delete(fn);
  }

  /** A run was recorded finished: its listeners hear of it (one that throws does not fail the run). */
  runFinished(run: SyncRunRecord): SyncRunRecord {
    for (const fn of this.finishedListeners) {
      try {
        fn(run);
      } catch {
        // A listener's failure is its own (the webhook queue logs its own errors).
      }
    }
    return run;
  }

  async create(input: { syncId: string; projectId: string; provider: string; triggerMode: string }): Promise<SyncStateRecord> {
    const now = nowIso();
    const row: SyncStateRecord = {
      sync_id: input.syncId,
      project_id: input.projectId,
      provider: input.provider,
      trigger_mode: input.triggerMode,
      status: 'active',
      acked_cursor: 0,
      last_run_at: null,
      created_at: now,
      updated_at: now,
      interval_s: null,
      next_run_at: null,
      source_cursor: null,
      local_cursor: null,
      pause_reason: null,
      webhook_secret: null,
      pending_page: null,
    };
    await this.metadata.db.insertInto('sync_states').values(row).execute();
    return row;
  }

  async find(syncId: string): Promise<SyncStateRecord | undefined> {
    return this.metadata.db.selectFrom('sync_states').selectAll().where('sync_id', '=', syncId).executeTakeFirst();
  }

  async require(syncId: string): Promise<SyncStateRecord> {
    const s = await this.find(syncId);
    if (!s) throw new DomainError('NOT_FOUND', 'Sync not found.');
    return s;
  }

  async listByProject(projectId: string): Promise<SyncStateRecord[]> {
    return this.metadata.db.selectFrom('sync_states').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('sync_id').execute();
  }

  /** Pausing records why (`user` unless said); resuming clears it. */
  async setStatus(syncId: string, status: SyncStatus, reason: string | null = status === 'paused' ? 'user' : null): Promise<SyncStateRecord> {
    await this.metadata.db.updateTable('sync_states').set({ status, pause_reason: reason, updated_at: nowIso() }).where('sync_id', '=', syncId).execute();
    return this.require(syncId);
  }

  async setTriggerMode(syncId: string, mode: string): Promise<SyncStateRecord> {
    await this.metadata.db.updateTable('sync_states').set({ trigger_mode: mode, updated_at: nowIso() }).where('sync_id', '=', syncId).execute();
    return this.require(syncId);
  }

  /** Only moves forward: a late or repeated ack never rewinds what the client confirmed (one statement: no lost update). */
  async ack(syncId: string, cursor: number): Promise<SyncStateRecord> {
    await this.metadata.db
      .updateTable('sync_states')
      .set((eb) => ({
        acked_cursor: eb.case().when('acked_cursor', '<', cursor).then(cursor).else(eb.ref('acked_cursor')).end(),
        updated_at: nowIso(),
      }))
      .where('sync_id', '=', syncId)
      .execute();
    return this.require(syncId);
  }

  // ------------------------------------------------------------ runs

  /**
   * Opens a run; a run of the same sync still open is marked interrupted (its client went away).
   * `nodeId`: the cluster node running it (a url sync's fetch); null for a client's run and on a single box.
   */
  async startRun(sync: SyncStateRecord, trigger: string, cursorFrom: number | null, nodeId: string | null = null): Promise<SyncRunRecord> {
    return this.metadata.transaction(async (trx) => {
      await trx.updateTable('sync_runs').set({ status: 'interrupted', finished_at: nowIso() }).where('sync_id', '=', sync.sync_id).where('status', '=', 'running').execute();
      return insertRunIn(trx, sync, { trigger, status: 'running', cursorFrom, cursorBefore: null, nodeId });
    });
  }

  /** A run record of the sync (the newest KEEP_RUNS of a sync are kept); platform runs are queued through it too. */
  async insertRun(sync: SyncStateRecord, r: NewRun): Promise<SyncRunRecord> {
    return this.metadata.transaction((trx) => insertRunIn(trx, sync, r));
  }

  /** The newest run of a sync, if any. */
  async lastRun(syncId: string): Promise<SyncRunRecord | undefined> {
    return this.metadata.db.selectFrom('sync_runs').selectAll().where('sync_id', '=', syncId).orderBy('started_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
  }

  async findRun(runId: string): Promise<SyncRunRecord | undefined> {
    return this.metadata.db.selectFrom('sync_runs').selectAll().where('id', '=', runId).executeTakeFirst();
  }

  /** The open run `runId` of `syncId`; a finished or foreign run is a conflict, an unknown one not found. */
  async openRun(syncId: string, runId: string): Promise<SyncRunRecord> {
    const run = await this.findRun(runId);
    if (!run || run.sync_id !== syncId) throw new DomainError('NOT_FOUND', 'Run not found.');
    if (run.status !== 'running') throw new DomainError('CONFLICT', `Run ${runId} is already ${run.status}; start a new one.`);
    return run;
  }

  async listRuns(syncId: string, page: { limit: number; offset: number }): Promise<{ items: SyncRunRecord[]; total: number }> {
    const of = () => this.metadata.db.selectFrom('sync_runs').where('sync_id', '=', syncId);
    const items = await of().selectAll().orderBy('started_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
    const { n } = await of()
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return { items, total: Number(n) };
  }

  /** One statement: counts of two pushes at once both land. */
  async countUp(runId: string, files: number): Promise<void> {
    await this.metadata.db
      .updateTable('sync_runs')
      .set((eb) => ({ files_up: eb('files_up', '+', files) }))
      .where('id', '=', runId)
      .execute();
  }

  async finishRun(runId: string, summary: RunSummary): Promise<SyncRunRecord> {
    const errors = summary.errors ?? [];
    const status: RunStatus = errors.length > 0 ? 'failed' : 'succeeded';
    await this.metadata.db
      .updateTable('sync_runs')
      .set((eb) => ({
        status,
        finished_at: nowIso(),
        files_down: eb('files_down', '+', summary.filesDown ?? 0),
        conflicts: JSON.stringify(summary.conflicts ?? []),
        errors: JSON.stringify(errors),
        cursor_to: summary.cursorTo ?? null,
      }))
      .where('id', '=', runId)
      .execute();
    return this.runFinished((await this.findRun(runId))!);
  }

  /** Removes the state, runs, item map and webhook deliveries; the caller deletes the connection (which revokes the key). */
  async delete(syncId: string): Promise<void> {
    await this.metadata.transaction(async (trx) => {
      await trx.deleteFrom('sync_items').where('sync_id', '=', syncId).execute();
      await trx.deleteFrom('sync_webhook_deliveries').where('sync_id', '=', syncId).execute();
      await trx.deleteFrom('sync_runs').where('sync_id', '=', syncId).execute();
      await trx.deleteFrom('sync_states').where('sync_id', '=', syncId).execute();
    });
  }
}

/** A run to record; `nodeId`: the cluster node that runs it (absent: none, as on a single box). */
type NewRun = { trigger: string; status: RunStatus; cursorFrom: number | null; cursorBefore: string | null; nodeId?: string | null };

/** Inserts a run, notes it on the sync and drops the sync's runs beyond the newest KEEP_RUNS. */
async function insertRunIn(trx: MetadataDb, sync: SyncStateRecord, r: NewRun): Promise<SyncRunRecord> {
  const now = nowIso();
  const run: SyncRunRecord = {
    id: newId('run'),
    sync_id: sync.sync_id,
    project_id: sync.project_id,
    trigger: r.trigger,
    status: r.status,
    started_at: now,
    finished_at: null,
    cursor_from: r.cursorFrom,
    cursor_to: null,
    files_up: 0,
    files_down: 0,
    conflicts: '[]',
    errors: '[]',
    pulled_created: 0,
    pulled_updated: 0,
    pulled_deleted: 0,
    cursor_before: r.cursorBefore,
    cursor_after: null,
    http_calls: 0,
    rate_limited_ms: 0,
    cluster_node: r.nodeId ?? null,
  };
  await trx.insertInto('sync_runs').values(run).execute();
  await trx.updateTable('sync_states').set({ last_run_at: now }).where('sync_id', '=', sync.sync_id).execute();
  await trx
    .deleteFrom('sync_runs')
    .where('sync_id', '=', sync.sync_id)
    .where('id', 'not in', trx.selectFrom('sync_runs').select('id').where('sync_id', '=', sync.sync_id).orderBy('started_at', 'desc').orderBy('id', 'desc').limit(KEEP_RUNS))
    .execute();
  return run;
}
