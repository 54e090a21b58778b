import { createReadStream } from 'node:fs';
import { Transform } from 'node:stream';
import { stat } from 'node:fs/promises';
import Papa from 'papaparse';
import { NodeBudget } from './budget.ts';
import { ConversionError, type ConvertedNode, type ConvertInput, type ConvertOutput, type Progress } from './converter.ts';
import { fixWindows1252, looksUtf8 } from './decode.ts';
import { headerNames, widenHeaders } from './headers.ts';
import { markdownTable } from './markdown.ts';
import { baseOf, outputName, safeName } from './names.ts';
import { rowNodes } from './rowNodes.ts';

const DELIMITERS = [',', ';', '\t', '|'];

/**
 * CSV/TSV → rows, streamed through papaparse. The delimiter is detected from the first chunk
 * among `,` `;` tab `|` (a `.tsv` is always tab-separated); the first non-empty row is the
 * header (blank or repeated names become `column_<n>` / `<name>_2`). By default, as for an XLSX
 * sheet, `<name>.json` holds each row as an object keyed by the header with inferred types (see
 * `inferValue`) and `<name>.md` a Markdown preview of the first rows (rowNodes.ts); mode json
 * writes the JSON alone, mode markdown the rows, text unchanged, as one Markdown table. Rows
 * longer or shorter than the header and quoting errors are counted in a warning. A file that is
 * not UTF-8 is read as windows-1252.
 */
export async function convertCsv(input: ConvertInput, progress: (p: Progress) => void, tabs: boolean): Promise<ConvertOutput> {
  const asJson = input.mode !== 'markdown';
  const name = outputName(input.name, asJson ? 'json' : 'md');
  const budget = new NodeBudget(input.limits.maxNodeBytes, name);
  const total = (await stat(input.file)).size;
  let done = 0;
  let headers: string[] | null = null;
  const records: Record<string, unknown>[] = [];
  const lines: string[][] = [];
  let ragged = 0;
  const problems: string[] = [];
  let failure: Error | null = null;

  const utf8 = await looksUtf8(input.file);
  const stream = createReadStream(input.file, { encoding: utf8 ? 'utf8' : 'latin1' });
  stream.on('data', (chunk) => {
    done += utf8 ? Buffer.byteLength(chunk as string) : chunk.length;
    progress({ done, total, unit: 'bytes' });
  });
  const source = utf8 ? stream : stream.pipe(new Transform({ decodeStrings: false, encoding: 'utf8', transform: (chunk: string, _e, next) => next(null, fixWindows1252(chunk)) }));
  await new Promise<void>((resolve, reject) => {
    stream.once('error', reject);
    Papa.parse<string[]>(source, {
      delimiter: tabs ? '\t' : '',
      delimitersToGuess: DELIMITERS,
      skipEmptyLines: 'greedy',
      step: (result, parser) => {
        for (const e of result.errors) if (e.type !== 'Delimiter' && problems.length < 1000) problems.push(`row ${records.length + lines.length + 2}: ${e.message}`);
        const fields = result.data;
        try {
          if (!headers) {
            headers = headerNames(fields);
            return;
          }
          if (fields.length !== headers.length) ragged++;
          widenHeaders(headers, fields.length);
          if (asJson) {
            const record: Record<string, unknown> = {};
            headers.forEach((h, i) => (record[h] = fields[i] === undefined ? null : inferValue(fields[i]!)));
            budget.add(Buffer.byteLength(JSON.stringify(record)) + headers.length * 6 + 8);
            records.push(record);
          } else {
            budget.add(fields.reduce((n, f) => n + Buffer.byteLength(f) + 3, 2));
            lines.push(fields);
          }
        } catch (err) {
          failure = err as Error;
          parser.abort();
        }
      },
      complete: () => resolve(),
      error: (err: Error) => reject(err),
    });
  }).catch((err: unknown) => {
    throw new ConversionError('corrupt', `the CSV cannot be read: ${(err as Error).message}`);
  });
  if (failure) throw failure;

  const warnings: string[] = [];
  if (ragged) warnings.push(`${ragged} row${ragged > 1 ? 's have' : ' has'} a different number of fields than the header`);
  if (problems.length) warnings.push(`${problems.length} quoting problem${problems.length > 1 ? 's' : ''}, first: ${problems[0]}`);
  if (!utf8) warnings.push('the file is not UTF-8; it was read as windows-1252');
  if (!headers) warnings.push('the file has no rows');
  if (input.mode === null && headers) return { nodes: rowNodes(baseOf(input.name), safeName(input.name), headers, records), warnings };
  const node: ConvertedNode = asJson
    ? { name, type: 'json', content: records }
    : { name, type: 'markdown', content: headers ? markdownTable(headers, lines) : '' };
  return { nodes: [node], warnings };
}

/**
 * A field's JSON value: empty (or blanks) → null; `true`/`false` in any case → a boolean; a
 * plain decimal number → a number, except where that would change it: leading zeros (`007`,
 * postcodes), integers beyond 2^53 (ids, card numbers), thousands separators or decimal
 * commas. Everything else stays the text it was.
 */
export function inferValue(text: string): unknown {
  const t = text.trim();
  if (t === '') return null;
  if (/^(true|false)$/i.test(t)) return t.toLowerCase() === 'true';
  if (/^[+-]?(\d+(\.\d+)?|\.\d+)([eE][+-]?\d+)?$/.test(t) && !/^[+-]?0\d/.test(t)) {
    const n = Number(t);
    if (Number.isFinite(n) && (!/^[+-]?\d+$/.test(t) || Number.isSafeInteger(n))) return n;
  }
  return text;
}
