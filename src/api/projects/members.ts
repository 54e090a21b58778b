import Router from '@koa/router';
import type { Services } from '../../app/services.ts';
import { created, ok } from '../../http/envelope.ts';
import { validationError } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo, paginationQuery } from '../../http/pagination.ts';
import { parseInput } from '../../http/validate.ts';
import { presentProjectMember } from '../presenters/project.ts';
import { addProjectMemberBody, projectRoleBody } from './schemas.ts';

/** Project members: everyone with a role, inherited from the organization or explicit. */
export function projectMemberRoutes(s: Services): Router {
  const router = new Router();

  router.get('/projects/:project_id/members', (ctx) => {
    const principal = s.authorizer.requireUser(principalOf(ctx));
    const { project } = s.authorizer.requireProject(principal, ctx.params.project_id, 'project:read');
    const page = parseInput(paginationQuery, ctx.query, 'query');
    const { items, total } = s.projectMembers.list(project, page);
    ok(ctx, { members: items.map(presentProjectMember), ...pageInfo(total, page) });
  });

  router.post('/projects/:project_id/members', (ctx) => {
    const { project } = s.authorizer.requireProject(principalOf(ctx), ctx.params.project_id, 'members:manage');
    const body = parseInput(addProjectMemberBody, ctx.request.body, 'body');
    const user = body.user_id ? s.users.findById(body.user_id) : s.users.findByEmail(body.email!);
    if (!user) {
      const field = body.user_id ? 'user_id' : 'email';
      throw validationError('No user has this id or email; they need an account first.', [{ field, message: 'no such user' }]);
    }
    created(ctx, presentProjectMember(s.projectMembers.add(project, user.id, body.role)), 'Member added');
  });

  router.put('/projects/:project_id/members/:user_id/role', (ctx) => {
    const { project } = s.authorizer.requireProject(principalOf(ctx), ctx.params.project_id, 'members:manage');
    const body = parseInput(projectRoleBody, ctx.request.body, 'body');
    ok(ctx, presentProjectMember(s.projectMembers.setRole(project, ctx.params.user_id, body.role)), 'Role changed');
  });

  router.delete('/projects/:project_id/members/:user_id', (ctx) => {
    const { project } = s.authorizer.requireProject(principalOf(ctx), ctx.params.project_id, 'members:manage');
    s.projectMembers.remove(project, ctx.params.user_id);
    ok(ctx, { project_id: project.id, user_id: ctx.params.user_id, removed: true }, 'Member removed');
  });

  return router;
}
