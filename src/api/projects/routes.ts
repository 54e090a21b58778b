import Router from '@koa/router';
import type { Services } from '../../app/services.ts';
import { created, ok } from '../../http/envelope.ts';
import { notFound } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo } from '../../http/pagination.ts';
import { parseInput } from '../../http/validate.ts';
import { projectMemberRoutes } from './members.ts';
import { projectPurgeRoutes } from './purge.ts';
import { presentProject } from '../presenters/project.ts';
import { createProjectBody, listProjectsQuery, updateProjectBody } from './schemas.ts';

/** Projects (spec 4.4): list, CRUD; members in members.ts. */
export function projectRoutes(s: Services): Router {
  const router = new Router();

  router.get('/projects', (ctx) => {
    const principal = principalOf(ctx);
    const query = parseInput(listProjectsQuery, ctx.query, 'query');
    if (principal.kind === 'key') {
      // A key reaches exactly one project: the list is that project, filtered like any other.
      const project = s.projects.find(principal.connection.project_id);
      const items = project && (!query.org_id || project.org_id === query.org_id) ? [project] : [];
      const window = items.slice(query.offset, query.offset + query.limit);
      ok(ctx, { projects: window.map((p) => presentProject(p, null)), ...pageInfo(items.length, query) });
      return;
    }
    const { items, total } = s.projects.listVisible(principal.id, query.org_id, query);
    // An organization the caller has no relation to is not revealed, as everywhere else.
    if (query.org_id && total === 0 && !s.authorizer.orgRole(principal.id, query.org_id)) throw notFound('Organization');
    ok(ctx, { projects: items.map((p) => presentProject(p, p.role)), ...pageInfo(total, query) });
  });

  router.post('/projects', async (ctx) => {
    const principal = principalOf(ctx);
    const body = parseInput(createProjectBody, ctx.request.body, 'body');
    s.authorizer.requireOrg(principal, body.org_id, 'project:create');
    const project = await s.projects.create({ orgId: body.org_id, name: body.name, description: body.description, createdBy: principal.id });
    created(ctx, presentProject(project, s.authorizer.projectRole(principal.id, project)), 'Project created');
  });

  router.get('/projects/:project_id', (ctx) => {
    const { project, role } = s.authorizer.requireProject(principalOf(ctx), ctx.params.project_id, 'project:read');
    ok(ctx, presentProject(project, role));
  });

  router.put('/projects/:project_id', (ctx) => {
    const { role } = s.authorizer.requireProject(principalOf(ctx), ctx.params.project_id, 'project:update');
    const body = parseInput(updateProjectBody, ctx.request.body, 'body');
    ok(ctx, presentProject(s.projects.update(ctx.params.project_id, body), role), 'Project updated');
  });

  router.delete('/projects/:project_id', async (ctx) => {
    s.authorizer.requireProject(principalOf(ctx), ctx.params.project_id, 'project:delete');
    await s.projects.delete(ctx.params.project_id);
    ok(ctx, { id: ctx.params.project_id, deleted: true }, 'Project and all its content deleted');
  });

  router.use(projectMemberRoutes(s).routes());
  router.use(projectPurgeRoutes(s).routes());
  return router;
}
