/** One line of one side: its number in that version and its text; `changed` when it differs. */
export interface Side {
  n: number;
  text: string;
  changed: boolean;
}

/** A row of the side-by-side view: a hunk header, or a line of each version (either may be absent). */
export type Row = { hunk: string } | { left: Side | null; right: Side | null };

/**
 * The rows of a side-by-side view, read from a unified diff (as GET …/diff answers it): context
 * lines on both sides, removed lines on the left facing the lines added in their place.
 */
export function sideBySideRows(unified: string): Row[] {
  const rows: Row[] = [];
  let removed: string[] = [];
  let added: string[] = [];
  let left = 0;
  let right = 0;
  const flush = () => {
    for (let i = 0; i < Math.max(removed.length, added.length); i++) {
      rows.push({
        left: i < removed.length ? { n: left++, text: removed[i]!, changed: true } : null,
        right: i < added.length ? { n: right++, text: added[i]!, changed: true } : null,
      });
    }
    removed = [];
    added = [];
  };
  let inHunk = false;
  for (const line of unified.split('\n')) {
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) {
      flush();
      left = Number(hunk[1]) || 1;
      right = Number(hunk[2]) || 1;
      rows.push({ hunk: line });
      inHunk = true;
    } else if (!inHunk || line.startsWith('\\')) {
      continue; // the file headers, and "\ No newline at end of file"
    } else if (line.startsWith('-')) {
      removed.push(line.slice(1));
    } else if (line.startsWith('+')) {
      added.push(line.slice(1));
    } else if (line.startsWith(' ')) {
      flush();
      rows.push({ left: { n: left++, text: line.slice(1), changed: false }, right: { n: right++, text: line.slice(1), changed: false } });
    }
  }
  flush();
  return rows;
}
