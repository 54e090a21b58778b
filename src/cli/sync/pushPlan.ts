import { joinPath } from '../../content/paths.ts';
import type { PushOp } from '../../sync/pushOps.ts';

/** What the folder's state last recorded of a tracked file (all the planner needs of it). */
export interface TrackedFile {
  localHash: string;
  version: number;
}

export interface PushPlanInput {
  /** The synced subtree's project path ('' for the whole project). */
  scope: string;
  /** Folder-relative paths the state tracks, as last synced. */
  tracked: Readonly<Record<string, TrackedFile>>;
  /**
   * The files in the folder now (ignored ones left out) with their content hash. A new file's
   * hash may be left out (hashing costs a read): it then never counts as the target of a move.
   */
  present: ReadonlyMap<string, string | undefined>;
  /** Tracked paths missing from `present` that are still on disk: ignored since, not deleted. */
  stillOnDisk: ReadonlySet<string>;
}

/** One push operation and the folder path it concerns (`from`: a move's old folder path). */
export interface PlannedOp {
  op: PushOp;
  rel: string;
  from?: string;
}

export interface PushPlan {
  /** Tracked paths to stop syncing (now ignored): the project keeps them. */
  untrack: string[];
  /** Deletes, then moves, then writes (edits, then creations); a write's content is filled in when it is sent. */
  ops: PlannedOp[];
}

/**
 * The folder's own changes since the last sync, as push operations. Pure: it decides from
 * hashes alone. A tracked file that is gone plus a new file with the same bytes is a move (the
 * node keeps its id); each change carries the version it was based on, so that the server can
 * refuse it if the project changed that file meanwhile.
 */
export function planPush({ scope, tracked, present, stillOnDisk }: PushPlanInput): PushPlan {
  const untrack: string[] = [];
  const deletes: string[] = [];
  const edits: string[] = [];
  for (const [rel, s] of Object.entries(tracked)) {
    if (!present.has(rel)) {
      if (stillOnDisk.has(rel)) untrack.push(rel);
      else deletes.push(rel);
    } else if (present.get(rel) !== s.localHash) {
      edits.push(rel);
    }
  }
  const creates = [...present.keys()].filter((rel) => !Object.hasOwn(tracked, rel));
  const moves: { from: string; to: string }[] = [];
  if (deletes.length > 0 && creates.length > 0) {
    const byHash = new Map<string, string[]>();
    for (const rel of creates) {
      const h = present.get(rel);
      if (h !== undefined) byHash.set(h, [...(byHash.get(h) ?? []), rel]);
    }
    for (let i = deletes.length - 1; i >= 0; i--) {
      const from = deletes[i]!;
      const to = byHash.get(tracked[from]!.localHash)?.shift();
      if (to === undefined) continue;
      moves.push({ from, to });
      deletes.splice(i, 1);
      creates.splice(creates.indexOf(to), 1);
    }
  }
  const path = (rel: string) => joinPath(scope, rel);
  const ops: PlannedOp[] = [
    ...deletes.map((rel): PlannedOp => ({ op: { action: 'delete', path: path(rel), base_version: tracked[rel]!.version }, rel })),
    ...moves.map((m): PlannedOp => ({ op: { action: 'move', from: path(m.from), path: path(m.to), base_version: tracked[m.from]!.version }, rel: m.to, from: m.from })),
    ...[...edits, ...creates].map((rel): PlannedOp => ({ op: { action: 'write', path: path(rel), content: '', base_version: Object.hasOwn(tracked, rel) ? tracked[rel]!.version : 0 }, rel })),
  ];
  return { untrack, ops };
}
