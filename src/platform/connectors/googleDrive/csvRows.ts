import Papa from 'papaparse';
import { inferValue } from '../../../ingest/converters/csv.ts';
import { headerNames, widenHeaders } from '../../../ingest/converters/headers.ts';

/**
 * A Google Sheet's CSV export (its first sheet) as rows keyed by the header row, with the
 * ingestion's typing of CSV fields (numbers, booleans, null for empty; text that would change,
 * such as `007`, stays text) and its header naming (`column_<n>` for a blank heading, `<name>_2`
 * for a repeat). Drive's export is always comma-separated UTF-8; empty rows are dropped.
 */
export function csvRows(csv: string): Record<string, unknown>[] {
  const parsed = Papa.parse<string[]>(csv.replace(/^\uFEFF/, ''), { delimiter: ',', skipEmptyLines: 'greedy' });
  const [head, ...body] = parsed.data;
  if (!head) return [];
  const headers = headerNames(head);
  return body.map((fields) => {
    widenHeaders(headers, fields.length);
    const row: Record<string, unknown> = {};
    headers.forEach((h, i) => (row[h] = fields[i] === undefined ? null : inferValue(fields[i]!)));
    return row;
  });
}
