import type { ConnectorContext, PullPage, SourceChange } from '../../runtime/connector.ts';
import { quoteSheet } from './a1.ts';
import { batchGet, fileVersion, getSheets } from './api.ts';
import { configKey, sheetsConfig, type SheetsConfig } from './config.ts';
import { parseCursor, serializeCursor, type SheetsCursor } from './cursor.ts';
import { readRange, type ReadRange } from './rows.ts';

/** Changes per page (one commit each). */
const PAGE_CHANGES = 500;

/**
 * The rows of the configured ranges. Sheets has no change feed, so a run first asks Drive for
 * the spreadsheet's version (one small call): unchanged since the last read (and the same
 * settings), nothing else is asked. Otherwise the ranges are read (two calls: the sheets, the
 * values of every range at once) and only the rows that differ from what the sync holds are
 * handed on, with the rows gone from the ranges as deletions.
 */
export async function* pullSheets(ctx: ConnectorContext, cursor: string | null): AsyncGenerator<PullPage> {
  const config = sheetsConfig(ctx.config);
  const before = parseCursor(cursor);
  const key = configKey(config);
  const file = await fileVersion(ctx, config.spreadsheetId);
  const next: SheetsCursor = { v: 1, spreadsheetId: config.spreadsheetId, version: file?.version ?? null, modifiedTime: file?.modifiedTime ?? null, config: key };
  if (before && file && before.spreadsheetId === config.spreadsheetId && before.config === key && before.version === file.version) {
    yield { changes: [], cursor };
    return;
  }

  const ranges = await readRanges(ctx, config);
  const changes: SourceChange[] = [];
  const present = new Set<string>();
  for (const r of ranges) {
    for (const { item } of r.rows) {
      // A later range naming the same row (overlapping ranges) does not hand it on twice.
      if (present.has(item.sourceId)) continue;
      present.add(item.sourceId);
      const known = ctx.known.get(item.sourceId);
      if (!known || known.sourceVersion !== item.sourceVersion || known.path !== item.path) changes.push({ kind: 'upsert', item });
    }
  }
  for (const k of ctx.known.all()) if (!present.has(k.sourceId)) changes.push({ kind: 'delete', sourceId: k.sourceId });

  // Until every change is committed, a run cut short reads the ranges again (the old cursor).
  let start = 0;
  for (; changes.length - start > PAGE_CHANGES; start += PAGE_CHANGES) yield { changes: changes.slice(start, start + PAGE_CHANGES), cursor };
  yield { changes: changes.slice(start), cursor: serializeCursor(next) };
}

/** The configured ranges (the first sheet when none), read and made rows. */
export async function readRanges(ctx: ConnectorContext, config: SheetsConfig): Promise<ReadRange[]> {
  const sheets = await getSheets(ctx, config.spreadsheetId);
  if (sheets.length === 0) return [];
  const ranges = config.ranges.length > 0 ? config.ranges : [quoteSheet(sheets[0]!.title)];
  const values = await batchGet(ctx, config.spreadsheetId, ranges);
  return values.map((v, i) => readRange(v, ranges[i]!, sheets, config.keyColumn));
}
