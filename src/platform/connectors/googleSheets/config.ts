import { invalidField } from '../../../errors/domainError.ts';
import type { SyncConfig } from '../../runtime/connector.ts';

export interface SheetsConfig {
  spreadsheetId: string;
  /** A1 ranges (`Tasks`, `Tasks!A1:F`, `'My sheet'!B2:D`); empty: the first sheet. */
  ranges: string[];
  /** The heading whose values name and identify rows; null: rows are named by their row number. */
  keyColumn: string | null;
  /** A row node deleted here clears the row in the sheet. */
  pushDeletes: boolean;
}

const SPREADSHEET_ID = /^[A-Za-z0-9_-]{20,100}$/;

/** An id as given, or the spreadsheet's address (`https://docs.google.com/spreadsheets/d/<id>/edit#gid=0`). */
export function spreadsheetIdFrom(raw: string): string | null {
  const s = raw.trim();
  if (SPREADSHEET_ID.test(s)) return s;
  const m = /\/spreadsheets\/d\/([A-Za-z0-9_-]+)/.exec(s);
  return m && SPREADSHEET_ID.test(m[1]!) ? m[1]! : null;
}

function list(v: unknown): string[] {
  const raw = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : [];
  return raw.filter((x): x is string => typeof x === 'string').map((x) => x.trim()).filter((x) => x !== '');
}

export function sheetsConfig(config: SyncConfig): SheetsConfig {
  const key = typeof config.key_column === 'string' && config.key_column.trim() !== '' ? config.key_column.trim() : null;
  return {
    spreadsheetId: spreadsheetIdFrom(String(config.spreadsheet_id ?? '')) ?? '',
    ranges: [...new Set(list(config.ranges))],
    keyColumn: key,
    pushDeletes: config.push_deletes === true || config.push_deletes === 'true',
  };
}

export function validateSheetsConfig(config: SyncConfig): void {
  if (typeof config.spreadsheet_id !== 'string' || !spreadsheetIdFrom(config.spreadsheet_id)) {
    throw invalidField('spreadsheet_id', 'spreadsheet_id is the id of a spreadsheet, or its address (https://docs.google.com/spreadsheets/d/<id>/edit)');
  }
  const r = config.ranges;
  if (r !== undefined && r !== null && typeof r !== 'string' && !(Array.isArray(r) && r.every((x) => typeof x === 'string'))) {
    throw invalidField('ranges', 'ranges is a list of A1 ranges or sheet names (Tasks, Tasks!A1:F, \'My sheet\'!B2:D)');
  }
}

/** What the items depend on besides the spreadsheet's content: a change reads it again. */
export function configKey(c: SheetsConfig): string {
  return JSON.stringify([c.ranges, c.keyColumn]);
}
