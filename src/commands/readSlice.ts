import type { NodeInfo } from '../content/types.ts';
import type { TextSlices } from '../content/slices/textSlices.ts';
import { lineBytes } from '../content/slices/lineIndex.ts';
import { ValidationError } from '../errors/contentErrors.ts';

/** A slice asked for: `lines` 1-based inclusive, `bytes` 0-based inclusive (as an HTTP Range); `end` null: to the end. */
export interface SliceRange {
  unit: 'lines' | 'bytes';
  start: number;
  end: number | null;
}

/** What a ranged read answers; `range` and `bytes` are what was answered (end < start: nothing). */
export interface Slice {
  range: { unit: 'lines' | 'bytes'; start: number; end: number };
  bytes: { start: number; end: number };
  encoding: 'utf8' | 'base64';
  content: string;
  total_bytes: number;
  /** Null for binary content (no lines). */
  total_lines: number | null;
  /** The slice reaches the end of the content. */
  eof: boolean;
}

const RANGE = /^(\d{1,15})-(\d{0,15})$/;

/**
 * `lines` / `bytes` as a request gives them ("START-END" or "START-"): at most one, START <= END,
 * lines from 1. Null when neither is given. A bad value is a 422 naming the field.
 */
export function parseSliceRange(q: { lines?: string; bytes?: string }, field = (k: string) => k): SliceRange | null {
  if (q.lines !== undefined && q.bytes !== undefined) throw new ValidationError('give lines or bytes, not both', { field: field('bytes') });
  const unit = q.lines !== undefined ? 'lines' : q.bytes !== undefined ? 'bytes' : null;
  if (!unit) return null;
  const m = RANGE.exec(q[unit]!.trim());
  const bad = (why: string) => new ValidationError(`${field(unit)}: ${why}`, { field: field(unit) });
  if (!m) throw bad('expected START-END or START- (digits)');
  const start = Number(m[1]);
  const end = m[2] === '' ? null : Number(m[2]);
  if (unit === 'lines' && start < 1) throw bad('lines are counted from 1');
  if (end !== null && end < start) throw bad('END must not be before START');
  return { unit, start, end };
}

/**
 * Reads a slice of a content node (json, markdown or file) through `slices`, which keeps the
 * bytes and line index of recently sliced blobs. Text (markdown, json as stored: pretty-printed,
 * files that look like UTF-8 text) is answered as text; other files as base64, by bytes only
 * (lines of a binary are a 422). Byte ranges of text give whole characters: continuation bytes
 * at the start (of a character begun before it) are skipped and a character begun inside the
 * range is given whole (the end moves up to 3 bytes on), so pages asked back to back, by the
 * ends asked or answered, lose and repeat nothing. Past the end: an empty slice with the totals.
 */
export async function readSlice(slices: TextSlices, node: NodeInfo, range: SliceRange, load: () => Promise<Buffer>): Promise<Slice> {
  if (node.type === 'folder') throw new ValidationError(`${node.path} is a folder: ranges read json, markdown and file nodes`, { field: range.unit });
  const { bytes, lines } = await slices.bytes(node.contentHash ? `${node.contentHash}:${node.size}` : null, load);
  const text = node.type !== 'file' || looksLikeText(bytes);
  const size = bytes.length;
  if (range.unit === 'lines') {
    if (!text) throw new ValidationError(`${node.path} is not text: read it by bytes`, { field: 'lines' });
    const index = await lines();
    const last = range.end ?? index.totalLines;
    const at = lineBytes(bytes, index, range.start, last);
    if (!at) return empty('lines', range.start, size, index.totalLines, size, true);
    return {
      range: { unit: 'lines', start: range.start, end: at.last },
      bytes: { start: at.start, end: at.end - 1 },
      encoding: 'utf8',
      content: bytes.toString('utf8', at.start, at.end),
      total_bytes: size,
      total_lines: index.totalLines,
      eof: at.end >= size,
    };
  }
  const totalLines = text ? (await lines()).totalLines : null;
  let start = range.start;
  let end = Math.min(range.end ?? size - 1, size - 1);
  if (text) {
    while (start < size && start < range.start + 3 && isContinuation(bytes[start]!)) start++;
    for (let k = 0; k < 3 && end + 1 < size && isContinuation(bytes[end + 1]!); k++) end++;
  }
  if (start >= size || start > end) return empty('bytes', range.start, size, totalLines, Math.min(start, size), end >= size - 1);
  return {
    range: { unit: 'bytes', start, end },
    bytes: { start, end },
    encoding: text ? 'utf8' : 'base64',
    content: bytes.toString(text ? 'utf8' : 'base64', start, end + 1),
    total_bytes: size,
    total_lines: totalLines,
    eof: end >= size - 1,
  };
}

function empty(unit: 'lines' | 'bytes', start: number, size: number, totalLines: number | null, at: number, eof: boolean): Slice {
  return {
    range: { unit, start, end: start - 1 },
    bytes: { start: at, end: at - 1 },
    encoding: 'utf8',
    content: '',
    total_bytes: size,
    total_lines: totalLines,
    eof,
  };
}

const isContinuation = (b: number) => (b & 0xc0) === 0x80;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Text when the first 8 KiB hold no NUL and decode as UTF-8 (a character cut at the sample's end aside). */
export function looksLikeText(bytes: Buffer): boolean {
  let n = Math.min(bytes.length, 8192);
  const sample = bytes.subarray(0, n);
  if (sample.includes(0)) return false;
  if (n < bytes.length) {
    // Leave out a character the sample's end cuts.
    let back = n - 1;
    while (back > n - 4 && back > 0 && isContinuation(bytes[back]!)) back--;
    if (bytes[back]! >= 0xc0) n = back;
  }
  try {
    utf8.decode(bytes.subarray(0, n));
    return true;
  } catch {
    return false;
  }
}
