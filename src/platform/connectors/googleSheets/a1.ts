/**
 * A1 notation as the Sheets API writes and reads it: `Sheet1!A1:D10`, `'My sheet'!B2:C`
 * (a title with spaces or punctuation is quoted, a quote inside doubled).
 */
export interface A1Range {
  sheet: string;
  /** 0-based column index of the first column. */
  startCol: number;
  /** 1-based row number of the first row. */
  startRow: number;
}

const RANGE = /^(?:'((?:[^']|'')+)'|([^!]+))!\$?([A-Z]+)\$?(\d+)?(?::\$?([A-Z]+)?\$?(\d+)?)?$/i;

/** The sheet and top-left cell of a range the API answered with; null for anything else. */
export function parseRange(range: string): A1Range | null {
  const m = RANGE.exec(range.trim());
  if (!m) return null;
  const sheet = m[1] !== undefined ? m[1].replace(/''/g, "'") : m[2]!;
  return { sheet, startCol: columnIndex(m[3]!), startRow: m[4] ? Number(m[4]) : 1 };
}

/** The sheet a configured range names (`Tasks!A1:C`, `'My sheet'`, or a bare sheet title). */
export function sheetOfRange(range: string): string {
  const bang = range.lastIndexOf('!');
  const sheet = bang >= 0 ? range.slice(0, bang) : range;
  return /^'.*'$/.test(sheet) ? sheet.slice(1, -1).replace(/''/g, "'") : sheet;
}

export function quoteSheet(title: string): string {
  return `'${title.replace(/'/g, "''")}'`;
}

/** `A` for 0, `Z` for 25, `AA` for 26… */
export function columnLetter(index: number): string {
  let s = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

export function columnIndex(letters: string): number {
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n - 1;
}

/** `'Sheet'!C5`, or `'Sheet'!A5:D5` with `toCol`. */
export function cellRef(sheet: string, col: number, row: number, toCol?: number): string {
  const first = `${columnLetter(col)}${row}`;
  return `${quoteSheet(sheet)}!${toCol === undefined ? first : `${first}:${columnLetter(toCol)}${row}`}`;
}
