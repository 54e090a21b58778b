/** A run of old blocks [oldStart, oldEnd) replaced by new blocks [newStart, newEnd) (either may be empty). */
export interface Hunk {
  oldStart: number;
  oldEnd: number;
  newStart: number;
  newEnd: number;
}

/** Past this many cells the middle is treated as one change rather than compared block by block. */
const MAX_CELLS = 4_000_000;

/**
 * Where two sequences of block keys differ: a longest common subsequence keeps every block it
 * can, and each maximal run of the others is one hunk. The common start and end are trimmed
 * first (an edit usually touches a few blocks of a long document).
 */
export function diffKeys(a: string[], b: string[]): Hunk[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const x = a.slice(pre, a.length - suf);
  const y = b.slice(pre, b.length - suf);
  if (x.length === 0 && y.length === 0) return [];
  if (x.length * y.length > MAX_CELLS || x.length === 0 || y.length === 0) {
    return [{ oldStart: pre, oldEnd: pre + x.length, newStart: pre, newEnd: pre + y.length }];
  }
  // lcs[i][j]: the longest common subsequence of x[i..] and y[j..].
  const w = y.length + 1;
  const lcs = new Int32Array((x.length + 1) * w);
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) {
      lcs[i * w + j] = x[i] === y[j] ? lcs[(i + 1) * w + j + 1] + 1 : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
    }
  }
  const hunks: Hunk[] = [];
  let i = 0;
  let j = 0;
  let open: Hunk | null = null;
  const close = () => {
    if (open) hunks.push(open);
    open = null;
  };
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      close();
      i++;
      j++;
      continue;
    }
    open ??= { oldStart: pre + i, oldEnd: pre + i, newStart: pre + j, newEnd: pre + j };
    if (j < y.length && (i === x.length || lcs[i * w + j + 1] >= lcs[(i + 1) * w + j])) {
      j++;
      open.newEnd = pre + j;
    } else {
      i++;
      open.oldEnd = pre + i;
    }
  }
  close();
  return hunks;
}
