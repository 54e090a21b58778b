import type { ConnectorContext, PullPage, SourceChange } from '../../runtime/connector.ts';
import { listRecords, listTables, type AirtableTable } from './api.ts';
import { airtableConfig, selectTables } from './config.ts';
import { parseCursor, serializeCursor, type AirtableCursor } from './cursor.ts';
import { recordItem, tableFolders, tableIdOf } from './records.ts';

/**
 * Deleted records leave no trace in Airtable's record listings: finding them takes listing every
 * record id of a table (100 ids per call, so 100 calls for 10,000 records), far too many for
 * every incremental run, which should cost a few calls beyond the changed records. So the id
 * sweep runs at most this often, or on every run when the sync's `detect_deletes` is on (for
 * small bases where promptness matters more than calls); between sweeps a deleted record stays
 * here. (Airtable's webhooks payloads would list deletions at once, but need a webhook created,
 * kept alive every 7 days and the `webhook:manage` scope: a later step.) A full listing (first
 * run, renamed table) finds deletions for free.
 */
export const SWEEP_EVERY_MS = 6 * 60 * 60 * 1000;

/**
 * How far before an answer's `Date` the next incremental listing starts: the header has
 * one-second precision, and a little overlap is free (unchanged records are not rewritten).
 */
const OVERLAP_MS = 5_000;

/**
 * The records of the sync's tables: `<table folder>/<record id>.json` = {id, createdTime, fields}.
 * Per table, the cursor keeps when its last complete listing started; an incremental run lists
 * only records modified since (`LAST_MODIFIED_TIME()`), and a table whose folder changed (renamed
 * at the source) is listed whole, so every record moves. The cursor of a table moves only after
 * its listing completed, so a run cut short lists it again.
 */
export async function* pullAirtable(ctx: ConnectorContext, cursor: string | null, now: () => number = Date.now): AsyncGenerator<PullPage> {
  const config = airtableConfig(ctx.config);
  const before = parseCursor(cursor);
  const selected = selectTables(await listTables(ctx, config.baseId), config.tables, before, config.baseId);
  const folders = tableFolders(selected.map((s) => s.table));
  const startedAt = now();
  const sweep = before !== null && (config.detectDeletes || before.swept_at === null || startedAt - Date.parse(before.swept_at) >= SWEEP_EVERY_MS);
  const state: AirtableCursor = { v: 1, tables: {}, swept_at: before?.swept_at ?? null };
  for (const { table } of selected) if (before?.tables[table.id]) state.tables[table.id] = before.tables[table.id];

  // Each page is handed on once the next exists, so the last one can carry the final cursor.
  let pending: PullPage | null = null;
  const pages: PullPage[] = [];
  const hold = (page: PullPage): void => {
    if (pending) pages.push(pending);
    pending = page;
  };

  // Items of tables no longer synced (removed from the config, or deleted at the source) leave.
  const ids = new Set(selected.map((s) => s.table.id));
  const orphans: SourceChange[] = [...ctx.known.all()].filter((k) => !ids.has(tableIdOf(k) ?? '')).map((k) => ({ kind: 'delete', sourceId: k.sourceId }));
  if (orphans.length > 0) hold({ changes: orphans, cursor });

  for (const { table, wanted } of selected) {
    const folder = folders.get(table.id)!;
    const previous = before?.tables[table.id];
    const full = !previous || previous.folder !== folder;
    const seen = new Set<string>();
    let listingStarted: number | null = null;
    for await (const page of listRecords(ctx, config.baseId, table.id, { since: full ? null : previous.since })) {
      listingStarted ??= page.serverTime ?? now();
      const changes: SourceChange[] = page.records.map((r) => {
        seen.add(r.id);
        return { kind: 'upsert', item: recordItem(r, table, folder) };
      });
      if (page.last) {
        if (full) changes.push(...missing(ctx, table, seen));
        state.tables[table.id] = { folder, wanted, since: new Date(listingStarted - OVERLAP_MS).toISOString() };
      }
      hold({ changes, cursor: serializeCursor(state) });
      yield* pages.splice(0);
    }
    if (sweep && !full) {
      const present = new Set<string>();
      for await (const page of listRecords(ctx, config.baseId, table.id, { onlyField: table.primaryFieldId })) for (const r of page.records) present.add(r.id);
      const gone = missing(ctx, table, present);
      if (gone.length > 0) hold({ changes: gone, cursor: serializeCursor(state) });
      yield* pages.splice(0);
    }
  }
  // A first pull lists everything, which is a sweep too.
  if (sweep || before === null) state.swept_at = new Date(startedAt).toISOString();
  yield* pages.splice(0);
  const last = pending as PullPage | null;
  yield { changes: last?.changes ?? [], cursor: serializeCursor(state) };
}

/** Known records of `table` absent from a complete listing of it. */
function missing(ctx: ConnectorContext, table: AirtableTable, present: Set<string>): SourceChange[] {
  const gone: SourceChange[] = [];
  for (const k of ctx.known.all()) if (tableIdOf(k) === table.id && !present.has(k.sourceId)) gone.push({ kind: 'delete', sourceId: k.sourceId });
  return gone;
}
