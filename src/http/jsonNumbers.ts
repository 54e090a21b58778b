/**
 * Finds the first number literal of a JSON text that JSON.parse would silently change: one that
 * overflows to Infinity (`1e400`), underflows to 0 (`1e-400`), or an integer literal beyond
 * 2^53 (`9007199254740993` becomes ...992). Returns its field path (`files.3.content.n`) and
 * literal, or null. The text must already be valid JSON (JSON.parse accepted it).
 */
export function findLossyNumber(text: string): { field: string; literal: string } | null {
  // Fast path: every lossy literal has 16+ digits in a row or a 3-digit exponent.
  if (!/\d{16}|[eE][+-]?\d{3}/.test(text)) return null;
  const path: (string | number)[] = [];
  /** Per open container: is it an array (then path's last item is the index)? */
  const arrays: boolean[] = [];
  let expectKey = false;
  let i = 0;
  const n = text.length;
  const readString = (): string => {
    const start = i;
    i++;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 92) i += 2;
      else if (c === 34) break;
      else i++;
    }
    i++;
    return text.slice(start, i);
  };
  while (i < n) {
    const c = text[i];
    if (c === '"') {
      const raw = readString();
      if (expectKey) {
        path[path.length - 1] = JSON.parse(raw) as string;
        expectKey = false;
      }
    } else if (c === '{') {
      arrays.push(false);
      path.push('');
      expectKey = true;
      i++;
    } else if (c === '[') {
      arrays.push(true);
      path.push(0);
      i++;
    } else if (c === '}' || c === ']') {
      arrays.pop();
      path.pop();
      i++;
    } else if (c === ',') {
      if (arrays[arrays.length - 1]) (path[path.length - 1] as number)++;
      else expectKey = true;
      i++;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      const start = i;
      while (i < n && /[-+0-9.eE]/.test(text[i])) i++;
      const literal = text.slice(start, i);
      if (isLossyNumber(literal)) return { field: path.length ? path.join('.') : 'body', literal };
    } else {
      i++;
    }
  }
  return null;
}

/** A number literal JSON.parse would change: overflow, underflow to 0, or an integer beyond 2^53. */
export function isLossyNumber(literal: string): boolean {
  const v = Number(literal);
  if (!Number.isFinite(v)) return true;
  if (v === 0 && /[1-9]/.test(literal.replace(/[eE].*$/, ''))) return true;
  if (/^-?\d+$/.test(literal) && !Number.isSafeInteger(v)) return true;
  return false;
}
