/** What one sync cycle did, for the human summary, `--json` and the run record. */
export interface CycleReport {
  cursor: number;
  runId: string | null;
  /** Written locally from the project. */
  downloaded: string[];
  /** Written to the project from the folder. */
  uploaded: string[];
  /** Removed locally because they were deleted in the project (kept in .cns/trash/). */
  deletedLocal: string[];
  /** Moved to the project's trash because they were deleted locally. */
  deletedRemote: string[];
  renamedLocal: { from: string; to: string }[];
  renamedRemote: { from: string; to: string }[];
  /** Changed on both sides and merged cleanly (the merge is on both sides). */
  merged: string[];
  /** Changed on both sides with overlapping edits: the project's version stays in place, the local one is kept beside it. */
  conflicts: { path: string; localCopy: string }[];
  /** Edited locally but deleted in the project: the edit is kept and uploaded again. */
  keptLocal: string[];
  errors: string[];
}

export function emptyReport(cursor: number): CycleReport {
  return {
    cursor,
    runId: null,
    downloaded: [],
    uploaded: [],
    deletedLocal: [],
    deletedRemote: [],
    renamedLocal: [],
    renamedRemote: [],
    merged: [],
    conflicts: [],
    keptLocal: [],
    errors: [],
  };
}

/** True when the cycle changed anything on either side. */
export function changedAnything(r: CycleReport): boolean {
  return (
    r.downloaded.length + r.uploaded.length + r.deletedLocal.length + r.deletedRemote.length + r.renamedLocal.length +
      r.renamedRemote.length + r.merged.length + r.conflicts.length + r.keptLocal.length >
    0
  );
}

/** One line per kind of change, e.g. `↑ 3 uploaded: a.md, b.md, c.md`. */
export function describeReport(r: CycleReport): string[] {
  const list = (xs: string[]) => (xs.length > 5 ? `${xs.slice(0, 5).join(', ')} … (+${xs.length - 5})` : xs.join(', '));
  const lines: string[] = [];
  if (r.uploaded.length) lines.push(`↑ ${r.uploaded.length} uploaded: ${list(r.uploaded)}`);
  if (r.downloaded.length) lines.push(`↓ ${r.downloaded.length} downloaded: ${list(r.downloaded)}`);
  if (r.renamedRemote.length) lines.push(`↑ ${r.renamedRemote.length} renamed in the project: ${list(r.renamedRemote.map((x) => `${x.from} → ${x.to}`))}`);
  if (r.renamedLocal.length) lines.push(`↓ ${r.renamedLocal.length} renamed here: ${list(r.renamedLocal.map((x) => `${x.from} → ${x.to}`))}`);
  if (r.deletedRemote.length) lines.push(`↑ ${r.deletedRemote.length} moved to the project's trash: ${list(r.deletedRemote)}`);
  if (r.deletedLocal.length) lines.push(`↓ ${r.deletedLocal.length} moved to .cns/trash/: ${list(r.deletedLocal)}`);
  if (r.merged.length) lines.push(`⇅ ${r.merged.length} merged: ${list(r.merged)}`);
  if (r.keptLocal.length) lines.push(`! ${r.keptLocal.length} deleted in the project but edited here, kept: ${list(r.keptLocal)}`);
  for (const c of r.conflicts) lines.push(`! conflict: ${c.path} (project version kept; yours saved as ${c.localCopy})`);
  for (const e of r.errors) lines.push(`✗ ${e}`);
  return lines;
}
