import type { Changelog, CommitChanges } from '../events/changelog.ts';
import { scopedCommit } from '../events/scopedChanges.ts';
import type { ContentGrant } from '../policies/contentAccess.ts';
import { historyScope } from './historyScope.ts';

export interface ProjectCommits {
  currentVersion: number;
  /** Newest first, each with the changes inside the scope. */
  commits: CommitChanges[];
  /** Pass back as `before` for the next page; null when this page reached the first commit. */
  nextBefore: number | null;
}

/**
 * A project's commits before `before` (exclusive; default: all), newest first, `limit` at most,
 * as seen from the grant's scope (or the folder `within` it): commits that changed nothing there
 * are skipped, the others show only what changed there.
 */
export function listProjectCommits(
  d: { changelog: Pick<Changelog, 'latest' | 'commits'> },
  g: ContentGrant,
  options: { limit: number; before?: number; within?: string },
): ProjectCommits {
  const scope = historyScope(g, options.within);
  const current = d.changelog.latest(g.projectId);
  const upTo = Math.min(current, (options.before ?? current + 1) - 1);
  const commits: CommitChanges[] = [];
  // Scoped callers skip invisible commits, so read in windows until the page is full.
  let high = upTo;
  while (high > 0 && commits.length < options.limit) {
    const low = Math.max(0, high - Math.max(options.limit, 100));
    const window = d.changelog.commits(g.projectId, low, high - low).reverse();
    for (const c of window) {
      const visible = scopedCommit(scope, c);
      if (visible) commits.push(visible);
      if (commits.length === options.limit) break;
    }
    high = low;
  }
  const last = commits[commits.length - 1];
  return { currentVersion: current, commits, nextBefore: last && commits.length === options.limit && last.projectVersion > 1 ? last.projectVersion : null };
}

/**
 * The first `limit` commits after `since` (the oldest such), newest first, as seen from the
 * grant's scope: PuppyOne's project history (`since_version`), paged forward by passing the
 * newest version back as `since`.
 */
export function listProjectCommitsSince(
  d: { changelog: Pick<Changelog, 'latest' | 'commits'> },
  g: ContentGrant,
  options: { limit: number; since: number },
): { currentVersion: number; commits: CommitChanges[] } {
  const scope = historyScope(g, undefined);
  const current = d.changelog.latest(g.projectId);
  const commits: CommitChanges[] = [];
  let cursor = options.since;
  while (cursor < current && commits.length < options.limit) {
    const window = d.changelog.commits(g.projectId, cursor, Math.max(options.limit, 100));
    if (window.length === 0) break;
    for (const c of window) {
      const visible = scopedCommit(scope, c);
      if (visible) commits.push(visible);
      if (commits.length === options.limit) break;
    }
    cursor = window[window.length - 1]!.projectVersion;
  }
  return { currentVersion: current, commits: commits.reverse() };
}
