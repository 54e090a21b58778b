import diff3Merge from 'diff3';

/** One conflicting region; line numbers are 1-based positions in each of the three texts. */
export interface TextConflict {
  base: { start_line: number; lines: string[] };
  current: { start_line: number; lines: string[] };
  incoming: { start_line: number; lines: string[] };
}

export type TextMerge = { clean: true; merged: string } | { clean: false; conflicts: TextConflict[]; marked: string };

/**
 * Three-way line merge (diff3) of `incoming` (the client's text, written against `base`) into
 * `current`. Changes on one side only are taken; overlapping or adjacent changes that differ are
 * conflicts, and `marked` is the merge with git-style conflict markers around them.
 */
export function mergeText(base: string, current: string, incoming: string, labels: { base: string; current: string; incoming: string }): TextMerge {
  const blocks = diff3Merge(current.split('\n'), base.split('\n'), incoming.split('\n'));
  const out: string[] = [];
  const conflicts: TextConflict[] = [];
  for (const b of blocks) {
    if ('ok' in b) {
      out.push(...b.ok);
      continue;
    }
    const c = b.conflict;
    conflicts.push({
      base: { start_line: c.oIndex + 1, lines: c.o },
      current: { start_line: c.aIndex + 1, lines: c.a },
      incoming: { start_line: c.bIndex + 1, lines: c.b },
    });
    out.push(`<<<<<<< ${labels.current}`, ...c.a, `||||||| ${labels.base}`, ...c.o, '=======', ...c.b, `>>>>>>> ${labels.incoming}`);
  }
  return conflicts.length ? { clean: false, conflicts, marked: out.join('\n') } : { clean: true, merged: out.join('\n') };
}
