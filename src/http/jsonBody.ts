import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { JSONParser } from '@streamparser/json';
import { AppError, validationError } from './errors.ts';
import { findLossyNumber, isLossyNumber } from './jsonNumbers.ts';

/** Bodies up to this size are parsed whole with JSON.parse (fastest); larger ones as they arrive. */
export const STREAM_PARSE_ABOVE = 1024 * 1024;
/** Parsing a streamed body yields to the event loop after this much work. */
const SLICE_MS = 8;

const tooLarge = () => new AppError('PAYLOAD_TOO_LARGE', 'The request body is larger than this server accepts.');
const notJson = (why: string) => validationError(`The request body is not valid JSON: ${why}.`, [{ field: 'body', message: why }]);
const lossy = (field: string, literal: string) =>
  validationError(`Invalid body: ${field} is a number JSON cannot carry exactly (${literal.slice(0, 40)}).`, [
    { field, message: 'number out of range or beyond 2^53: send it as a string' },
  ]);
const poisoned = () => validationError('The request body may not contain a "__proto__" key.', [{ field: 'body', message: '"__proto__" key' }]);
/** `"__proto__"` as a key, also spelled with \u escapes (what @hapi/bourne looks for). */
const PROTO_KEY = /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;

/**
 * Reads a JSON request body: objects and arrays only, at most `limitBytes` (decoded), numbers
 * JSON.parse would silently alter refused (422 naming the field), `__proto__` keys refused.
 * Large bodies are parsed chunk by chunk as they arrive, yielding to the event loop, so a
 * 100,000-file bulk write does not hold every other request for the length of a JSON.parse.
 */
export async function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > limitBytes) throw tooLarge();
  const source = decoded(req);
  const streamed = !(declared <= STREAM_PARSE_ABOVE) || source !== req;
  return streamed ? parseStreamed(source, limitBytes) : parseWhole(source, limitBytes);
}

function decoded(req: IncomingMessage): Readable {
  const encoding = String(req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  if (encoding === 'identity' || encoding === '') return req;
  const decoder = encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : null;
  if (!decoder) throw validationError(`Content-Encoding "${encoding}" is not supported (identity, gzip, deflate, br).`, [{ field: 'content-encoding', message: 'unsupported' }]);
  req.on('error', (e) => decoder.destroy(e));
  return req.pipe(decoder);
}

async function parseWhole(source: Readable, limitBytes: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of source as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) {
      source.destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  if (!/^[\x20\x09\x0a\x0d]*[[{]/.test(text)) throw notJson('only objects and arrays are accepted');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw notJson((e as Error).message);
  }
  if (PROTO_KEY.test(text) && hasProtoKey(value)) throw poisoned();
  const found = findLossyNumber(text);
  if (found) throw lossy(found.field, found.literal);
  return value;
}

async function parseStreamed(source: Readable, limitBytes: number): Promise<unknown> {
  const parser = new JSONParser({ paths: ['$'], keepStack: false });
  let result: unknown;
  let done = false;
  let failure: unknown = null;
  let firstLossy: { field: string; literal: string } | null = null;
  parser.onValue = ({ value, stack }) => {
    if (stack.length === 0) {
      result = value;
      done = true;
    }
  };
  parser.onError = (e) => {
    failure ??= e;
  };
  // Parts the library keeps private in its types: the token parser's position, and the number hook it documents.
  const parts = parser as unknown as { tokenParser: { stack: { key?: string | number }[]; key?: string | number }; tokenizer: { parseNumber(s: string): number } };
  const tokens = parts.tokenParser;
  parts.tokenizer.parseNumber = (literal: string) => {
    if (!firstLossy && isLossyNumber(literal)) {
      const path = [...tokens.stack.slice(1).map((s) => s.key), tokens.key].filter((k) => k !== undefined);
      firstLossy = { field: path.length ? path.join('.') : 'body', literal };
    }
    return Number(literal);
  };

  let size = 0;
  let started = false;
  let suspicious = false;
  let tail = '';
  let sliceStart = performance.now();
  for await (const chunk of source as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limitBytes) {
      source.destroy();
      throw tooLarge();
    }
    if (!started) {
      const text = chunk.toString('latin1').trimStart();
      if (text === '') continue;
      if (text[0] !== '{' && text[0] !== '[') throw notJson('only objects and arrays are accepted');
      started = true;
    }
    // Keys are checked on the text (with an overlap for a key split across chunks), then on the value.
    const window = tail + chunk.toString('latin1');
    if (!suspicious && PROTO_KEY.test(window)) suspicious = true;
    tail = window.slice(-32);
    if (done) {
      if (chunk.toString('latin1').trim() !== '') throw notJson('unexpected data after the JSON value');
      continue;
    }
    parser.write(chunk);
    if (failure) throw notJson((failure as Error).message);
    // Chunks already buffered arrive without a turn of the event loop: yield now and then.
    if (performance.now() - sliceStart > SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
  if (!started) return {};
  if (!done) throw notJson('the body ended before the JSON value did');
  if (firstLossy) {
    const { field, literal } = firstLossy as { field: string; literal: string };
    throw lossy(field, literal);
  }
  if (suspicious && hasProtoKey(result)) throw poisoned();
  return result;
}

/** Whether any object in the value has an own `__proto__` key. */
function hasProtoKey(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (Object.prototype.hasOwnProperty.call(v, '__proto__')) return true;
    for (const child of Object.values(v)) stack.push(child);
  }
  return false;
}
