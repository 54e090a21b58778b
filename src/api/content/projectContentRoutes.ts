import { z } from 'zod';
import type { ContentStore } from '../../content/contentStore.ts';
import type { Db } from '../../db/database.ts';
import type { AccessConnectionStore } from '../../domain/connections/accessConnectionStore.ts';
import { sampleContent } from '../../domain/projects/sampleContent.ts';
import type { Changelog } from '../../events/changelog.ts';
import { ok } from '../../http/envelope.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { pathInScope } from '../../policies/scope.ts';
import { nodePresenter } from '../../presenters/idPaths.ts';
import { entrySchema } from '../../presenters/node.ts';
import { ScopedStats } from '../../sync/scopedStats.ts';
import type { SyncService } from '../../platform/syncService.ts';
import { projectParams } from './schemas.ts';

/** What the project's content views read: the content and its figures, the connections and syncs they count. */
export interface ProjectContentDeps {
  db: Db;
  content: ContentStore;
  changelog: Changelog;
  connections: Pick<AccessConnectionStore, 'countByStatus' | 'statusesAndScopes'>;
  syncs: Pick<SyncService, 'list'>;
}

/** Project-level views of the content: the dashboard and the sample-content seed. */
export function projectContentRoutes(s: ProjectContentDeps): RouteGroup {
  const scopedStats = new ScopedStats(s.connections, s.changelog);
  const routes = [
    route({
      method: 'get',
      path: '/dashboard',
      summary: "The project's figures: nodes, trash, commits, last change, connections, sync progress",
      description: 'A key scoped to a subtree sees the figures of that subtree only.',
      permission: 'project:read',
      authorize: { project: ({ params }) => params.projectId },
      params: projectParams,
      response: dashboardAnswer,
      async handle(ctx, { params: { projectId }, access }) {
        // A key scoped to a subtree sees the figures of that subtree only, as in the changelog.
        const scoped = access.scope !== '';
        const syncs = (await s.syncs.list(projectId)).filter((x) => !scoped || pathInScope(access.scope, x.connection.scope_path));
        const stats = scoped ? scopedStats.stats(projectId, access.scope) : s.content.stats(projectId);
        const projectVersion = s.content.projectVersion(projectId);
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
          connections: scoped ? await scopedStats.connectionCounts(projectId, access.scope) : await s.connections.countByStatus(projectId),
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
      },
    }),

    /** Idempotent: only sample files that are missing are written (one commit), so edits are never overwritten. */
    route({
      method: 'post',
      path: '/seed',
      summary: 'Write the sample content that is missing (idempotent, one commit)',
      permission: 'content:write',
      // The sample content lands across the project: a key must reach all of it.
      authorize: { content: ({ params }) => params.projectId, paths: () => [''] },
      params: projectParams,
      response: seedAnswer,
      async handle(ctx, { params: { projectId }, access }) {
        const result = await s.content.seed(projectId, access.actor, sampleContent, { message: 'seed sample content' });
        const present = nodePresenter(s.content, 'path');
        if (!result.changed) {
          ok(ctx, { changed: false, created: [] }, 'Sample content already present');
          return;
        }
        ok(ctx, { changed: result.changed, created: result.nodes.filter((n) => n.type !== 'folder').map((n) => present.node(n)), project_version: result.projectVersion }, 'Sample content created');
      },
    }),
  ];
  return { prefix: '/projects/:projectId', tag: 'Projects', routes };
}

const int = z.number().int();
const dashboardAnswer = z.object({
  project: z.object({ id: z.string(), name: z.string(), org_id: z.string() }),
  nodes: z.record(z.string(), int).describe('count per node type, and total'),
  trash: z.object({ count: int, bytes: int }),
  commits: int,
  last_change: z.object({ project_version: int, commit_id: z.string(), author: z.string(), message: z.string().nullable(), at: z.string() }).nullable(),
  connections: z.record(z.string(), int).describe('count per status'),
  sync: z.object({
    syncs: int,
    active: int,
    behind: int,
    items: z.array(z.object({ sync_id: z.string(), provider: z.string(), status: z.string(), acked_version: int, commits_behind: int, last_run_at: z.string().nullable() })),
  }),
});
const seedAnswer = z.object({ changed: z.boolean(), created: z.array(entrySchema), project_version: int.optional() });
