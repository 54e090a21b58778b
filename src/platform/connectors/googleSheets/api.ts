import type { ConnectorContext } from '../../runtime/connector.ts';
import { ProviderError } from '../../runtime/providerError.ts';

/** The public Sheets API; `CNS_GOOGLE_SHEETS_API_URL` replaces it. */
export const SHEETS_API_BASE = 'https://sheets.googleapis.com';
/** The public Drive API, asked for the spreadsheet's version. */
const DRIVE_API_BASE = 'https://www.googleapis.com';

export interface SheetProperties {
  sheetId: number;
  title: string;
  index: number;
}

/** One range of values as `values.batchGet` answers it. */
export interface ValueRange {
  /** The range actually read, in A1 notation with the sheet (`Tasks!A1:D20`). */
  range: string;
  majorDimension?: 'ROWS' | 'COLUMNS';
  /** Rows; trailing empty cells and rows are left out by the API. */
  values?: unknown[][];
}

const id = (spreadsheetId: string) => encodeURIComponent(spreadsheetId);

/**
 * Where Drive is: the connector's API base is Sheets'. With the public Sheets address, Drive's
 * public one; with another base (a proxy, a test double), the same host serves both APIs, whose
 * paths do not overlap (/drive/v3, /v4).
 */
export function driveBase(apiBase: string): string {
  return apiBase.replace(/\/+$/, '') === SHEETS_API_BASE ? DRIVE_API_BASE : apiBase.replace(/\/+$/, '');
}

/**
 * The spreadsheet's Drive version and modification time (`files.get` with two fields: cheap,
 * and what tells an unchanged spreadsheet without reading it). Null when the grant cannot read
 * Drive metadata (a 403 for a scope the connection lacks): the ranges are then read every run.
 */
export async function fileVersion(ctx: ConnectorContext, spreadsheetId: string): Promise<{ version: string; modifiedTime: string } | null> {
  try {
    const res = await ctx.http.request({
      url: `${driveBase(ctx.apiBase)}/drive/v3/files/${id(spreadsheetId)}`,
      query: { fields: 'version,modifiedTime', supportsAllDrives: true },
    });
    const f = res.json<{ version?: string; modifiedTime?: string }>();
    return { version: String(f.version ?? ''), modifiedTime: String(f.modifiedTime ?? '') };
  } catch (err) {
    // A rate limit the runtime gave up on is not a missing scope.
    if (err instanceof ProviderError && err.status === 403 && !/^rate limited/.test(err.providerMessage)) return null;
    throw err;
  }
}

export async function getSheets(ctx: ConnectorContext, spreadsheetId: string): Promise<SheetProperties[]> {
  const res = await ctx.http.request({ url: `/v4/spreadsheets/${id(spreadsheetId)}`, query: { fields: 'spreadsheetId,sheets.properties(sheetId,title,index)' } });
  const body = res.json<{ sheets?: { properties: SheetProperties }[] }>();
  return (body.sheets ?? []).map((s) => s.properties).sort((a, b) => a.index - b.index);
}

/**
 * The values of `ranges`, typed: numbers and booleans as such (UNFORMATTED_VALUE, not as the
 * sheet displays them: `1200.5`, not `$1,200.50`), dates and times as the sheet formats them
 * (FORMATTED_STRING: `2024-05-01`, rather than a serial day number only a spreadsheet can read),
 * formulas as their results.
 */
export async function batchGet(ctx: ConnectorContext, spreadsheetId: string, ranges: string[]): Promise<ValueRange[]> {
  const url = new URL(`${ctx.apiBase.replace(/\/+$/, '')}/v4/spreadsheets/${id(spreadsheetId)}/values:batchGet`);
  for (const r of ranges) url.searchParams.append('ranges', r);
  const res = await ctx.http.request({
    url: url.toString(),
    query: { valueRenderOption: 'UNFORMATTED_VALUE', dateTimeRenderOption: 'FORMATTED_STRING', majorDimension: 'ROWS' },
  });
  return res.json<{ valueRanges?: ValueRange[] }>().valueRanges ?? [];
}

/** Sheets' refusals of a write (a protected range, a bad range): read, not thrown, to refuse those changes only. */
export const WRITE_REFUSALS = [400, 404];

export interface CellWrite {
  range: string;
  values: unknown[][];
}

/**
 * Writes cells, each range as given, in one request. USER_ENTERED: a value is taken as if a
 * person typed it in the sheet (`2024-05-01` becomes a date, `=SUM(…)` a formula, `12.5` a
 * number), which keeps the sheet's own typing; JSON numbers and booleans stay numbers and booleans.
 */
export function batchUpdate(ctx: ConnectorContext, spreadsheetId: string, data: CellWrite[]) {
  return ctx.http.request({
    method: 'POST',
    url: `/v4/spreadsheets/${id(spreadsheetId)}/values:batchUpdate`,
    json: { valueInputOption: 'USER_ENTERED', data: data.map((d) => ({ range: d.range, majorDimension: 'ROWS', values: d.values })) },
    accept: WRITE_REFUSALS,
  });
}

/** Empties rows' cells (the rows stay, so the rows below keep their numbers). */
export function batchClear(ctx: ConnectorContext, spreadsheetId: string, ranges: string[]) {
  return ctx.http.request({ method: 'POST', url: `/v4/spreadsheets/${id(spreadsheetId)}/values:batchClear`, json: { ranges }, accept: WRITE_REFUSALS });
}

/** Adds rows after the table found in `range`, inserting them (never overwriting what is below). */
export function append(ctx: ConnectorContext, spreadsheetId: string, range: string, rows: unknown[][]) {
  return ctx.http.request({
    method: 'POST',
    url: `/v4/spreadsheets/${id(spreadsheetId)}/values/${encodeURIComponent(range)}:append`,
    query: { valueInputOption: 'USER_ENTERED', insertDataOption: 'INSERT_ROWS', includeValuesInResponse: false },
    json: { range, majorDimension: 'ROWS', values: rows },
    accept: WRITE_REFUSALS,
  });
}
