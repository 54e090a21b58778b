import { Transform, type TransformCallback } from 'node:stream';

const BLOCK = 512;
const ZERO_BLOCK = Buffer.alloc(BLOCK);

/** An entry written by an export: a file (with its size) or a folder, by path. */
export interface ExportedEntry {
  path: string;
  kind: 'file' | 'dir';
  size: number;
}

/** What an entry of the archive is, as the filter decides on it. */
export interface TarEntry {
  /** Path in the archive, without a trailing slash. */
  path: string;
  kind: 'file' | 'dir' | 'other';
  /** Bytes of a file's content. */
  size: number;
}

/**
 * Passes a tar stream (as `git archive` writes it: ustar headers, pax `x` headers for long names
 * and sizes, a pax `g` header) through, dropping the entries `keep` refuses and every entry that
 * is neither a regular file nor a folder (symbolic and hard links, devices). A pax header goes
 * with the entry it describes. The file data of kept entries is passed on without copying.
 */
export class TarFilter extends Transform {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes of entry data (plus padding) still to pass on or drop. */
  private dataLeft = 0;
  private passData = false;
  /** A pax `x` header (header block + records) waiting for the entry it describes. */
  private pax: { raw: Buffer[]; records: Map<string, string> } | null = null;
  private ended = false;
  /** The entries passed on, in archive order. */
  readonly kept: ExportedEntry[] = [];

  /**
   * `owner`: the numeric owner written into every kept entry, so that `tar -x --same-owner`
   * run as root makes the files that user's without a chown pass afterwards.
   */
  constructor(
    private readonly keep: (entry: TarEntry) => boolean,
    private readonly owner: { uid: number; gid: number } | null = null,
  ) {
    super();
  }

  /** What one input chunk gives, written on as one buffer (one write to the reader, not one per entry). */
  private out: Buffer[] = [];

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    try {
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
      this.drain();
      if (this.out.length > 0) super.push(this.out.length === 1 ? this.out[0] : Buffer.concat(this.out));
      this.out = [];
      done();
    } catch (e) {
      done(e as Error);
    }
  }

  private give(b: Buffer): void {
    this.out.push(b);
  }

  override _flush(done: TransformCallback): void {
    if (this.dataLeft > 0 || this.pax) done(new Error('tar stream ended inside an entry'));
    else done();
  }

  private drain(): void {
    for (;;) {
      if (this.dataLeft > 0) {
        if (this.pendingBytes === 0) return;
        const part = this.takeBytes(Math.min(this.dataLeft, this.pendingBytes));
        this.dataLeft -= part.length;
        if (this.passData) this.give(part);
        continue;
      }
      if (this.pendingBytes < BLOCK) return;
      const header = this.takeBytes(BLOCK);
      if (this.ended) {
        this.give(header);
        continue;
      }
      this.onHeader(header);
      if (this.pax && this.dataLeft > 0) {
        // The records of a pax header are needed before its entry is decided: collect them whole.
        if (this.pendingBytes < this.dataLeft) {
          this.putBack(header);
          this.pax = null;
          this.dataLeft = 0;
          return;
        }
        const body = this.takeBytes(this.dataLeft);
        this.dataLeft = 0;
        this.pax.raw.push(body);
        this.pax.records = parsePax(body.subarray(0, size(header)));
      }
    }
  }

  private onHeader(header: Buffer): void {
    if (header[0] === 0 && header.equals(ZERO_BLOCK)) {
      // End of archive: the two zero blocks and whatever padding follows go through as they are.
      this.ended = true;
      this.give(header);
      return;
    }
    const type = String.fromCharCode(header[156]!);
    const bytes = size(header);
    const padded = Math.ceil(bytes / BLOCK) * BLOCK;
    if (type === 'g') {
      this.give(header);
      this.dataLeft = padded;
      this.passData = true;
      return;
    }
    if (type === 'x') {
      this.pax = { raw: [header], records: new Map() };
      this.dataLeft = padded;
      this.passData = false;
      return;
    }
    const records = this.pax?.records;
    const path = (records?.get('path') ?? headerPath(header)).replace(/\/+$/, '');
    const dataBytes = records?.has('size') ? Number(records.get('size')) : bytes;
    const kind = type === '0' || type === '\0' ? 'file' : type === '5' ? 'dir' : 'other';
    let kept = false;
    if (kind !== 'other' && this.keep({ path, kind, size: dataBytes })) {
      kept = true;
      this.kept.push({ path, kind, size: kind === 'file' ? dataBytes : 0 });
      for (const b of this.pax?.raw ?? []) this.give(b);
      this.give(this.owner ? withOwner(header, this.owner) : header);
    }
    this.pax = null;
    this.dataLeft = Math.ceil(dataBytes / BLOCK) * BLOCK;
    this.passData = kept;
  }

  /** Removes `n` bytes from the front of the pending chunks (a view when they lie in one chunk). */
  private takeBytes(n: number): Buffer {
    const first = this.pending[0]!;
    if (first.length >= n) {
      const out = first.subarray(0, n);
      if (first.length === n) this.pending.shift();
      else this.pending[0] = first.subarray(n);
      this.pendingBytes -= n;
      return out;
    }
    const out = Buffer.allocUnsafe(n);
    let off = 0;
    while (off < n) {
      const c = this.pending[0]!;
      const k = Math.min(c.length, n - off);
      c.copy(out, off, 0, k);
      off += k;
      if (k === c.length) this.pending.shift();
      else this.pending[0] = c.subarray(k);
    }
    this.pendingBytes -= n;
    return out;
  }

  /** Puts bytes back at the front (a pax header whose records have not all arrived yet). */
  private putBack(b: Buffer): void {
    this.pending.unshift(b);
    this.pendingBytes += b.length;
  }
}

