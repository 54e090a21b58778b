import Router from '@koa/router';
import type { Services } from '../../app/services.ts';
import { actorOf } from '../../auth/principal.ts';
import { sampleContent } from '../../domain/projects/sampleContent.ts';
import { ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { parseInput } from '../../http/validate.ts';
import { pathInScope } from '../../policies/scope.ts';
import { ScopedStats } from '../../sync/scopedStats.ts';
import { presentEntry } from '../presenters/content.ts';
import { projectParams } from './schemas.ts';

/** Project-level views of the content: the dashboard and the sample-content seed. */
export function projectContentRoutes(s: Services): Router {
  const router = new Router({ prefix: '/projects/:projectId' });
  const scopedStats = new ScopedStats(s.db, s.changelog);

  router.get('/dashboard', (ctx) => {
    const { projectId } = parseInput(projectParams, ctx.params, 'params');
    const access = s.authorizer.requireProject(principalOf(ctx), projectId, 'project:read');
    // A key limited to a subtree sees the figures of that subtree only, as in the changelog.
    const scoped = access.scope !== '';
    const stats = scoped ? scopedStats.stats(projectId, access.scope) : s.content.stats(projectId);
    const projectVersion = s.content.projectVersion(projectId);
    const syncs = s.syncs.list(projectId).filter((x) => !scoped || pathInScope(access.scope, x.connection.scope_path));
    ok(ctx, {
      project: { id: access.project.id, name: access.project.name, org_id: access.project.org_id },
      nodes: { ...stats.nodesByType, total: Object.values(stats.nodesByType).reduce((a, b) => a + b, 0) },
      trash: { count: stats.trashedCount, bytes: stats.trashBytes },
      commits: stats.commitCount,
      last_change: stats.lastChange && {
        project_version: stats.lastChange.projectVersion,
        commit_id: stats.lastChange.commitId,
        author: stats.lastChange.author,
        message: stats.lastChange.message,
        at: stats.lastChange.at,
      },
      connections: scoped ? scopedStats.connectionCounts(projectId, access.scope) : s.connections.countByStatus(projectId),
      // Sync progress: how far each sync's client has confirmed the project's commits.
      sync: {
        syncs: syncs.length,
        active: syncs.filter((x) => x.state.status === 'active').length,
        behind: syncs.filter((x) => x.state.acked_cursor < projectVersion).length,
        items: syncs.map((x) => ({
          sync_id: x.state.sync_id,
          provider: x.state.provider,
          status: x.state.status,
          acked_version: x.state.acked_cursor,
          commits_behind: Math.max(0, projectVersion - x.state.acked_cursor),
          last_run_at: x.state.last_run_at,
        })),
      },
    });
  });

  /** Idempotent: only sample files that are missing are written (one commit), so edits are never overwritten. */
  router.post('/seed', async (ctx) => {
    const { projectId } = parseInput(projectParams, ctx.params, 'params');
    const principal = principalOf(ctx);
    s.authorizer.requireProject(principal, projectId, 'content:write', '');
    const missing = sampleContent.filter((f) => s.content.findByPath(projectId, f.path) === null);
    if (missing.length === 0) {
      ok(ctx, { changed: false, created: [] }, 'Sample content already present');
      return;
    }
    const result = await s.content.bulkWrite(projectId, actorOf(principal), missing, { message: 'seed sample content' });
    ok(ctx, { changed: result.changed, created: result.nodes.filter((n) => n.type !== 'folder').map(presentEntry), project_version: result.projectVersion }, 'Sample content created');
  });

  return router;
}
