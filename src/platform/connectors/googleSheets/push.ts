import { isDeepStrictEqual } from 'node:util';
import { safeName } from '../../../ingest/converters/names.ts';
import type { ConnectorContext, LocalChange, PushOutcome, SourceResponse } from '../../runtime/connector.ts';
import { ProviderError, providerMessage } from '../../runtime/providerError.ts';
import { cellRef, parseRange } from './a1.ts';
import { append, batchClear, batchUpdate, WRITE_REFUSALS, type CellWrite } from './api.ts';
import { sheetsConfig, type SheetsConfig } from './config.ts';
import { readRanges } from './pull.ts';
import { rowVersion, type ReadRange, type SheetRow } from './rows.ts';

interface Located {
  range: ReadRange;
  row: SheetRow;
}

interface Edit {
  index: number;
  sourceId: string;
  cells: CellWrite[];
  version: string;
}

interface NewRow {
  index: number;
  values: unknown[];
  key: string | null;
  version: string;
}

/**
 * Sends row edits back. The ranges are read first (one call for the sheets, one for the values),
 * so each row is found where it is now (by its key, or its number). An edited row writes only the
 * cells that changed (a formula in another cell of the row stays a formula), all edits in one
 * `values.batchUpdate` (USER_ENTERED: see api.ts); a new row node in a sheet's folder is appended
 * to its range (`values.append`); a row node deleted here clears the row's cells when
 * `push_deletes` is on, and is refused otherwise. When Sheets refuses a batch, its edits are sent
 * one by one, so only the bad ones fail, with Sheets' words.
 */
export async function pushSheets(ctx: ConnectorContext, changes: LocalChange[]): Promise<PushOutcome[]> {
  const config = sheetsConfig(ctx.config);
  const outcomes: PushOutcome[] = new Array(changes.length);
  const ranges = await readRanges(ctx, config);
  const where = new Map<string, Located>();
  for (const range of ranges) for (const row of range.rows) if (!where.has(row.item.sourceId)) where.set(row.item.sourceId, { range, row });

  const edits: Edit[] = [];
  const clears: { index: number; sourceId: string; range: string }[] = [];
  const appends = new Map<ReadRange, NewRow[]>();

  for (const [index, change] of changes.entries()) {
    if (change.kind === 'delete') {
      const at = where.get(change.sourceId);
      if (!config.pushDeletes) outcomes[index] = refuse('rows are cleared in the sheet only when the sync\'s push_deletes is on; clear the row in Google Sheets, or turn push_deletes on');
      else if (!at) outcomes[index] = { ok: true, sourceId: change.sourceId, sourceVersion: change.known.sourceVersion };
      else clears.push({ index, sourceId: change.sourceId, range: cellRef(at.range.sheet.title, at.range.startCol, at.row.row, at.range.startCol + at.range.headers.length - 1) });
      continue;
    }
    const content = asObject(change.content);
    if (!content) {
      outcomes[index] = refuse('a row node holds one JSON object keyed by the sheet\'s headings');
      continue;
    }
    if (change.kind === 'create') {
      const range = ranges.find((r) => change.path.includes('/') && safeName(r.sheet.title) === change.path.split('/')[0]);
      if (!range) {
        outcomes[index] = refuse(`${change.path} is not in a synced sheet's folder (${ranges.map((r) => safeName(r.sheet.title)).join(', ')})`);
        continue;
      }
      const problem = cellProblem(range, content) ?? newKeyProblem(range, content, config);
      if (problem) outcomes[index] = refuse(problem);
      else {
        const key = config.keyColumn === null ? null : String(content[config.keyColumn]);
        const list = appends.get(range) ?? appends.set(range, []).get(range)!;
        list.push({ index, values: range.headers.map((h) => toCell(content[h])), key, version: rowVersion(normalized(range, content)) });
      }
      continue;
    }
    const at = where.get(change.sourceId);
    if (!at) {
      outcomes[index] = refuse('the row is no longer in the synced ranges of the sheet (moved, deleted or its key changed there)');
      continue;
    }
    const previous = asObject(change.previous) ?? {};
    const changed = at.range.headers.filter((h) => !isDeepStrictEqual(content[h] ?? null, previous[h] ?? null));
    const problem = cellProblem(at.range, content) ?? (config.keyColumn !== null && changed.includes(config.keyColumn) ? `the key column "${config.keyColumn}" names the row: change it in Google Sheets` : null);
    if (problem) outcomes[index] = refuse(problem);
    else if (changed.length === 0) outcomes[index] = { ok: true, sourceId: change.sourceId, sourceVersion: change.known.sourceVersion };
    else {
      const cells = changed.map((h) => ({ range: cellRef(at.range.sheet.title, at.range.startCol + at.range.headers.indexOf(h), at.row.row), values: [[toCell(content[h])]] }));
      edits.push({ index, sourceId: change.sourceId, cells, version: rowVersion(normalized(at.range, content)) });
    }
  }

  await sendEdits(ctx, config, edits, outcomes);
  if (clears.length > 0) {
    const refused = await attempt(() => batchClear(ctx, config.spreadsheetId, clears.map((c) => c.range)));
    for (const c of clears) outcomes[c.index] = refused ? refuse(`Google Sheets refused to clear the row: ${refused}`) : { ok: true, sourceId: c.sourceId, sourceVersion: 'cleared' };
  }
  for (const [range, rows] of appends) await sendAppend(ctx, config, range, rows, outcomes);
  return outcomes;
}

