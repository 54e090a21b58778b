import type { Db } from '../../db/database.ts';
import type { SyncRunRecord, SyncStateRecord } from '../../sync/syncRecords.ts';
import type { SyncStore } from '../../sync/syncStore.ts';
import { nowIso } from '../../util/ids.ts';

/** What a platform run did. */
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

/**
 * What the platform runtime keeps beside a sync's state (the rows SyncStore owns): its runs,
 * queued, begun and finished with what they pulled and pushed; the schedule of interval syncs;
 * the source's cursor and the local one.
 */
export class PlatformRunStore {
  constructor(
    private readonly db: Db,
    private readonly syncs: Pick<SyncStore, 'insertRun' | 'findRun' | 'require' | 'runFinished'>,
  ) {}

  /** A platform run asked for: `queued` until a slot under the concurrency cap frees. */
  queueRun(sync: SyncStateRecord, trigger: string): SyncRunRecord {
    return this.syncs.insertRun(sync, { trigger, status: 'queued', cursorFrom: null, cursorBefore: sync.source_cursor });
  }

  /** The queued run got its slot: `running`, timed from now, from the sync's current cursor. */
  beginRun(runId: string, cursorBefore: string | null, localCursor: number): SyncRunRecord {
    const now = nowIso();
    this.db
      .prepare(`UPDATE sync_runs SET status = 'running', started_at = ?, cursor_before = ?, cursor_from = ? WHERE id = ?`)
      .run(now, cursorBefore, localCursor, runId);
    const run = this.syncs.findRun(runId)!;
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
    return this.syncs.runFinished(this.syncs.findRun(runId)!);
  }

  /** Runs left queued or running by a process that stopped (a crash, a kill): interrupted. */
  interruptLeftovers(message: string): number {
    return this.db
      .prepare(`UPDATE sync_runs SET status = 'interrupted', finished_at = ?, errors = ? WHERE status IN ('queued', 'running') AND trigger <> 'client'`)
      .run(nowIso(), JSON.stringify([message])).changes;
  }

  // ------------------------------------------------------------ schedule and cursors

  /** Trigger mode with its schedule (interval mode) and webhook secret (webhook mode), as one change. */
  setTrigger(syncId: string, t: { mode: string; intervalS: number | null; nextRunAt: string | null; webhookSecret: string | null }): SyncStateRecord {
    this.db
      .prepare('UPDATE sync_states SET trigger_mode = ?, interval_s = ?, next_run_at = ?, webhook_secret = ?, updated_at = ? WHERE sync_id = ?')
      .run(t.mode, t.intervalS, t.nextRunAt, t.webhookSecret, nowIso(), syncId);
    return this.syncs.require(syncId);
  }

  /**
   * Claims a due run of an interval sync: moves its next run time from `expected` (as read) to
   * `next`, a compare-and-swap. False when another process claimed it first (or the sync was
   * paused or rescheduled meanwhile): the run is theirs, or no longer due.
   */
  claimDue(syncId: string, expected: string, next: string): boolean {
    return (
      this.db
        .prepare(`UPDATE sync_states SET next_run_at = ? WHERE sync_id = ? AND next_run_at = ? AND status = 'active' AND trigger_mode = 'interval'`)
        .run(next, syncId, expected).changes === 1
    );
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
}
