import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createInflate, inflateSync } from 'node:zlib';
import { ConversionError } from './converter.ts';

/** An object stream's text is read for the references it holds up to this much (real ones hold a few hundred objects). */
const OBJECT_STREAM_TEXT = 16 * 1024 * 1024;

interface StreamInfo {
  id: number;
  /** Byte range of the stream's data in the file. */
  start: number;
  end: number;
  flate: boolean;
  /** A PDF 1.5 object stream: compressed objects, whose references count too. */
  objects: boolean;
}

/** Outputs up to this size are inflated in one call. */
const IN_ONE_CALL = 4 * 1024 * 1024;

const OBJ = /(\d+)\s+\d+\s+obj\b/g;
const STREAM = />>\s*stream(?:\r\n|\n|\r)/g;
const REF = /(\d+)\s+\d+\s+R\b/g;

/**
 * The decompression-bomb guard for PDFs, run before pdf.js opens the file. pdf.js inflates and
 * parses a content stream each time a page uses it (it does not cache streams), so a small file
 * whose thousands of pages share one huge Flate stream makes it work through gigabytes. The
 * guard reads the file's objects as text (no full parser: enough to find streams and
 * references) and counts what a conversion would expand: each stream's decoded size (Flate
 * inflated into nothing, counted; other filters and plain streams by their length) times the
 * references to it (`N 0 R`, in the file and in object streams). Past `maxBytes` it fails
 * 'too_large' before a page is read; inflating stops as soon as the total must be over.
 * What it cannot see (encrypted streams, a stream used through a shared resource) is left to
 * the wall-clock limit of a conversion.
 */
export async function assertPdfWithinLimit(bytes: Buffer, maxBytes: number): Promise<void> {
  const text = bytes.toString('latin1');
  const { streams, refs } = scan(text);
  const overLimit = () =>
    new ConversionError(
      'too_large',
      `the PDF's streams would expand to more than ${maxBytes} bytes as its pages use them (the decompressed size limit, CNS_INGEST_MAX_DECOMPRESSED_BYTES); it was not converted`,
    );
  let total = 0;
  // Object streams first: what they hold references the other streams.
  for (const s of streams.filter((x) => x.objects)) {
    let held = '';
    total += await decodedSize(bytes, s, maxBytes - total + 1, (chunk) => {
      if (held.length < OBJECT_STREAM_TEXT) held += chunk.toString('latin1');
    });
    if (total > maxBytes) throw overLimit();
    countRefs(held, refs);
  }
  for (const s of streams.filter((x) => !x.objects)) {
    const uses = Math.max(1, refs.get(s.id) ?? 0);
    const size = await decodedSize(bytes, s, Math.floor((maxBytes - total) / uses) + 1);
    total += size * uses;
    if (total > maxBytes) throw overLimit();
  }
}

/**
 * Every stream of the file, and how often each object is referenced outside stream data. Each
 * search runs on one object's text (a slice), so the scan stays linear in the file's size.
 */
function scan(text: string): { streams: StreamInfo[]; refs: Map<number, number> } {
  const streams: StreamInfo[] = [];
  const refs = new Map<number, number>();
  OBJ.lastIndex = 0;
  for (let m = OBJ.exec(text); m; m = OBJ.exec(text)) {
    const body = OBJ.lastIndex;
    const endobj = text.indexOf('endobj', body);
    const object = text.slice(body, endobj < 0 ? text.length : endobj);
    STREAM.lastIndex = 0;
    const kw = STREAM.exec(object);
    if (!kw) {
      countRefs(object, refs);
      OBJ.lastIndex = body + object.length;
      continue;
    }
    const dict = object.slice(0, kw.index + 2);
    countRefs(dict, refs);
    const start = body + STREAM.lastIndex;
    const end = dataEnd(text, dict, start);
    streams.push({
      id: Number(m[1]),
      start,
      end,
      flate: /\/Filter\s*\[?\s*\/(FlateDecode|Fl)\b/.test(dict),
      objects: /\/Type\s*\/ObjStm\b/.test(dict),
    });
    OBJ.lastIndex = end;
  }
  return { streams, refs };
}

/** Where a stream's data ends: its direct /Length when `endstream` follows there, else the next `endstream`. */
function dataEnd(text: string, dict: string, start: number): number {
  const declared = /\/Length\s+(\d+)(?!\s+\d+\s+R)/.exec(dict);
  if (declared) {
    const end = start + Number(declared[1]);
    if (/^\s*endstream/.test(text.slice(end, end + 32))) return end;
  }
  const found = text.indexOf('endstream', start);
  return found < 0 ? text.length : found;
}

function countRefs(text: string, refs: Map<number, number>): void {
  REF.lastIndex = 0;
  for (let m = REF.exec(text); m; m = REF.exec(text)) {
    const id = Number(m[1]);
    refs.set(id, (refs.get(id) ?? 0) + 1);
  }
}

/**
 * A stream's decoded size, counting at most `limit` bytes (then it stops: the caller is over
 * its budget). Damaged Flate data counts what inflated before the damage, as a reader gets.
 * Small outputs inflate in one call (a PDF has thousands of small streams); a large or damaged
 * one is streamed through a counter, never held whole.
 */
async function decodedSize(bytes: Buffer, s: StreamInfo, limit: number, onChunk?: (chunk: Buffer) => void): Promise<number> {
  const data = bytes.subarray(s.start, s.end);
  if (!s.flate) return data.length;
  try {
    const out = inflateSync(data, { maxOutputLength: Math.min(limit, IN_ONE_CALL) });
    onChunk?.(out);
    return out.length;
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' && limit <= IN_ONE_CALL) return limit;
  }
  let size = 0;
  const enough = new Error('enough');
  const counter = new Writable({
    write(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      onChunk?.(chunk);
      done(size >= limit ? enough : null);
    },
  });
  await pipeline(Readable.from([data]), createInflate(), counter).catch(() => {});
  return size;
}
