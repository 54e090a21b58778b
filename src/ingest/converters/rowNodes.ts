import type { ConvertedNode } from './converter.ts';
import { markdownTable } from './markdown.ts';

/** Rows shown in a table's Markdown preview. */
export const PREVIEW_ROWS = 50;

/**
 * A table's rows as the two nodes a spreadsheet becomes (an XLSX sheet, a CSV or TSV file):
 * `<base>.json`, every row as an object keyed by the header, and `<base>.md`, `# <title>` over a
 * Markdown table of the first PREVIEW_ROWS rows, saying where the rest are when there are more.
 * `base` may name a folder (`sales/Q1`).
 */
export function rowNodes(base: string, title: string, headers: string[], rows: Record<string, unknown>[]): ConvertedNode[] {
  const file = base.slice(base.lastIndexOf('/') + 1);
  const preview = rows.slice(0, PREVIEW_ROWS).map((r) => headers.map((h) => r[h]));
  const note = rows.length > PREVIEW_ROWS ? `\n_The first ${PREVIEW_ROWS} of ${rows.length} rows; all rows are in \`${file}.json\`._\n` : '';
  return [
    { name: `${base}.json`, type: 'json', content: rows },
    { name: `${base}.md`, type: 'markdown', content: `# ${title}\n\n${markdownTable(headers, preview)}${note}` },
  ];
}
