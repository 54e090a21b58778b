import { createHash } from 'node:crypto';

/** One piece of a document that is indexed and ranked on its own. */
export interface Chunk {
  index: number;
  /** Headings above the chunk, outermost first ("Guide > Install"); '' when none. */
  headingPath: string;
  text: string;
  /** sha256 of the text: the embedding cache key, so an unchanged chunk is never embedded twice. */
  hash: string;
}

/** Target size of a chunk in characters: small enough to rank precisely, large enough to keep context. */
export const CHUNK_CHARS = 1200;
/** Text files larger than this are not indexed (logs, dumps). */
export const MAX_INDEXED_BYTES = 2 * 1024 * 1024;

export const chunkHash = (text: string): string => createHash('sha256').update(text).digest('hex');

/** Markdown: split at headings (keeping the heading trail), then by size at paragraph breaks. */
export function chunkMarkdown(source: string): Chunk[] {
  const sections: { headings: string[]; lines: string[] }[] = [];
  const trail: string[] = [];
  let current = { headings: [] as string[], lines: [] as string[] };
  let fence = false;
  for (const line of source.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    const m = fence ? null : /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (m) {
      if (current.lines.some((l) => l.trim())) sections.push(current);
      const level = m[1]!.length;
      trail.length = Math.min(trail.length, level - 1);
      trail[level - 1] = m[2]!;
      current = { headings: trail.filter((h) => h !== undefined), lines: [line] };
    } else current.lines.push(line);
  }
  if (current.lines.some((l) => l.trim())) sections.push(current);
  // A heading alone (a title above its first subheading) is not a chunk: it is in the heading path of the next.
  const withBody = sections.filter((s) => s.lines.slice(s.headings.length ? 1 : 0).some((l) => l.trim()));
  const chunks: Chunk[] = [];
  for (const s of withBody.length ? withBody : sections) {
    for (const piece of splitBySize(s.lines.join('\n').trim(), CHUNK_CHARS)) push(chunks, s.headings.join(' > '), piece);
  }
  return chunks;
}

/** JSON: flattened to `pointer: value` lines (RFC 6901 pointers), then cut by size. */
export function chunkJson(value: unknown): Chunk[] {
  const lines: string[] = [];
  const walk = (v: unknown, pointer: string) => {
    if (v !== null && typeof v === 'object') {
      const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v as Record<string, unknown>);
      if (entries.length === 0) lines.push(`${pointer || '/'}: ${Array.isArray(v) ? '[]' : '{}'}`);
      for (const [k, x] of entries) walk(x, `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`);
    } else lines.push(`${pointer || '/'}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  };
  walk(value, '');
  const chunks: Chunk[] = [];
  for (const piece of splitBySize(lines.join('\n'), CHUNK_CHARS)) push(chunks, '', piece);
  return chunks;
}

/** Plain text files. */
export function chunkText(source: string): Chunk[] {
  const chunks: Chunk[] = [];
  for (const piece of splitBySize(source.trim(), CHUNK_CHARS)) push(chunks, '', piece);
  return chunks;
}

/** Bytes that look like text (UTF-8 without NUL bytes), or null. */
export function asText(bytes: Buffer): string | null {
  if (bytes.length > MAX_INDEXED_BYTES) return null;
  if (bytes.subarray(0, 8192).includes(0)) return null;
  const text = bytes.toString('utf8');
  // Many replacement characters: not UTF-8 (a binary or another encoding).
  let bad = 0;
  for (let i = 0; i < Math.min(text.length, 8192); i++) if (text.charCodeAt(i) === 0xfffd) bad++;
  return bad > 8 ? null : text;
}

function push(chunks: Chunk[], headingPath: string, text: string): void {
  if (!text.trim()) return;
  chunks.push({ index: chunks.length, headingPath, text, hash: chunkHash(text) });
}

/** Cuts text into pieces of at most `max` characters, preferring paragraph, then line, then word breaks. */
export function splitBySize(text: string, max: number): string[] {
  if (text.length <= max) return text ? [text] : [];
  const out: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const window = rest.slice(0, max);
    let cut = window.lastIndexOf('\n\n');
    if (cut < max / 3) cut = window.lastIndexOf('\n');
    if (cut < max / 3) cut = window.lastIndexOf(' ');
    if (cut < max / 3) cut = max;
    out.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trimStart();
  }
  if (rest.trim()) out.push(rest);
  return out.filter(Boolean);
}
