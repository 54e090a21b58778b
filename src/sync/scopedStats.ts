import type { ProjectStats } from '../content/types.ts';
import type { AccessConnectionStore } from '../domain/connections/accessConnectionStore.ts';
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
  constructor(
    private readonly connections: Pick<AccessConnectionStore, 'statusesAndScopes'>,
    private readonly changelog: Changelog,
  ) {}

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
  async connectionCounts(projectId: string, scope: string): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const r of await this.connections.statusesAndScopes(projectId)) {
      if (pathInScope(scope, r.scope_path)) out[r.status] = (out[r.status] ?? 0) + 1;
    }
    return out;
  }
}
