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

/** What a platform run did (src/platform/runtime/). */
export interface PlatformRunSummary {
  created: number;
  updated: number;
  deleted: number;
  pushed: number;
  conflicts: string[];
  /** What the run left out or the source refused, without failing (an item too large, a push refused). */
  warnings: string[];
  /** Why the run failed; null when it did not. */
  error: string | null;
  interrupted?: boolean;
  cursorAfter: string | null;
  /** The project commit number when the run ended. */
  projectVersion: number;
  httpCalls: number;
  rateLimitedMs: number;
}

/** Run records kept per sync: a watching client records a run per cycle, so old ones are dropped. */
const KEEP_RUNS = 500;

/** Sync states and run records (the connection itself lives in the AccessConnectionStore). */
export class SyncStore {
  constructor(private readonly db: Db) {}

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

  private insertRun(sync: SyncStateRecord, r: { trigger: string; status: RunStatus; cursorFrom: number | null; cursorBefore: string | null }): SyncRunRecord {
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

  // ------------------------------------------------------------ platform runs (src/platform/runtime/)

  /** A platform run asked for: `queued` until a slot under the concurrency cap frees. */
  queueRun(sync: SyncStateRecord, trigger: string): SyncRunRecord {
    return this.insertRun(sync, { trigger, status: 'queued', cursorFrom: null, cursorBefore: sync.source_cursor });
  }

  /** The queued run got its slot: `running`, timed from now, from the sync's current cursor. */
  beginRun(runId: string, cursorBefore: string | null, localCursor: number): SyncRunRecord {
    const now = nowIso();
    this.db
      .prepare(`UPDATE sync_runs SET status = 'running', started_at = ?, cursor_before = ?, cursor_from = ? WHERE id = ?`)
      .run(now, cursorBefore, localCursor, runId);
    const run = this.findRun(runId)!;
    this.db.prepare('UPDATE sync_states SET last_run_at = ? WHERE sync_id = ?').run(now, run.sync_id);
    return run;
  }

  /** Records a finished platform run (status from `error`: failed, else succeeded; or `interrupted`). */
  finishPlatformRun(runId: string, r: PlatformRunSummary): SyncRunRecord {
    this.db
      .prepare(
        `UPDATE sync_runs SET status = ?, finished_at = ?, files_up = ?, files_down = ?, conflicts = ?, errors = ?, cursor_to = ?,
           pulled_created = ?, pulled_updated = ?, pulled_deleted = ?, cursor_after = ?, http_calls = ?, rate_limited_ms = ? WHERE id = ?`,
      )
      .run(
        r.interrupted ? 'interrupted' : r.error ? 'failed' : 'succeeded',
        nowIso(),
        r.pushed,
        r.created + r.updated + r.deleted,
        JSON.stringify(r.conflicts),
        JSON.stringify([...(r.error ? [r.error] : []), ...r.warnings]),
        r.projectVersion,
        r.created,
        r.updated,
        r.deleted,
        r.cursorAfter,
        r.httpCalls,
        Math.round(r.rateLimitedMs),
        runId,
      );
    return this.findRun(runId)!;
  }

  /** Runs left queued or running by a process that stopped (a crash, a kill): interrupted. */
  interruptLeftovers(message: string): number {
    return this.db
      .prepare(`UPDATE sync_runs SET status = 'interrupted', finished_at = ?, errors = ? WHERE status IN ('queued', 'running') AND trigger <> 'client'`)
      .run(nowIso(), JSON.stringify([message])).changes;
  }

  /** The newest run of a sync, if any. */
  lastRun(syncId: string): SyncRunRecord | undefined {
    return this.db.prepare('SELECT * FROM sync_runs WHERE sync_id = ? ORDER BY started_at DESC, id DESC LIMIT 1').get(syncId) as SyncRunRecord | undefined;
  }

  // ------------------------------------------------------------ schedule and cursors

  /** Trigger mode with its schedule (interval mode) and webhook secret (webhook mode), as one change. */
  setTrigger(syncId: string, t: { mode: string; intervalS: number | null; nextRunAt: string | null; webhookSecret: string | null }): SyncStateRecord {
    this.db
      .prepare('UPDATE sync_states SET trigger_mode = ?, interval_s = ?, next_run_at = ?, webhook_secret = ?, updated_at = ? WHERE sync_id = ?')
      .run(t.mode, t.intervalS, t.nextRunAt, t.webhookSecret, nowIso(), syncId);
    return this.require(syncId);
  }

  setNextRunAt(syncId: string, at: string | null): void {
    this.db.prepare('UPDATE sync_states SET next_run_at = ? WHERE sync_id = ?').run(at, syncId);
  }

  /** Active interval syncs due at `nowIso`, soonest first. */
  due(nowIso: string, limit: number): SyncStateRecord[] {
    return this.db
      .prepare(`SELECT * FROM sync_states WHERE next_run_at IS NOT NULL AND next_run_at <= ? AND status = 'active' AND trigger_mode = 'interval' ORDER BY next_run_at LIMIT ?`)
      .all(nowIso, limit) as SyncStateRecord[];
  }

  /** When the next active interval sync is due, or null. */
  nextDue(): string | null {
    const row = this.db
      .prepare(`SELECT MIN(next_run_at) AS at FROM sync_states WHERE next_run_at IS NOT NULL AND status = 'active' AND trigger_mode = 'interval'`)
      .get() as { at: string | null };
    return row.at;
  }

  setSourceCursor(syncId: string, cursor: string | null): void {
    this.db.prepare('UPDATE sync_states SET source_cursor = ? WHERE sync_id = ?').run(cursor, syncId);
  }

  setLocalCursor(syncId: string, projectVersion: number): void {
    this.db.prepare('UPDATE sync_states SET local_cursor = ? WHERE sync_id = ?').run(projectVersion, syncId);
  }

  /** Every sync of a provider in a project. */
  listByProvider(projectId: string, provider: string): SyncStateRecord[] {
    return this.db.prepare('SELECT * FROM sync_states WHERE project_id = ? AND provider = ?').all(projectId, provider) as SyncStateRecord[];
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
    return this.findRun(runId)!;
  }

  /** Removes the state, runs and item map; the caller deletes the connection (which revokes the key). */
  delete(syncId: string): void {
    this.db.prepare('DELETE FROM sync_items WHERE sync_id = ?').run(syncId);
    this.db.prepare('DELETE FROM sync_runs WHERE sync_id = ?').run(syncId);
    this.db.prepare('DELETE FROM sync_states WHERE sync_id = ?').run(syncId);
  }
}
