/**
 * Keeps the first `maxBytes` of a stream and drops the rest while still reading it, so that a
 * command flooding its output never blocks on a full pipe and never grows the service's memory.
 */
export class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  truncated = false;

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    if (this.kept >= this.maxBytes) {
      if (chunk.length > 0) this.truncated = true;
      return;
    }
    const room = this.maxBytes - this.kept;
    if (chunk.length > room) {
      this.chunks.push(chunk.subarray(0, room));
      this.kept = this.maxBytes;
      this.truncated = true;
    } else {
      this.chunks.push(chunk);
      this.kept += chunk.length;
    }
  }

  /** The kept bytes as UTF-8; a character cut by the cap is dropped rather than shown as U+FFFD. */
  text(): string {
    const bytes = Buffer.concat(this.chunks, this.kept);
    return decodeUtf8(this.truncated ? bytes.subarray(0, completeUtf8Length(bytes)) : bytes);
  }
}

/** A string already in memory (just-bash) cut to at most `maxBytes` of UTF-8, the same way. */
export function capText(text: string, maxBytes: number): { text: string; truncated: boolean } {
  // Cheap path: a string of n UTF-16 units is at most 3n UTF-8 bytes.
  if (text.length * 3 <= maxBytes) return { text, truncated: false };
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= maxBytes) return { text, truncated: false };
  const cut = bytes.subarray(0, maxBytes);
  return { text: decodeUtf8(cut.subarray(0, completeUtf8Length(cut))), truncated: true };
}

function decodeUtf8(bytes: Buffer): string {
  return bytes.toString('utf8');
}

/** Length of `bytes` without a trailing, incomplete UTF-8 sequence. */
function completeUtf8Length(bytes: Buffer): number {
  const n = bytes.length;
  // Walk back over at most 3 continuation bytes to the lead byte of the last character.
  for (let i = n - 1; i >= 0 && i >= n - 4; i--) {
    const b = bytes[i]!;
    if ((b & 0xc0) === 0x80) continue;
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return i + need <= n ? n : i;
  }
  return n;
}
