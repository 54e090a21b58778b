import { z } from 'zod';
import type { AuditLogEntry, ContentStore } from '../../content/contentStore.ts';
import { ok } from '../../http/envelope.ts';
import { validationError } from '../../http/errors.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import type { ContentAccess } from '../../policies/contentAccess.ts';
import { presentAuditLog } from '../../presenters/content.ts';
import { withItems } from '../../presenters/items.ts';
import { auditQuery, nodeAuditAnswer, projectAuditAnswer } from './schemas.ts';

/**
 * The audit trail: of a node (`/nodes/{path or node id}/audit-logs`; the segment may be a path
 * with slashes (path surface) or a node id (id surface); an id wins when one exists), and of a
 * whole project. Scoped keys see their subtree only, through the content-access policy.
 */
export function auditRoutes(s: AuditDeps): RouteGroup {
  /** The node a segment names by id when no project was named (then it must be one). */
  const located = (ref: string, projectId: string | undefined) => {
    if (projectId !== undefined) return null;
    const node = s.content.findById(ref);
    if (!node) throw validationError('project_id is required unless the path names a node id.', [{ field: 'project_id', message: 'required' }]);
    return node;
  };
  return {
    prefix: '',
    tag: 'Audit',
    routes: [
      route({
        method: 'get',
        path: '/nodes/*ref/audit-logs',
        summary: 'The audit trail of a node, by path or by node id',
        description: '`project_id` may be left out when the segment is a node id.',
        permission: 'content:read',
        authorize: { content: ({ params, query }) => query.project_id ?? located(params.ref, undefined)!.projectId },
        params: z.object({ ref: z.string().min(1) }),
        query: auditQuery,
        response: nodeAuditAnswer,
        handle(ctx, { params: { ref }, query: q, access: g }) {
          const projectId = g.projectId;
          const byId = located(ref, q.project_id) ?? findNodeById(s, projectId, ref);
          const path = byId?.path ?? ref;
          // The path is known only now (the segment may be an id): the finer check.
          s.access.requirePath(g, path);
          const logs = byId ? s.content.auditLogs(projectId, { id: byId.id }, { limit: q.limit }) : pathLogs(s, projectId, path, q.limit);
          ok(ctx, { path, node_id: byId?.id ?? logs[0]?.nodeId ?? null, ...withItems('logs', logs.map(presentAuditLog)), total: logs.length });
        },
      }),
      route({
        method: 'get',
        path: '/projects/:projectId/audit-logs',
        summary: "The project's audit trail, newest first (pushes included)",
        description: '`before` (an entry id, `next_before` of the previous page) pages back. A scoped key sees the entries of its subtree only.',
        permission: 'content:read',
        authorize: { content: ({ params }) => params.projectId },
        params: projectParams,
        query: projectAuditQuery,
        response: projectAuditAnswer,
        handle(ctx, { params: { projectId }, query: q, access: g }) {
          const page = s.content.projectAuditLogs(projectId, { limit: q.limit, before: q.before });
          const visible = (p: unknown) => typeof p === 'string' && p !== '' && s.access.mayPath(g, p);
          const logs = g.scope === '' ? page : page.filter((e) => visible(e.path) || visible(e.details.old_path));
          const nextBefore = page.length === q.limit ? page[page.length - 1]!.id : null;
          ok(ctx, { project_id: projectId, ...withItems('logs', logs.map(presentAuditLog)), total: logs.length, next_before: nextBefore });
        },
      }),
    ],
  };
}

/** What the audit trail reads: the content index and the policy's finer checks. */
export interface AuditDeps {
  content: ContentStore;
  access: ContentAccess;
}

const projectParams = z.object({ projectId: z.string().min(1).max(100) });
const projectAuditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  before: z.coerce.number().int().min(1).optional(),
});

/**
 * A path's audit trail: the entries recorded at the path, plus the entries of those nodes that
 * took them away from it (trash, move: recorded at the new path with `old_path` = this one).
 */
function pathLogs(s: AuditDeps, projectId: string, path: string, limit: number): AuditLogEntry[] {
  const here = s.content.auditLogs(projectId, { path }, { limit });
  const byId = new Map(here.map((e) => [e.id, e]));
  for (const nodeId of new Set(here.map((e) => e.nodeId).filter((id) => id !== ''))) {
    for (const e of s.content.auditLogs(projectId, { id: nodeId }, { limit })) {
      if (e.details.old_path === path) byId.set(e.id, e);
    }
  }
  return [...byId.values()].sort((a, b) => b.id - a.id).slice(0, limit);
}

function findNodeById(s: AuditDeps, projectId: string, id: string) {
  try {
    return s.content.getById(projectId, id);
  } catch (err) {
    if ((err as { code?: string }).code === 'NOT_FOUND') return null;
    throw err;
  }
}
