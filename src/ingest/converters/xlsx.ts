import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import ExcelJS from 'exceljs';
import { NodeBudget } from './budget.ts';
import { ConversionError, type ConvertedNode, type ConvertInput, type ConvertOutput, type Progress } from './converter.ts';
import { headerNames, widenHeaders } from './headers.ts';
import { baseOf, safeName } from './names.ts';
import { rowNodes } from './rowNodes.ts';
import { assertZipWithinLimit } from '../../content/archives/zipGuard.ts';

type Row = Record<string, unknown>;

/**
 * XLSX → for each sheet with data, two nodes in a folder named after the workbook:
 * `<book>/<sheet>.json`, the rows as objects keyed by the header row (the first row with a
 * value; blank or repeated headings become `column_<n>` / `<name>_2`; empty cells are null), and
 * `<book>/<sheet>.md`, a Markdown preview of its first rows (rowNodes.ts). Both modes give the same
 * nodes: a workbook's rows are data. Cells: formulas as their cached results, dates as ISO
 * strings (`2024-03-01` at midnight, else the full timestamp), rich text and links as their
 * text, errors as `#N/A`-style strings. Read with exceljs's streaming reader, after the zip-bomb
 * guard; progress in bytes of the file read.
 */
export async function convertXlsx(input: ConvertInput, progress: (p: Progress) => void): Promise<ConvertOutput> {
  const { names } = await assertZipWithinLimit(input.file, input.limits.maxDecompressedBytes, 'XLSX');
  if (!names.has('xl/workbook.xml')) throw new ConversionError('corrupt', 'the XLSX cannot be read: it has no workbook part (xl/workbook.xml)');
  const total = (await stat(input.file)).size;
  let done = 0;
  const stream = createReadStream(input.file);
  stream.on('data', (chunk) => {
    done += chunk.length;
    progress({ done, total, unit: 'bytes' });
  });
  const book = baseOf(input.name);
  const nodes: ConvertedNode[] = [];
  const warnings: string[] = [];
  const used = new Set<string>();
  try {
    const reader = new ExcelJS.stream.xlsx.WorkbookReader(stream, { sharedStrings: 'cache', styles: 'cache', hyperlinks: 'ignore', worksheets: 'emit', entries: 'ignore' });
    for await (const sheet of reader) {
      const sheetName = (sheet as unknown as { name: string }).name;
      const file = uniqueName(safeName(sheetName), used);
      const budget = new NodeBudget(input.limits.maxNodeBytes, `${book}/${file}.json`);
      let headers: string[] | null = null;
      const rows: Row[] = [];
      for await (const row of sheet) {
        const values = cellsOf(row);
        if (values.every((v) => v === null)) continue;
        if (!headers) {
          headers = headerNames(values);
          continue;
        }
        widenHeaders(headers, values.length);
        const record: Row = {};
        headers.forEach((h, i) => (record[h] = values[i] ?? null));
        budget.add(Buffer.byteLength(JSON.stringify(record)) + headers.length * 6 + 8);
        rows.push(record);
      }
      if (!headers) {
        warnings.push(`sheet "${sheetName}" is empty; it was left out`);
        continue;
      }
      nodes.push(...rowNodes(`${book}/${file}`, sheetName, headers, rows));
    }
  } catch (err) {
    if (err instanceof ConversionError) throw err;
    throw new ConversionError('corrupt', `the XLSX cannot be read: ${(err as Error).message}`);
  } finally {
    stream.destroy();
  }
  if (!nodes.length) warnings.push('the workbook has no sheet with data');
  return { nodes, warnings };
}

/** A row's values from column 1, as JSON values. */
function cellsOf(row: ExcelJS.Row): unknown[] {
  const out: unknown[] = [];
  const values = row.values as unknown[];
  for (let col = 1; col < values.length; col++) out.push(plain(values[col], () => row.getCell(col).numFmt));
  while (out.length && out[out.length - 1] === null) out.pop();
  return out;
}

const DAY_MS = 86_400_000;
const EXCEL_EPOCH = Date.UTC(1899, 11, 30);

function plain(value: unknown, numFmt: () => string | undefined): unknown {
  if (value === null || value === undefined || value === '') return null;
  if (value instanceof Date) return isoDate(value);
  if (typeof value !== 'object') return value;
  const v = value as Record<string, unknown>;
  if ('result' in v || 'formula' in v || 'sharedFormula' in v) {
    // A formula's cached result; a number in a date-formatted cell is a date serial.
    if (typeof v.result === 'number' && isDateFormat(numFmt())) return isoDate(new Date(EXCEL_EPOCH + v.result * DAY_MS));
    return plain(v.result, numFmt);
  }
  if (Array.isArray(v.richText)) return (v.richText as { text: string }[]).map((r) => r.text).join('');
  if (typeof v.text === 'string') return v.text;
  if (typeof v.error === 'string') return v.error;
  return null;
}

/** Dates without a time of day as `YYYY-MM-DD`, others as full ISO timestamps (Excel times have no zone: UTC). */
function isoDate(d: Date): string | null {
  if (Number.isNaN(d.getTime())) return null;
  const iso = d.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
}

function isDateFormat(format: string | undefined): boolean {
  if (!format) return false;
  // Quoted text and [colour]/[locale] sections are not date parts.
  return /[dmyhs]/i.test(format.replace(/"[^"]*"|\[[^\]]*\]/g, ''));
}

/** Sheet names are unique in a workbook, but two can become one safe name. */
function uniqueName(name: string, used: Set<string>): string {
  let out = name;
  for (let n = 2; used.has(out.toLowerCase()); n++) out = `${name}_${n}`;
  used.add(out.toLowerCase());
  return out;
}
