import Router from '@koa/router';
import { z } from 'zod';
import { actorOf } from '../../auth/principal.ts';
import type { Services } from '../../app/services.ts';
import { ok } from '../../http/envelope.ts';
import { forbidden } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { parseInput } from '../../http/validate.ts';

const purgeBody = z.object({ path: z.string().min(1).max(4096) });

/**
 * `POST /projects/{id}/purge {path}`: removes a path from the project's whole git history
 * (ContentStore.purge). Organization owners and admins only: it rewrites history for everyone.
 */
export function projectPurgeRoutes(s: Services): Router {
  const router = new Router();
  router.post('/projects/:project_id/purge', async (ctx) => {
    const principal = principalOf(ctx);
    const { project } = s.authorizer.requireProject(principal, ctx.params.project_id, 'project:read');
    const user = s.authorizer.requireUser(principal);
    const role = s.authorizer.orgRole(user.id, project.org_id);
    if (role !== 'owner' && role !== 'admin') throw forbidden('Purging history needs the owner or admin role in the organization.');
    const body = parseInput(purgeBody, ctx.request.body, 'body');
    const r = await s.content.purge(project.id, actorOf(principal), body.path);
    ok(
      ctx,
      { path: r.path, before: r.before, after: r.after, commits_rewritten: r.commitsRewritten, removed_node_ids: r.nodes },
      'Purged from the whole history. Every clone must be cloned again: pushes built on the old history are refused.',
    );
  });
  return router;
}
