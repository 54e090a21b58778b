import type { ContentStore } from '../content/contentStore.ts';
import type { ChangeActor, ChangeEntry, CommitInfo, ScopeFigures } from '../content/types.ts';

export type { ChangeActor, ChangeEntry } from '../content/types.ts';

/**
 * Who made a change as the changelog and the feed show it: the actor (`author` is its identity)
 * and, for a pushed commit that names someone else, that claimed author as `authored_by`.
 */
export function presentActor(a: ChangeActor): { type: ChangeActor['type']; id: string; author: string; authored_by: string | null } {
  return { type: a.type, id: a.id, author: a.author, authored_by: a.commitAuthor ?? null };
}

/** One project commit and every node it changed. */
export interface CommitChanges extends CommitInfo {
  changes: ChangeEntry[];
}

export interface ChangelogPage {
  entries: ChangeEntry[];
  /** Pass back as `cursor` to continue: the commit number of the last entry given. */
  cursor: number;
  hasMore: boolean;
}

/**
 * Every change of a project after a cursor (a project commit number), from any source: API,
 * git push, sync. The rows come from the content store (its audit entries, which keep
 * permanent deletes too; see ChangeIndex); this class pages them by whole commits.
 */
export class Changelog {
  constructor(private readonly content: ContentStore) {}

  /** The project's last commit number (0 before the first): ContentStore.projectVersion. */
  latest(projectId: string): number {
    return this.content.projectVersion(projectId);
  }

  /**
   * Entries of commits after `cursor`, whole commits only so that the returned cursor is exact:
   * about `limit` entries, more when a single commit is larger.
   */
  page(projectId: string, cursor: number, limit: number): ChangelogPage {
    const rows = this.content.changesAfter(projectId, cursor, limit + 1);
    if (rows.length <= limit) {
      return { entries: rows, cursor: rows.length ? rows[rows.length - 1]!.projectVersion : cursor, hasMore: false };
    }
    const boundary = rows[limit]!.projectVersion;
    const kept = rows.filter((r) => r.projectVersion < boundary);
    if (kept.length > 0) return { entries: kept, cursor: kept[kept.length - 1]!.projectVersion, hasMore: true };
    // One commit holds more than `limit` entries: give it whole.
    const whole = this.content.changesBetween(projectId, boundary - 1, boundary);
    const more = this.content.changesAfter(projectId, boundary, 1).length > 0;
    return { entries: whole, cursor: boundary, hasMore: more };
  }

  /** Up to `max` commits after `cursor` with their changes (the live feed's events). */
  commits(projectId: string, cursor: number, max: number): CommitChanges[] {
    const commits = this.content.commitsAfter(projectId, cursor, max);
    if (commits.length === 0) return [];
    const last = commits[commits.length - 1]!.projectVersion;
    const byPv = new Map<number, ChangeEntry[]>();
    for (const e of this.content.changesBetween(projectId, cursor, last)) {
      const list = byPv.get(e.projectVersion) ?? [];
      list.push(e);
      byPv.set(e.projectVersion, list);
    }
    return commits.map((c) => ({ ...c, changes: byPv.get(c.projectVersion) ?? [] }));
  }

  /** Entries of the commits in (`after`, `upTo`]. */
  between(projectId: string, after: number, upTo: number): ChangeEntry[] {
    return this.content.changesBetween(projectId, after, upTo);
  }

  /** Figures of a subtree (ScopedStats). */
  figuresWithin(projectId: string, scope: string): ScopeFigures {
    return this.content.figuresWithin(projectId, scope);
  }
}
