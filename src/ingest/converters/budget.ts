import { ConversionError, type ConvertOutput } from './converter.ts';

/**
 * Counts the bytes an output node is growing to while a converter builds it, so that a source
 * whose result could never be stored fails early ('too_large') instead of holding hundreds of
 * megabytes of rows first.
 */
export class NodeBudget {
  private used = 0;

  constructor(
    private readonly limit: number,
    private readonly what: string,
  ) {}

  add(bytes: number): void {
    this.used += bytes;
    if (this.used > this.limit) throw tooLarge(this.what, this.limit);
  }
}

/** The bytes the content store will hold for each node (JSON as it encodes it: 2-space indent, final newline). */
export function assertNodeSizes(output: ConvertOutput, limit: number): void {
  for (const node of output.nodes) {
    if (node.type === 'file') continue;
    const bytes = node.type === 'markdown' ? Buffer.byteLength(node.content) : Buffer.byteLength(JSON.stringify(node.content, null, 2)) + 1;
    if (bytes > limit) throw tooLarge(node.name, limit);
  }
}

function tooLarge(what: string, limit: number): ConversionError {
  return new ConversionError('too_large', `${what} would be larger than ${limit} bytes, the most a node may hold; ingest the file with mode raw to store it unchanged`);
}
