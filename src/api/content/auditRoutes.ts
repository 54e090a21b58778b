import Router from '@koa/router';
import type { Services } from '../../app/services.ts';
import { ok } from '../../http/envelope.ts';
import { forbidden, validationError } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { parseInput } from '../../http/validate.ts';
import { pathInScope } from '../../policies/scope.ts';
import { presentAuditLog } from './presenter.ts';
import { auditQuery } from './schemas.ts';

/**
 * GET /nodes/{path or node id}/audit-logs?project_id=: the audit trail of a node. The segment
 * may be a path with slashes (path surface) or a node id (id surface); an id wins when one exists.
 */
export function auditRoutes(s: Services): Router {
  const router = new Router();
  router.get('/nodes/*ref/audit-logs', (ctx) => {
    const q = parseInput(auditQuery, ctx.query, 'query');
    const ref = String(ctx.params.ref ?? '');
    const located = q.project_id === undefined ? s.content.findById(ref) : null;
    if (q.project_id === undefined && !located) throw validationError('project_id is required unless the path names a node id.', [{ field: 'project_id', message: 'required' }]);
    const projectId = q.project_id ?? located!.projectId;
    const access = s.authorizer.requireProject(principalOf(ctx), projectId, 'content:read');
    const byId = located ?? findNodeById(s, projectId, ref);
    const path = byId?.path ?? ref;
    if (!pathInScope(access.scope, path)) throw forbidden(`This access key is limited to "${access.scope}".`);
    const logs = byId ? s.content.auditLogs(projectId, { id: byId.id }, { limit: q.limit }) : s.content.auditLogs(projectId, { path }, { limit: q.limit });
    ok(ctx, { path, node_id: byId?.id ?? logs[0]?.nodeId ?? null, logs: logs.map(presentAuditLog), total: logs.length });
  });
  return router;
}

function findNodeById(s: Services, projectId: string, id: string) {
  try {
    return s.content.getById(projectId, id);
  } catch (err) {
    if ((err as { code?: string }).code === 'NOT_FOUND') return null;
    throw err;
  }
}
