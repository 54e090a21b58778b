import type { ExpressionBuilder } from 'kysely';
import type { MetadataStore } from '../../db/metadata/metadataStore.ts';
import type { MetadataSchema } from '../../db/metadata/schema.ts';
import type { SyncRunRecord, SyncStateRecord } from '../../sync/syncRecords.ts';
import type { SyncStore } from '../../sync/syncStore.ts';
import { nowIso } from '../../util/ids.ts';
import { putItems, removeItems, type ItemRow } from './itemStore.ts';

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
 * A pulled page's metadata step: the item rows to write and remove, and the source cursor moved
 * from `from` to `cursor`. Journaled (`pending_page`) before its content commit, so that a run
 * resuming after a crash between the commit and this step can replay it (runSync.ts).
 */
export interface PageRecord {
  from: string | null;
  cursor: string | null;
  rows: ItemRow[];
  removed: string[];
  /** The project commit number before the page's commit: its commit is looked for after it. */
  after: number;
}

/** The cursor moved under a run (another run of the sync, elsewhere): the page is not stored. */
export class CursorMoved extends Error {
  constructor(syncId: string) {
    super(`the source cursor of sync ${syncId} moved during the run`);
    this.name = 'CursorMoved';
  }
}

/**
 * What the platform runtime keeps beside a sync's state (the rows SyncStore owns): its runs,
 * queued, begun and finished with what they pulled and pushed; the schedule of interval syncs;
 * the source's cursor and the local one.
 */
export class PlatformRunStore {
  /** `nodeId`: the cluster node this process is, recorded on the runs it queues; null on a single box. */
  constructor(
    private readonly metadata: MetadataStore,
    private readonly syncs: Pick<SyncStore, 'insertRun' | 'findRun' | 'require' | 'runFinished'>,
    private readonly nodeId: string | null = null,
  ) {}

  /**
   * A platform run asked for: `queued` until a slot under the concurrency cap frees. Its queue is
   * in this process's memory, so the run is this node's from here on.
   */
  async queueRun(sync: SyncStateRecord, trigger: string): Promise<SyncRunRecord> {
    return this.syncs.insertRun(sync, { trigger, status: 'queued', cursorFrom: null, cursorBefore: sync.source_cursor, nodeId: this.nodeId });
  }

