import diff3Merge from 'diff3';

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
 * Three-way line merge of the local and remote versions of a file against the version both had
 * at the last sync. Clean when the two sides changed different regions (or made the same change);
 * otherwise null, and the caller keeps both versions whole.
 */
export function mergeThreeWay(base: Buffer, local: Buffer, remote: Buffer): Buffer | null {
  const [o, a, b] = [asText(base), asText(local), asText(remote)];
  if (o === null || a === null || b === null) return null;
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
