import type { Statement } from 'better-sqlite3';
import type { ProjectStats } from '../content/types.ts';
import type { Db } from '../db/database.ts';
import { normalizeScope, pathInScope } from '../policies/scope.ts';
import type { Changelog } from '../events/changelog.ts';
import { scopedCommit } from '../events/scopedChanges.ts';

/**
 * Dashboard figures as seen from a subtree (an access key's scope), following the changelog's
 * rule: what lies inside the scope and the commits that touched it, nothing of the rest (no
 * counts, messages or authors of commits outside it). Paths inside `s` are `s` itself and the
 * range [`s/`, `s0`) (ContentStore.figuresWithin); only the connections are read here.
 */
export class ScopedStats {
  private readonly s: Record<string, Statement>;

  constructor(
    db: Db,
    private readonly changelog: Changelog,
  ) {
    const p = (sql: string) => db.prepare(sql);
    this.s = {
      connections: p(`SELECT status, scope_path FROM connections WHERE project_id = ?`),
    };
  }

  stats(projectId: string, scope: string): ProjectStats {
    const sc = normalizeScope(scope);
    const f = this.changelog.figuresWithin(projectId, sc);
    let lastChange: ProjectStats['lastChange'] = null;
    if (f.lastCommit !== null) {
      const [commit] = this.changelog.commits(projectId, f.lastCommit - 1, 1);
      const visible = commit && scopedCommit(sc, commit);
      if (visible) {
        lastChange = { projectVersion: visible.projectVersion, commitId: visible.commitId, author: visible.actor.author, message: visible.message, at: visible.createdAt };
      }
    }
    return { nodesByType: f.nodesByType, trashedCount: f.trashedCount, trashBytes: f.trashBytes, commitCount: f.commitCount, lastChange };
  }

  /** Connections whose own scope lies inside `scope`, counted by status. */
  connectionCounts(projectId: string, scope: string): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.s.connections.all(projectId) as { status: string; scope_path: string }[]) {
      if (pathInScope(scope, r.scope_path)) out[r.status] = (out[r.status] ?? 0) + 1;
    }
    return out;
  }
}
