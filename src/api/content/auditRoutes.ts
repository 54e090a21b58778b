import Router from '@koa/router';
import type { Services } from '../../app/services.ts';
import { ok } from '../../http/envelope.ts';
import { forbidden } from '../../http/errors.ts';
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
    const access = s.authorizer.requireProject(principalOf(ctx), q.project_id, 'content:read');
    const byId = findNodeById(s, q.project_id, ref);
    const path = byId?.path ?? ref;
    if (!pathInScope(access.scope, path)) throw forbidden(`This access key is limited to "${access.scope}".`);
    const logs = byId ? s.content.auditLogs(q.project_id, { id: byId.id }, { limit: q.limit }) : s.content.auditLogs(q.project_id, { path }, { limit: q.limit });
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
