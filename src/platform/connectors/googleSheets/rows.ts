import { createHash } from 'node:crypto';
import { headerNames } from '../../../ingest/converters/headers.ts';
import { safeName } from '../../../ingest/converters/names.ts';
import type { SourceItem } from '../../runtime/connector.ts';
import { parseRange } from './a1.ts';
import type { SheetProperties, ValueRange } from './api.ts';

/** A row of a read range, with where it is, for the pull (its item) and the push (its cells). */
export interface SheetRow {
  item: SourceItem;
  sheet: SheetProperties;
  /** The row's number in the sheet (1-based). */
  row: number;
}

/** A read range: its sheet, where its columns start, its headings, and its rows. */
export interface ReadRange {
  /** The range as configured (appends go there). */
  configured: string;
  sheet: SheetProperties;
  startCol: number;
  headerRow: number;
  headers: string[];
  rows: SheetRow[];
}

/**
 * A range's rows as JSON objects keyed by its first row with a value (the headings; blank or repeated ones
 * become `column_<n>` / `<name>_2`, as the ingestion names them), empty cells as null, fully
 * empty rows left out. A row is identified by its `key_column` value (stable when rows are
 * sorted or inserted), else by its row number; a key repeated or empty falls back to the row
 * number. Path: `<sheet>/<key or row number>.json`.
 */
export function readRange(v: ValueRange, configured: string, sheets: SheetProperties[], keyColumn: string | null): ReadRange {
  const at = parseRange(v.range);
  const sheet = at && sheets.find((s) => s.title === at.sheet);
  if (!at || !sheet) throw new Error(`Sheets answered the range "${configured}" as "${v.range}", which names no sheet of the spreadsheet`);
  const all = v.values ?? [];
  // The headings are the first row with a value (a range may start above its table).
  const skip = Math.max(0, all.findIndex((r) => r.some((x) => cellValue(x) !== null)));
  const [head = [], ...body] = all.slice(skip);
  const headerRow = at.startRow + skip;
  const headers = headerNames(head);
  const keyIndex = keyColumn === null ? -1 : headers.indexOf(keyColumn);
  if (keyColumn !== null && keyIndex < 0 && body.length > 0) {
    throw new Error(`key_column "${keyColumn}" is not a heading of "${configured}" (its headings: ${headers.join(', ') || 'none'})`);
  }
  const folder = safeName(sheet.title);
  const usedKeys = new Set<string>();
  const rows: SheetRow[] = [];
  body.forEach((cells, i) => {
    const values = headers.map((_, c) => cellValue(cells[c]));
    if (values.every((x) => x === null)) return;
    const row = headerRow + 1 + i;
    const content = Object.fromEntries(headers.map((h, c) => [h, values[c]]));
    const key = keyIndex >= 0 && values[keyIndex] !== null ? String(values[keyIndex]) : null;
    const byKey = key !== null && !usedKeys.has(key);
    if (byKey) usedKeys.add(key);
    rows.push({
      sheet,
      row,
      item: {
        sourceId: byKey ? `${sheet.sheetId}:key:${key}` : `${sheet.sheetId}:row:${row}`,
        path: `${folder}/${safeName(byKey ? key : String(row))}.json`,
        type: 'json',
        content,
        sourceVersion: rowVersion(content),
        meta: { sheetId: sheet.sheetId },
      },
    });
  });
  return { configured, sheet, startCol: at.startCol, headerRow, headers, rows };
}

/** A cell as JSON: the empty string (an empty cell inside a row) and missing trailing cells are null. */
function cellValue(v: unknown): unknown {
  return v === undefined || v === '' ? null : v;
}

/** A row's version: the hash of its content (the API has no per-row version). */
export function rowVersion(content: Record<string, unknown>): string {
  const keys = Object.keys(content).sort();
  return 'sha256:' + createHash('sha256').update(JSON.stringify(keys.map((k) => [k, content[k]]))).digest('hex').slice(0, 32);
}
