import { z } from 'zod';
import { actorOf } from '../../auth/principal.ts';
import type { ContentStore } from '../../content/contentStore.ts';
import { ok } from '../../http/envelope.ts';
import { forbidden } from '../../http/errors.ts';
import { route, type RouteDeclaration } from '../../http/routes/declaration.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import { projectParams } from './schemas.ts';

const purgeBody = z.object({ path: z.string().min(1).max(4096) });
const purgeAnswer = z.object({
  path: z.string(),
  before: z.string().describe('the tip of main before the rewrite'),
  after: z.string().describe('the tip of main after it'),
  commits_rewritten: z.number().int(),
  removed_node_ids: z.array(z.string()),
});

export interface ProjectPurgeDeps {
  authorizer: Pick<Authorizer, 'requireUser' | 'orgRole'>;
  content: Pick<ContentStore, 'purge'>;
}

/**
 * `POST /projects/{id}/purge {path}`: removes a path from the project's whole git history
 * (ContentStore.purge). Organization owners and admins only: it rewrites history for everyone.
 */
export function projectPurgeRoute(s: ProjectPurgeDeps): RouteDeclaration {
  return route({
    method: 'post',
    path: '/:project_id/purge',
    summary: "Remove a path from the project's whole history",
    description:
      'Organization owners and admins only (a user seeing the project, then the owner or admin role in its organization). ' +
      'Every clone must be cloned again afterwards: pushes built on the old history are refused.',
    permission: 'project:read',
    authorize: { project: ({ params }) => params.project_id },
    params: projectParams,
    body: purgeBody,
    response: purgeAnswer,
    async handle(ctx, { body, access: { principal, project } }) {
      // Beyond seeing the project: a user holding the owner or admin role of its organization.
      const user = s.authorizer.requireUser(principal);
      const role = await s.authorizer.orgRole(user.id, project.org_id);
      if (role !== 'owner' && role !== 'admin') throw forbidden('Purging history needs the owner or admin role in the organization.');
      const r = await s.content.purge(project.id, actorOf(principal), body.path);
      ok(
        ctx,
        { path: r.path, before: r.before, after: r.after, commits_rewritten: r.commitsRewritten, removed_node_ids: r.nodes },
        'Purged from the whole history. Every clone must be cloned again: pushes built on the old history are refused.',
      );
    },
  });
}
