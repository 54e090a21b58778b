import type { CliOutput } from '../io.ts';
import { formatBytes } from './output.ts';

/**
 * Progress of long work (uploads of many files): on a terminal one redrawn bar with counts,
 * bytes and rate; otherwise a plain line per step so logs stay readable. Always on stderr.
 */
export class Progress {
  private readonly stream: CliOutput;
  private readonly tty: boolean;
  private readonly label: string;
  private readonly totalCount: number;
  private readonly totalBytes: number;
  private readonly started = Date.now();
  private count = 0;
  private bytes = 0;

  constructor(label: string, totalCount: number, totalBytes: number, stream: CliOutput) {
    this.label = label;
    this.totalCount = totalCount;
    this.totalBytes = totalBytes;
    this.stream = stream;
    this.tty = Boolean(stream.isTTY);
  }

  advance(count: number, bytes: number): void {
    this.count += count;
    this.bytes += bytes;
    if (this.tty) this.stream.write(`\r${this.bar()}\x1b[K`);
    else this.stream.write(`${this.label} ${this.summary()}\n`);
  }

  done(): void {
    if (this.tty) this.stream.write(`\r${this.bar()}\x1b[K\n`);
  }

  private rate(): string {
    const seconds = Math.max((Date.now() - this.started) / 1000, 0.001);
    return `${formatBytes(Math.round(this.bytes / seconds))}/s`;
  }

  private summary(): string {
    return `${this.count}/${this.totalCount} files, ${formatBytes(this.bytes)}/${formatBytes(this.totalBytes)}, ${this.rate()}`;
  }

  private bar(): string {
    const width = 28;
    const fraction = this.totalBytes > 0 ? this.bytes / this.totalBytes : this.totalCount > 0 ? this.count / this.totalCount : 1;
    const filled = Math.min(width, Math.round(fraction * width));
    return `${this.label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${Math.round(fraction * 100)}% ${this.summary()}`;
  }
}
