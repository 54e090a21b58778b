/**
 * Keys for a table's rows from its header row: the text of each heading (a byte-order mark
 * dropped), `column_<n>` (1-based) for a blank one, `<name>_2`, `<name>_3`… for a repeat.
 */
export function headerNames(values: unknown[]): string[] {
  const headers: string[] = [];
  values.forEach((v, i) => {
    const text = v === null || v === undefined ? '' : String(v).replace(/^\uFEFF/, '').trim();
    headers.push(uniqueHeader(text || `column_${i + 1}`, headers));
  });
  return headers;
}

/** Extends `headers` to `width` columns for a row longer than the header row. */
export function widenHeaders(headers: string[], width: number): void {
  while (headers.length < width) headers.push(uniqueHeader(`column_${headers.length + 1}`, headers));
}

function uniqueHeader(name: string, taken: string[]): string {
  if (!taken.includes(name)) return name;
  let n = 2;
  while (taken.includes(`${name}_${n}`)) n++;
  return `${name}_${n}`;
}
