import { closeSync, openSync, writeSync } from 'node:fs';
import { DbConnectorError } from './errors.ts';
import { rowFormats, type RowFormat, type SaveFormat } from './rowFormats.ts';
import type { ColumnInfo, RowSink } from './types.ts';
import { uniqueNames } from './values.ts';

const FLUSH_BYTES = 64 * 1024;

const mib = (n: number) => `${(n / (1024 * 1024)).toFixed(n % (1024 * 1024) === 0 ? 0 : 1)} MiB`;

/**
 * Rows turned into a saved format as they stream, written to a temporary file in 64 KiB
 * chunks, so memory holds one chunk whatever the row count. Past `maxBytes` (the content
 * store's largest node) it throws 413 at once, which stops the statement, naming how many rows
 * did fit.
 */
export class FormattedOutput implements RowSink {
  private readonly fd: number;
  private readonly format: RowFormat;
  private names: string[] = [];
  private pending: string[] = [];
  private pendingBytes = 0;
  private bytes = 0;
  private rows = 0;

  constructor(
    format: SaveFormat,
    readonly file: string,
    private readonly maxBytes: number,
  ) {
    this.format = rowFormats[format];
    this.fd = openSync(file, 'wx', 0o600);
  }

  columns(columns: ColumnInfo[]): void {
    this.names = uniqueNames(columns.map((c) => c.name));
    this.add(this.format.head(this.names));
  }

  row(values: unknown[]): void {
    this.add(this.format.row(this.names, values, this.rows));
    this.rows++;
  }

  /** Writes the tail and flushes; the file then holds exactly `bytes` bytes. */
  finish(): { bytes: number; rows: number } {
    this.add(this.format.tail(this.rows));
    this.flush();
    return { bytes: this.bytes, rows: this.rows };
  }

  close(): void {
    closeSync(this.fd);
  }

  private add(text: string): void {
    const n = Buffer.byteLength(text);
    this.bytes += n;
    if (this.bytes > this.maxBytes) {
      throw new DbConnectorError(
        'PAYLOAD_TOO_LARGE',
        `The saved content would be larger than ${mib(this.maxBytes)}, the largest node this server stores (CNS_MAX_CONTENT_BYTES): ${this.rows} rows fit. Save fewer rows (limit: ${Math.max(1, Math.floor(this.rows * 0.95))} or less) or select fewer columns.`,
        { limit: this.maxBytes, rows_that_fit: this.rows },
      );
    }
    this.pending.push(text);
    this.pendingBytes += n;
    if (this.pendingBytes >= FLUSH_BYTES) this.flush();
  }

  private flush(): void {
    if (!this.pending.length) return;
    writeSync(this.fd, this.pending.join(''));
    this.pending = [];
    this.pendingBytes = 0;
  }
}
