import { newId, nowIso } from '../util/ids.ts';
import type { Db } from '../db/database.ts';
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

/** Sync states and run records (the connection itself lives in the AccessConnectionStore). */
export class SyncStore {
  private readonly finishedListeners = new Set<(run: SyncRunRecord) => void>();

  constructor(private readonly db: Db) {}

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

  create(input: { syncId: string; projectId: string; provider: string; triggerMode: string }): SyncStateRecord {
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
    };
    this.db
      .prepare(
        `INSERT INTO sync_states (sync_id, project_id, provider, trigger_mode, status, acked_cursor, last_run_at, created_at, updated_at)
         VALUES (@sync_id, @project_id, @provider, @trigger_mode, @status, @acked_cursor, @last_run_at, @created_at, @updated_at)`,
      )
      .run(row);
    return row;
  }

  find(syncId: string): SyncStateRecord | undefined {
    return this.db.prepare('SELECT * FROM sync_states WHERE sync_id = ?').get(syncId) as SyncStateRecord | undefined;
  }

  require(syncId: string): SyncStateRecord {
    const s = this.find(syncId);
    if (!s) throw new DomainError('NOT_FOUND', 'Sync not found.');
    return s;
  }

  listByProject(projectId: string): SyncStateRecord[] {
    return this.db.prepare('SELECT * FROM sync_states WHERE project_id = ? ORDER BY created_at, sync_id').all(projectId) as SyncStateRecord[];
  }

  /** Pausing records why (`user` unless said); resuming clears it. */
  setStatus(syncId: string, status: SyncStatus, reason: string | null = status === 'paused' ? 'user' : null): SyncStateRecord {
    this.db.prepare('UPDATE sync_states SET status = ?, pause_reason = ?, updated_at = ? WHERE sync_id = ?').run(status, reason, nowIso(), syncId);
    return this.require(syncId);
  }

  setTriggerMode(syncId: string, mode: string): SyncStateRecord {
    this.db.prepare('UPDATE sync_states SET trigger_mode = ?, updated_at = ? WHERE sync_id = ?').run(mode, nowIso(), syncId);
    return this.require(syncId);
  }

  /** Only moves forward: a late or repeated ack never rewinds what the client confirmed. */
  ack(syncId: string, cursor: number): SyncStateRecord {
    this.db
      .prepare('UPDATE sync_states SET acked_cursor = MAX(acked_cursor, ?), updated_at = ? WHERE sync_id = ?')
      .run(cursor, nowIso(), syncId);
    return this.require(syncId);
  }

  // ------------------------------------------------------------ runs

  /** Opens a run; a run of the same sync still open is marked interrupted (its client went away). */
  startRun(sync: SyncStateRecord, trigger: string, cursorFrom: number | null): SyncRunRecord {
    const now = nowIso();
    this.db
      .prepare(`UPDATE sync_runs SET status = 'interrupted', finished_at = ? WHERE sync_id = ? AND status = 'running'`)
      .run(now, sync.sync_id);
    return this.insertRun(sync, { trigger, status: 'running', cursorFrom, cursorBefore: null });
  }

  /** A run record of the sync (the newest KEEP_RUNS of a sync are kept); platform runs are queued through it too. */
  insertRun(sync: SyncStateRecord, r: { trigger: string; status: RunStatus; cursorFrom: number | null; cursorBefore: string | null }): SyncRunRecord {
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
    };
    this.db
      .prepare(
        `INSERT INTO sync_runs (id, sync_id, project_id, trigger, status, started_at, finished_at, cursor_from, cursor_to, files_up, files_down, conflicts, errors, cursor_before)
         VALUES (@id, @sync_id, @project_id, @trigger, @status, @started_at, @finished_at, @cursor_from, @cursor_to, @files_up, @files_down, @conflicts, @errors, @cursor_before)`,
      )
      .run(run);
    this.db.prepare('UPDATE sync_states SET last_run_at = ? WHERE sync_id = ?').run(now, sync.sync_id);
    this.db
      .prepare(
        `DELETE FROM sync_runs WHERE sync_id = ? AND id NOT IN (SELECT id FROM sync_runs WHERE sync_id = ? ORDER BY started_at DESC, id DESC LIMIT ?)`,
      )
      .run(sync.sync_id, sync.sync_id, KEEP_RUNS);
    return run;
  }

  /** The newest run of a sync, if any. */
  lastRun(syncId: string): SyncRunRecord | undefined {
    return this.db.prepare('SELECT * FROM sync_runs WHERE sync_id = ? ORDER BY started_at DESC, id DESC LIMIT 1').get(syncId) as SyncRunRecord | undefined;
  }

  findRun(runId: string): SyncRunRecord | undefined {
    return this.db.prepare('SELECT * FROM sync_runs WHERE id = ?').get(runId) as SyncRunRecord | undefined;
  }

  /** The open run `runId` of `syncId`; a finished or foreign run is a conflict, an unknown one not found. */
  openRun(syncId: string, runId: string): SyncRunRecord {
    const run = this.findRun(runId);
    if (!run || run.sync_id !== syncId) throw new DomainError('NOT_FOUND', 'Run not found.');
    if (run.status !== 'running') throw new DomainError('CONFLICT', `Run ${runId} is already ${run.status}; start a new one.`);
    return run;
  }

  listRuns(syncId: string, page: { limit: number; offset: number }): { items: SyncRunRecord[]; total: number } {
    const items = this.db
      .prepare('SELECT * FROM sync_runs WHERE sync_id = ? ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?')
      .all(syncId, page.limit, page.offset) as SyncRunRecord[];
    const { n } = this.db.prepare('SELECT COUNT(*) AS n FROM sync_runs WHERE sync_id = ?').get(syncId) as { n: number };
    return { items, total: n };
  }

  countUp(runId: string, files: number): void {
    this.db.prepare('UPDATE sync_runs SET files_up = files_up + ? WHERE id = ?').run(files, runId);
  }

  finishRun(runId: string, summary: RunSummary): SyncRunRecord {
    const errors = summary.errors ?? [];
    const status: RunStatus = errors.length > 0 ? 'failed' : 'succeeded';
    this.db
      .prepare(
        `UPDATE sync_runs SET status = ?, finished_at = ?, files_down = files_down + ?, conflicts = ?, errors = ?, cursor_to = ? WHERE id = ?`,
      )
      .run(status, nowIso(), summary.filesDown ?? 0, JSON.stringify(summary.conflicts ?? []), JSON.stringify(errors), summary.cursorTo ?? null, runId);
    return this.runFinished(this.findRun(runId)!);
  }

  /** Removes the state, runs and item map; the caller deletes the connection (which revokes the key). */
  delete(syncId: string): void {
    this.db.prepare('DELETE FROM sync_items WHERE sync_id = ?').run(syncId);
    this.db.prepare('DELETE FROM sync_runs WHERE sync_id = ?').run(syncId);
    this.db.prepare('DELETE FROM sync_states WHERE sync_id = ?').run(syncId);
  }
}
