import type { Statement } from 'better-sqlite3';
import type { ProjectStats } from '../content/types.ts';
import type { Db } from '../db/database.ts';
import { normalizeScope, pathInScope } from '../policies/scope.ts';
import type { Changelog } from './changelog.ts';
import { scopedCommit } from './scopedChanges.ts';

const PV = `json_extract(details, '$.project_version')`;

/**
 * Dashboard figures as seen from a subtree (an access key's scope), following the changelog's
 * rule: what lies inside the scope and the commits that touched it, nothing of the rest (no
 * counts, messages or authors of commits outside it). Paths inside `s` are `s` itself and the
 * range [`s/`, `s0`) ('0' follows '/'), so every query walks the (project_id, path) indexes.
 */
export class ScopedStats {
  private readonly s: Record<string, Statement>;

  constructor(
    db: Db,
    private readonly changelog: Changelog,
  ) {
    const p = (sql: string) => db.prepare(sql);
    const inRange = (col: string) => `(${col} = @scope OR (${col} >= @lo AND ${col} < @hi))`;
    this.s = {
      counts: p(`SELECT type, COUNT(*) AS n FROM nodes WHERE project_id = @project AND state = 'active' AND ${inRange('path')} GROUP BY type`),
      trash: p(
        `SELECT COUNT(*) AS n, COALESCE(SUM(size), 0) AS bytes FROM nodes
         WHERE project_id = @project AND state = 'trashed' AND ${inRange('original_path')}`,
      ),
      // Commits with a change inside the scope: at a path inside it, or trashed from inside it.
      commits: p(
        `SELECT COUNT(*) AS n, MAX(pv) AS last FROM (
           SELECT ${PV} AS pv FROM content_audit_log WHERE project_id = @project AND node_id <> '' AND ${inRange('path')}
           UNION
           SELECT ${PV} FROM content_audit_log WHERE project_id = @project AND node_id <> '' AND path >= '.trash/' AND path < '.trash0'
             AND ${inRange(`json_extract(details, '$.old_path')`)}
         )`,
      ),
      connections: p(`SELECT status, scope_path FROM connections WHERE project_id = ?`),
    };
  }

  stats(projectId: string, scope: string): ProjectStats {
    const sc = normalizeScope(scope);
    const args = { project: projectId, scope: sc, lo: `${sc}/`, hi: `${sc}0` };
    const nodesByType: ProjectStats['nodesByType'] = { folder: 0, json: 0, markdown: 0, file: 0 };
    for (const r of this.s.counts.all(args) as { type: keyof typeof nodesByType; n: number }[]) nodesByType[r.type] = r.n;
    const t = this.s.trash.get(args) as { n: number; bytes: number };
    const c = this.s.commits.get(args) as { n: number; last: number | null };
    let lastChange: ProjectStats['lastChange'] = null;
    if (c.last !== null) {
      const [commit] = this.changelog.commits(projectId, c.last - 1, 1);
      const visible = commit && scopedCommit(sc, commit);
      if (visible) {
        lastChange = { projectVersion: visible.projectVersion, commitId: visible.commitId, author: visible.actor.author, message: visible.message, at: visible.createdAt };
      }
    }
    return { nodesByType, trashedCount: t.n, trashBytes: t.bytes, commitCount: c.n, lastChange };
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