/** A copy of a ustar header owned by `owner` (numeric ids, no names), its checksum updated. */
function withOwner(header: Buffer, owner: { uid: number; gid: number }): Buffer {
  const h = Buffer.from(header);
  h.write(`${owner.uid.toString(8).padStart(7, '0')}\0`, 108, 8, 'latin1');
  h.write(`${owner.gid.toString(8).padStart(7, '0')}\0`, 116, 8, 'latin1');
  h.fill(0, 265, 329); // uname and gname: tar would look the names up instead
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += h[i]!;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'latin1');
  return h;
}

/** The size field: octal, or base-256 when its first byte has the high bit set. */
function size(header: Buffer): number {
  if (header[124]! & 0x80) {
    let n = header[124]! & 0x7f;
    for (let i = 125; i < 136; i++) n = n * 256 + header[i]!;
    return n;
  }
  return parseInt(field(header, 124, 12).trim() || '0', 8);
}

function field(header: Buffer, offset: number, length: number): string {
  const end = header.indexOf(0, offset);
  return header.toString('utf8', offset, end >= 0 && end < offset + length ? end : offset + length);
}

/** The ustar name: prefix/name when the prefix field is used. */
function headerPath(header: Buffer): string {
  const name = field(header, 0, 100);
  const ustar = header.toString('latin1', 257, 262) === 'ustar';
  const prefix = ustar ? field(header, 345, 155) : '';
  return prefix ? `${prefix}/${name}` : name;
}

/** Pax records: `<length> <key>=<value>\n`, the length counting the whole record in bytes. */
function parsePax(body: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let i = 0;
  while (i < body.length) {
    const space = body.indexOf(0x20, i);
    if (space < 0) break;
    const length = Number(body.toString('latin1', i, space));
    if (!Number.isInteger(length) || length <= 0) break;
    const record = body.toString('utf8', space + 1, i + length - 1);
    const eq = record.indexOf('=');
    if (eq > 0) records.set(record.slice(0, eq), record.slice(eq + 1));
    i += length;
  }
  return records;
}
