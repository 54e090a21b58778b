/**
 * A json document together with its stored bytes (the canonical form of `encodeContent`:
 * `JSON.stringify(value, null, 2)` and a newline), and where the members of its large containers
 * lie in those bytes. A change of one member then re-encodes that member only and splices it into
 * the previous bytes: a change of one row of a 5 MiB table costs a copy of the bytes, not a
 * serialization of the table (issue 18). The canonical form is this module's and encoding.ts's
 * alone; callers only say which member changed.
 */

/** Members smaller than this are re-encoded whole; larger ones are descended into. */
const DESCEND_BYTES = 16 * 1024;

/** Where the members of one container lie, relative to the container's first byte. */
interface Spans {
  /** Byte offset of each member's value (after `"key": ` in objects). */
  starts: number[];
  lengths: number[];
  /** Object keys by member index (arrays: undefined). */
  keys?: Map<string, number>;
  /** Spans of members already descended into, by member index. */
  children: Map<number, Spans>;
}

export class EncodedJson {
  private constructor(
    readonly value: object,
    readonly bytes: Buffer,
    /** Built at the first change (a pass over the document), then kept up to date by each change. */
    private spans: Spans | null,
  ) {}

  /** The canonical bytes of `value` (an object or an array), encoded whole. */
  static of(value: object): EncodedJson {
    return new EncodedJson(value, Buffer.from(canonical(value, 0) + '\n', 'utf8'), null);
  }

  /**
   * `next`, which differs from this document only in the member at `tokens` (an RFC 6901 path
   * to a member that exists in both), encoded by splicing that member's new bytes into these.
   * Members of at least `descendBytes` are descended into rather than re-encoded whole.
   */
  replaced(tokens: readonly string[], next: object, descendBytes = DESCEND_BYTES): EncodedJson {
    if (tokens.length === 0) return EncodedJson.of(next);
    const spans = (this.spans ??= spansOf(this.value, 0));
    // Walk down while the member on the way is large, copying the spans of each container walked.
    const path: { spans: Spans; index: number }[] = [];
    let at = spans;
    let value: unknown = this.value;
    let nextValue: unknown = next;
    let offset = 0;
    for (let depth = 0; ; depth++) {
      const index = memberIndex(at, value, tokens[depth]!);
      if (index === undefined) return EncodedJson.of(next);
      path.push({ spans: at, index });
      offset += at.starts[index]!;
      value = member(value, tokens[depth]!);
      nextValue = member(nextValue, tokens[depth]!);
      if (depth === tokens.length - 1 || at.lengths[index]! < descendBytes || !isContainer(value) || !isContainer(nextValue)) break;
      let child = at.children.get(index);
      if (!child) {
        child = spansOf(value as object, depth + 1);
        at.children.set(index, child);
      }
      at = child;
    }
    const depth = path.length;
    const text = canonical(nextValue, depth);
    if (text === undefined) return EncodedJson.of(next);
    const replacement = Buffer.from(text, 'utf8');
    const last = path[depth - 1]!;
    const oldLength = last.spans.lengths[last.index]!;
    const bytes = Buffer.concat([this.bytes.subarray(0, offset), replacement, this.bytes.subarray(offset + oldLength)]);
    return new EncodedJson(next, bytes, shifted(spans, path, replacement.length - oldLength));
  }
}

/** The spans after the member at the end of `path` changed length by `delta` (the containers walked are copied; the rest is shared). */
function shifted(root: Spans, path: { spans: Spans; index: number }[], delta: number): Spans {
  const copy = (s: Spans, index: number, child: Spans | null): Spans => {
    const starts = delta === 0 ? s.starts : s.starts.slice();
    const lengths = s.lengths.slice();
    lengths[index]! += delta;
    if (delta !== 0) for (let i = index + 1; i < starts.length; i++) starts[i]! += delta;
    const children = new Map(s.children);
    if (child) children.set(index, child);
    else children.delete(index);
    return { starts, lengths, keys: s.keys, children };
  };
  let child: Spans | null = null;
  for (let i = path.length - 1; i >= 0; i--) child = copy(path[i]!.spans, path[i]!.index, child);
  return child ?? root;
}

/** Where each member of `container` (at nesting `depth`) lies in its canonical text. */
function spansOf(container: object, depth: number): Spans {
  const indent = 2 * (depth + 1);
  const starts: number[] = [];
  const lengths: number[] = [];
  const children = new Map<number, Spans>();
  // `[` or `{`, then a newline; members are separated by `,\n`.
  let at = 2;
  if (Array.isArray(container)) {
    for (const m of container) {
      at += indent;
      starts.push(at);
      const length = encodedLength(m, depth + 1) ?? 4; // undefined in an array is written `null`
      lengths.push(length);
      at += length + 2;
    }
    return { starts, lengths, children };
  }
  const keys = new Map<string, number>();
  for (const [key, m] of Object.entries(container)) {
    const length = encodedLength(m, depth + 1);
    if (length === undefined) continue; // JSON.stringify leaves such members out
    keys.set(key, starts.length);
    at += indent + Buffer.byteLength(JSON.stringify(key), 'utf8') + 2;
    starts.push(at);
    lengths.push(length);
    at += length + 2;
  }
  return { starts, lengths, keys, children };
}

/** `value` as `JSON.stringify(value, null, 2)` writes it nested `depth` levels deep. */
function canonical(value: unknown, depth: number): string | undefined {
  const text = JSON.stringify(value, null, 2) as string | undefined;
  return text === undefined || depth === 0 ? text : text.replaceAll('\n', '\n' + '  '.repeat(depth));
}

/** The byte length of `canonical(value, depth)`, without building the indented text: each line break gains the indent. */
function encodedLength(value: unknown, depth: number): number | undefined {
  const text = JSON.stringify(value, null, 2) as string | undefined;
  if (text === undefined) return undefined;
  let breaks = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) breaks++;
  return Buffer.byteLength(text, 'utf8') + breaks * 2 * depth;
}

function memberIndex(spans: Spans, container: unknown, token: string): number | undefined {
  if (spans.keys) return Object.prototype.hasOwnProperty.call(container, token) ? spans.keys.get(token) : undefined;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
  const index = Number(token);
  return index < spans.starts.length ? index : undefined;
}

function member(container: unknown, token: string): unknown {
  return Array.isArray(container) ? container[Number(token)] : (container as Record<string, unknown>)[token];
}

function isContainer(value: unknown): value is object {
  return value !== null && typeof value === 'object';
}
