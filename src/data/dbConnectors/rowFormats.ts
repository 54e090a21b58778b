import { createRequire } from 'node:module';
import type Papa from 'papaparse';
import { jsonValue, rowObject } from './values.ts';

export const SAVE_FORMATS = ['json', 'csv', 'markdown'] as const;
export type SaveFormat = (typeof SAVE_FORMATS)[number];

/** A text format built row by row: the head once the columns are known, each row, the tail. */
export interface RowFormat {
  head(names: readonly string[]): string;
  row(names: readonly string[], values: readonly unknown[], index: number): string;
  tail(rows: number): string;
}

/** A value as one text cell: null empty, JSON documents and arrays as JSON, binary as base64. */
function cellText(v: unknown): string {
  const j = jsonValue(v);
  if (j === null) return '';
  return typeof j === 'object' ? JSON.stringify(j) : String(j);
}

/**
 * An array of row objects, byte for byte as the content store encodes a json node
 * (JSON.stringify(rows, null, 2) and a newline), so the size counted while streaming is the
 * size the node will have.
 */
const json: RowFormat = {
  head: () => '[',
  row: (names, values, index) => (index === 0 ? '\n  ' : ',\n  ') + JSON.stringify(rowObject(names, values), null, 2).replaceAll('\n', '\n  '),
  tail: (rows) => (rows ? '\n]\n' : ']\n'),
};

/** papaparse, required by the first CSV line written: the route schemas import this module for its format names alone. */
let papa: typeof Papa | undefined;

/** RFC 4180 through papaparse: a header line, CRLF line ends, fields quoted when they need it. */
const csvLine = (cells: string[]) =>
  (cells.length === 1 && cells[0] === '' ? '""' : (papa ??= createRequire(import.meta.url)('papaparse') as typeof Papa).unparse([cells], { newline: '\r\n' })) + '\r\n';
const csv: RowFormat = {
  head: (names) => (names.length ? csvLine([...names]) : ''),
  row: (_names, values) => csvLine(values.map(cellText)),
  tail: () => '',
};

/** A GitHub-flavoured Markdown table; pipes escaped and line breaks as <br> so that each row stays one line. */
const mdCell = (s: string) => s.replaceAll('\\', '\\\\').replaceAll('|', '\\|').replace(/\r\n|\r|\n/g, '<br>');
const markdown: RowFormat = {
  head: (names) => (names.length ? `| ${names.map(mdCell).join(' | ')} |\n|${names.map(() => ' --- |').join('')}\n` : '_The result has no columns._\n'),
  row: (names, values) => (names.length ? `| ${values.map((v) => mdCell(cellText(v))).join(' | ')} |\n` : ''),
  tail: () => '',
};

export const rowFormats: Record<SaveFormat, RowFormat> = { json, csv, markdown };
