import diff3Merge from 'diff3';
import { mergeJson } from '../../collab/jsonMerge.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Text we may merge line by line: valid UTF-8 without NUL bytes, at most 4 MiB. */
export function asText(bytes: Buffer): string | null {
  if (bytes.length > 4 * 1024 * 1024 || bytes.includes(0)) return null;
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Three-way merge of the local and remote versions of a file against the version both had
 * at the last sync. Clean when the two sides changed different regions (or made the same change);
 * otherwise null, and the caller keeps both versions whole.
 */
export function mergeThreeWay(base: Buffer, local: Buffer, remote: Buffer, options: { json?: boolean } = {}): Buffer | null {
  const [o, a, b] = [asText(base), asText(local), asText(remote)];
  if (o === null || a === null || b === null) return null;
  if (options.json) return mergeJsonText(o, a, b);
  const blocks = diff3Merge(a.split('\n'), o.split('\n'), b.split('\n'));
  const out: string[] = [];
  for (const block of blocks) {
    if ('ok' in block) {
      out.push(...block.ok);
      continue;
    }
    const { a: mine, b: theirs } = block.conflict;
    if (mine.length === theirs.length && mine.every((line, i) => line === theirs[i])) out.push(...mine);
    else return null;
  }
  return Buffer.from(out.join('\n'), 'utf8');
}

/**
 * JSON documents merge key by key (so edits to neighbouring keys do not collide, and the local
 * formatting does not matter); the result is written the way the server stores JSON.
 */
function mergeJsonText(base: string, local: string, remote: string): Buffer | null {
  let parsed: unknown[];
  try {
    parsed = [base, local, remote].map((t) => JSON.parse(t) as unknown);
  } catch {
    return null;
  }
  const m = mergeJson(parsed[0], parsed[2], parsed[1]);
  return m.clean ? Buffer.from(JSON.stringify(m.merged, null, 2) + '\n', 'utf8') : null;
}
