import { TimeSlice } from '../timeSlice.ts';

/** Every STEP-th line start is remembered: ~8 bytes per 256 lines, a walk of at most 255 lines to any line. */
const STEP = 256;
const NL = 0x0a;

/**
 * Where the lines of a text lie, without splitting it: the byte offset of line 1, 1+STEP,
 * 1+2·STEP… and the number of lines. Lines end with `\n` (kept in the line, as is a `\r`);
 * a last line without `\n` is a line, a trailing `\n` does not start one: "a\nb" and "a\nb\n"
 * both have 2 lines, "" has 0.
 */
export interface LineIndex {
  totalLines: number;
  checkpoints: Float64Array;
}

/** Builds the index with Buffer.indexOf (native) in time slices, so a 50 MB text never holds the event loop. */
export async function buildLineIndex(bytes: Buffer): Promise<LineIndex> {
  const checkpoints: number[] = [];
  const slice = new TimeSlice(5);
  let lines = 0;
  let pos = 0;
  while (pos < bytes.length) {
    if (lines % STEP === 0) checkpoints.push(pos);
    lines++;
    const nl = bytes.indexOf(NL, pos);
    if (nl < 0) break;
    pos = nl + 1;
    if ((lines & 0x3fff) === 0) await slice.tick();
  }
  return { totalLines: lines, checkpoints: Float64Array.from(checkpoints) };
}

/** The byte offset where 1-based `line` starts (line <= totalLines). */
function lineStart(bytes: Buffer, index: LineIndex, line: number): number {
  const k = Math.floor((line - 1) / STEP);
  let pos = index.checkpoints[k]!;
  for (let walk = (line - 1) % STEP; walk > 0; walk--) pos = bytes.indexOf(NL, pos) + 1;
  return pos;
}

/**
 * Bytes [start, end) of lines `first`..`last` (1-based, inclusive, `last` clamped to the last
 * line); null when `first` lies past the last line.
 */
export function lineBytes(bytes: Buffer, index: LineIndex, first: number, last: number): { start: number; end: number; last: number } | null {
  if (first > index.totalLines) return null;
  const upTo = Math.min(last, index.totalLines);
  const start = lineStart(bytes, index, first);
  let end = start;
  for (let n = first; n <= upTo; n++) {
    const nl = bytes.indexOf(NL, end);
    end = nl < 0 ? bytes.length : nl + 1;
  }
  return { start, end, last: upTo };
}