  /** The queued run got its slot: `running`, timed from now, from the sync's current cursor. */
  async beginRun(runId: string, cursorBefore: string | null, localCursor: number): Promise<SyncRunRecord> {
    const now = nowIso();
    const run = await this.metadata.transaction(async (trx) => {
      await trx.updateTable('sync_runs').set({ status: 'running', started_at: now, cursor_before: cursorBefore, cursor_from: localCursor }).where('id', '=', runId).execute();
      const r = await trx.selectFrom('sync_runs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow();
      await trx.updateTable('sync_states').set({ last_run_at: now }).where('sync_id', '=', r.sync_id).execute();
      return r;
    });
    return run;
  }

  /** Records a finished platform run (status from `error`: failed, else succeeded; or `interrupted`). */
  async finishPlatformRun(runId: string, r: PlatformRunSummary): Promise<SyncRunRecord> {
    await this.metadata.db
      .updateTable('sync_runs')
      .set({
        status: r.interrupted ? 'interrupted' : r.error ? 'failed' : 'succeeded',
        finished_at: nowIso(),
        files_up: r.pushed,
        files_down: r.created + r.updated + r.deleted,
        conflicts: JSON.stringify(r.conflicts),
        errors: JSON.stringify([...(r.error ? [r.error] : []), ...r.warnings]),
        cursor_to: r.projectVersion,
        pulled_created: r.created,
        pulled_updated: r.updated,
        pulled_deleted: r.deleted,
        cursor_after: r.cursorAfter,
        http_calls: r.httpCalls,
        rate_limited_ms: Math.round(r.rateLimitedMs),
      })
      .where('id', '=', runId)
      .execute();
    return this.syncs.runFinished((await this.syncs.findRun(runId))!);
  }

  /**
   * Runs left queued or running by a process that stopped (a crash, a kill): interrupted. On a
   * single box (no node id) every such run, whichever cluster_node it has: the box owns them all. A
   * cluster node only its own and those with no node, left from before the cluster (the first
   * node to start takes them, which is fine: nothing runs them any more); other nodes' runs may be
   * going on. A dead node's runs stay until its projects' new owner recovers them (a later step).
   */
  async interruptLeftovers(message: string): Promise<number> {
    const nodeId = this.nodeId;
    let q = this.metadata.db
      .updateTable('sync_runs')
      .set({ status: 'interrupted', finished_at: nowIso(), errors: JSON.stringify([message]) })
      .where('status', 'in', ['queued', 'running'])
      .where('trigger', '<>', 'client');
    if (nodeId !== null) q = q.where((eb) => eb.or([eb('cluster_node', '=', nodeId), eb('cluster_node', 'is', null)]));
    const r = await q.executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  // ------------------------------------------------------------ schedule and cursors

  /** Trigger mode with its schedule (interval mode) and webhook secret (webhook mode), as one change. */
  async setTrigger(syncId: string, t: { mode: string; intervalS: number | null; nextRunAt: string | null; webhookSecret: string | null }): Promise<SyncStateRecord> {
    await this.metadata.db
      .updateTable('sync_states')
      .set({ trigger_mode: t.mode, interval_s: t.intervalS, next_run_at: t.nextRunAt, webhook_secret: t.webhookSecret, updated_at: nowIso() })
      .where('sync_id', '=', syncId)
      .execute();
    return this.syncs.require(syncId);
  }

  /**
   * Claims a due run of an interval sync: moves its next run time from `expected` (as read) to
   * `next`, a compare-and-swap. False when another process claimed it first (or the sync was
   * paused or rescheduled meanwhile): the run is theirs, or no longer due.
   */
  async claimDue(syncId: string, expected: string, next: string): Promise<boolean> {
    const r = await this.metadata.db
      .updateTable('sync_states')
      .set({ next_run_at: next })
      .where('sync_id', '=', syncId)
      .where('next_run_at', '=', expected)
      .where('status', '=', 'active')
      .where('trigger_mode', '=', 'interval')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async setNextRunAt(syncId: string, at: string | null): Promise<void> {
    await this.metadata.db.updateTable('sync_states').set({ next_run_at: at }).where('sync_id', '=', syncId).execute();
  }

  /** Active interval syncs due at `nowIso`, soonest first. */
  async due(nowIso: string, limit: number): Promise<SyncStateRecord[]> {
    return this.metadata.db
      .selectFrom('sync_states')
      .selectAll()
      .where('next_run_at', 'is not', null)
      .where('next_run_at', '<=', nowIso)
      .where('status', '=', 'active')
      .where('trigger_mode', '=', 'interval')
      .orderBy('next_run_at')
      .orderBy('sync_id')
      .limit(limit)
      .execute();
  }

  /** When the next active interval sync is due, or null. */
  async nextDue(): Promise<string | null> {
    const row = await this.metadata.db
      .selectFrom('sync_states')
      .select((eb) => eb.fn.min('next_run_at').as('at'))
      .where('next_run_at', 'is not', null)
      .where('status', '=', 'active')
      .where('trigger_mode', '=', 'interval')
      .executeTakeFirst();
    return (row?.at as string | null | undefined) ?? null;
  }

  /**
   * Journals a page before its content commit: false when the sync's cursor is no longer `from`
   * (the page is then not committed).
   */
  async journalPage(syncId: string, page: PageRecord): Promise<boolean> {
    const r = await this.metadata.db
      .updateTable('sync_states')
      .set({ pending_page: JSON.stringify(page) })
      .where('sync_id', '=', syncId)
      .where((eb) => cursorIs(eb, page.from))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /**
   * A page's metadata step, in one transaction: its item rows written and removed, the source
   * cursor moved from `from` to `cursor` (compare-and-set) and the journal cleared. Throws
   * CursorMoved, storing nothing, when the cursor is no longer `from`.
   */
  async recordPage(syncId: string, page: Pick<PageRecord, 'from' | 'cursor' | 'rows' | 'removed'>): Promise<void> {
    await this.metadata.transaction(async (trx) => {
      const moved = await trx
        .updateTable('sync_states')
        .set({ source_cursor: page.cursor, pending_page: null })
        .where('sync_id', '=', syncId)
        .where((eb) => cursorIs(eb, page.from))
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) !== 1) throw new CursorMoved(syncId);
      await putItems(trx, syncId, page.rows);
      await removeItems(this.metadata.engine, trx, syncId, page.removed);
    });
  }

  /** The journaled page was never committed (a crash before its commit): forgotten, so it is pulled again. */
  async dropPendingPage(syncId: string, pending: string): Promise<void> {
    await this.metadata.db.updateTable('sync_states').set({ pending_page: null }).where('sync_id', '=', syncId).where('pending_page', '=', pending).execute();
  }

  /** After the push stage: the rows it changed and the project commit up to which local changes were considered, together. */
  async recordPush(syncId: string, p: { rows: ItemRow[]; removed: string[]; localCursor: number }): Promise<void> {
    await this.metadata.transaction(async (trx) => {
      await putItems(trx, syncId, p.rows);
      await removeItems(this.metadata.engine, trx, syncId, p.removed);
      await trx.updateTable('sync_states').set({ local_cursor: p.localCursor }).where('sync_id', '=', syncId).execute();
    });
  }

  /** Every sync of a provider in a project. */
  async listByProvider(projectId: string, provider: string): Promise<SyncStateRecord[]> {
    return this.metadata.db.selectFrom('sync_states').selectAll().where('project_id', '=', projectId).where('provider', '=', provider).execute();
  }
}

/** `source_cursor = from`; a null cursor (a sync that never stored a page) is matched by IS NULL. */
function cursorIs(eb: ExpressionBuilder<MetadataSchema, 'sync_states'>, from: string | null) {
  return from === null ? eb('source_cursor', 'is', null) : eb('source_cursor', '=', from);
}
