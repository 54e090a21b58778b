/**
 * Everything a command prints: with `--json` one JSON document on stdout (the API's data, so
 * scripts see the same fields as the REST interface), otherwise lines and tables for people.
 * Errors and progress go to stderr so stdout stays clean for pipes.
 */
export class Output {
  readonly json: boolean;
  private readonly out: NodeJS.WritableStream;

  constructor(json: boolean, out: NodeJS.WritableStream) {
    this.json = json;
    this.out = out;
  }

  /** `data` as JSON under --json, else whatever `human` prints. */
  result(data: unknown, human: () => void): void {
    if (this.json) this.out.write(JSON.stringify(data, null, 2) + '\n');
    else human();
  }

  line(text = ''): void {
    this.out.write(text + '\n');
  }

  raw(bytes: Buffer | string): void {
    this.out.write(bytes);
  }

  /** Left-aligned columns separated by two spaces; the last column is not padded. */
  table(headers: string[], rows: string[][]): void {
    const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
    const fmt = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
    this.line(fmt(headers));
    for (const r of rows) this.line(fmt(r));
  }

  /** `key: value` lines with the keys aligned. */
  fields(pairs: [string, string | number | null | undefined][]): void {
    const width = Math.max(...pairs.map(([k]) => k.length));
    for (const [k, v] of pairs) this.line(`${(k + ':').padEnd(width + 1)} ${v ?? '-'}`);
  }
}

export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined) return '-';
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

/** ISO time → `2026-11-22 02:13` (UTC, minutes): enough to tell versions apart in a table. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '-';
  return iso.replace('T', ' ').slice(0, 16);
}