async function sendEdits(ctx: ConnectorContext, config: SheetsConfig, edits: Edit[], outcomes: PushOutcome[]): Promise<void> {
  if (edits.length === 0) return;
  const refused = await attempt(() => batchUpdate(ctx, config.spreadsheetId, edits.flatMap((e) => e.cells)));
  if (refused && edits.length > 1) {
    for (const e of edits) await sendEdits(ctx, config, [e], outcomes);
    return;
  }
  for (const e of edits) outcomes[e.index] = refused ? refuse(`Google Sheets refused the change: ${refused}`) : { ok: true, sourceId: e.sourceId, sourceVersion: e.version };
}

/** New rows of one range, appended together: Sheets answers where it put them, in order. */
async function sendAppend(ctx: ConnectorContext, config: SheetsConfig, range: ReadRange, rows: NewRow[], outcomes: PushOutcome[]): Promise<void> {
  let res: SourceResponse | null = null;
  const refused = await attempt(async () => (res = await append(ctx, config.spreadsheetId, range.configured, rows.map((r) => r.values))));
  const updated = refused ? null : parseRange((res as SourceResponse | null)?.json<{ updates?: { updatedRange?: string } }>().updates?.updatedRange ?? '');
  const folder = safeName(range.sheet.title);
  rows.forEach((r, i) => {
    if (!updated) {
      outcomes[r.index] = refuse(refused ? `Google Sheets refused the new row: ${refused}` : 'Google Sheets did not say where it added the row');
      return;
    }
    const row = updated.startRow + i;
    const sourceId = r.key !== null ? `${range.sheet.sheetId}:key:${r.key}` : `${range.sheet.sheetId}:row:${row}`;
    outcomes[r.index] = { ok: true, sourceId, sourceVersion: r.version, path: `${folder}/${safeName(r.key ?? String(row))}.json`, meta: { sheetId: range.sheet.sheetId } };
  });
}

/**
 * Runs a write; null when it went through, else Sheets' refusal in its words. A 403 is not an
 * accepted status (the runtime must still see a 403 rate limit): a refusal 403 (a protected
 * range, a read-only share) comes back as the ProviderError the runtime throws.
 */
async function attempt(write: () => Promise<SourceResponse>): Promise<string | null> {
  try {
    const res = await write();
    return WRITE_REFUSALS.includes(res.status) ? providerMessage(res.body, res.status) : null;
  } catch (err) {
    if (err instanceof ProviderError && err.status === 403 && !/^rate limited/.test(err.providerMessage)) return err.providerMessage;
    throw err;
  }
}

/** Why a row's values cannot be written: a key that is no heading, or a value that is no cell value. */
function cellProblem(range: ReadRange, content: Record<string, unknown>): string | null {
  const unknown = Object.keys(content).filter((k) => !range.headers.includes(k));
  if (unknown.length > 0) return `${unknown.map((k) => `"${k}"`).join(', ')} ${unknown.length > 1 ? 'are not headings' : 'is not a heading'} of the sheet "${range.sheet.title}" (its headings: ${range.headers.join(', ')})`;
  const bad = range.headers.find((h) => content[h] !== undefined && content[h] !== null && !['string', 'number', 'boolean'].includes(typeof content[h]));
  if (bad !== undefined) return `"${bad}" holds ${Array.isArray(content[bad]) ? 'a list' : 'an object'}: a cell takes text, a number, true/false or null`;
  return null;
}

function newKeyProblem(range: ReadRange, content: Record<string, unknown>, config: SheetsConfig): string | null {
  if (config.keyColumn === null) return null;
  const key = content[config.keyColumn];
  if (key === undefined || key === null || key === '') return `a new row needs a value in the key column "${config.keyColumn}"`;
  if (range.rows.some((r) => r.item.sourceId === `${range.sheet.sheetId}:key:${String(key)}`)) return `the sheet "${range.sheet.title}" already has a row whose "${config.keyColumn}" is ${JSON.stringify(key)}`;
  return null;
}

/** The row as the pull would read it back if the sheet keeps the values as sent (the version to record). */
function normalized(range: ReadRange, content: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(range.headers.map((h) => [h, content[h] === undefined || content[h] === '' ? null : content[h]]));
}

/** A JSON value as a cell value: null empties the cell. */
function toCell(v: unknown): unknown {
  return v === null || v === undefined ? '' : v;
}

function refuse(message: string): PushOutcome {
  return { ok: false, message };
}

function asObject(v: unknown): Record<string, unknown> | null {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}
