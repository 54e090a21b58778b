/**
 * The cursor of a Sheets sync: the spreadsheet's Drive version when it was last read, and the
 * settings the items were made with. Sheets has no change feed: an unchanged version (one cheap
 * Drive call) means nothing to read.
 */
export interface SheetsCursor {
  v: 1;
  spreadsheetId: string;
  /** Drive's `version` of the file (null when Drive could not be asked). */
  version: string | null;
  modifiedTime: string | null;
  /** configKey() of the settings the items were read with. */
  config: string;
}

export function parseCursor(cursor: string | null): SheetsCursor | null {
  if (!cursor) return null;
  try {
    const c = JSON.parse(cursor) as Partial<SheetsCursor>;
    if (c.v !== 1 || typeof c.spreadsheetId !== 'string' || typeof c.config !== 'string') return null;
    return {
      v: 1,
      spreadsheetId: c.spreadsheetId,
      version: typeof c.version === 'string' ? c.version : null,
      modifiedTime: typeof c.modifiedTime === 'string' ? c.modifiedTime : null,
      config: c.config,
    };
  } catch {
    // An unreadable cursor only means reading the ranges again.
    return null;
  }
}

export function serializeCursor(c: SheetsCursor): string {
  return JSON.stringify(c);
}
