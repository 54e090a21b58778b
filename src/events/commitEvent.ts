import type { CommittedTip } from '../content/types.ts';

/**
 * What the change bus carries: a project's `main` moved. One event per acknowledged batch of
 * commits (API writes, syncs, agents, git pushes, repairs alike); what changed is read from the
 * changelog up to `seq`, so an event is small, and a lost or repeated one costs only a read.
 * Plain data only: transports that cross processes and machines serialize it as JSON.
 */
export interface CommitEvent {
  /** The project id. */
  project: string;
  /** The commit now at the tip of `main` (null only if the project's history was emptied). */
  commit: string | null;
  /** The project's commit number at that tip: the changelog cursor this event reaches. */
  seq: number;
  /** When the event was published (ISO 8601). */
  at: string;
}

/** The event for where the content store says `main` now stands. */
export function commitEventOf(tip: CommittedTip, at = new Date()): CommitEvent {
  return { project: tip.projectId, commit: tip.commitId, seq: tip.projectVersion, at: at.toISOString() };
}
