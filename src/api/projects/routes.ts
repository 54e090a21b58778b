import { z } from 'zod';
import type { ProjectStore } from '../../domain/projects/projectStore.ts';
import { created, ok } from '../../http/envelope.ts';
import { notFound } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo } from '../../http/pagination.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { itemsSchema, withItems } from '../../presenters/items.ts';
import { pageFields } from '../presenters/page.ts';
import { presentProject, projectSchema } from '../presenters/project.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import { projectMemberRoutes, type ProjectMemberRouteDeps } from './members.ts';
import { projectPurgeRoute, type ProjectPurgeDeps } from './purge.ts';
import { createProjectBody, listProjectsQuery, projectParams, updateProjectBody } from './schemas.ts';

export interface ProjectRouteDeps extends ProjectMemberRouteDeps, ProjectPurgeDeps {
  projects: ProjectStore;
  authorizer: Pick<Authorizer, 'requireUser' | 'orgRole' | 'projectRole'>;
}

/** Projects (spec 4.4): list, CRUD; members in members.ts, purge in purge.ts. */
export function projectRoutes(s: ProjectRouteDeps): RouteGroup {
  return {
    prefix: '/projects',
    tag: 'Projects',
    routes: [
      route({
        method: 'get',
        path: '/',
        summary: 'The projects the caller may see (an access key: its one project)',
        authorize: { signedIn: "lists only what the caller sees: a user's projects, a key's one project" },
        query: listProjectsQuery,
        response: z.object({ projects: z.array(projectSchema), items: itemsSchema(projectSchema, 'projects'), ...pageFields }),
        async handle(ctx, { query }) {
          const principal = principalOf(ctx);
          if (principal.kind === 'key') {
            // A key reaches exactly one project: the list is that project, filtered like any other.
            const project = await s.projects.find(principal.connection.project_id);
            const items = project && (!query.org_id || project.org_id === query.org_id) ? [project] : [];
            const window = items.slice(query.offset, query.offset + query.limit);
            ok(ctx, { ...withItems('projects', window.map((p) => presentProject(p, null))), ...pageInfo(items.length, query) });
            return;
          }
          const { items, total } = await s.projects.listVisible(principal.id, query.org_id, query);
          // An organization the caller has no relation to is not revealed, as everywhere else.
          if (query.org_id && total === 0 && !(await s.authorizer.orgRole(principal.id, query.org_id))) throw notFound('Organization');
          ok(ctx, { ...withItems('projects', items.map((p) => presentProject(p, p.role))), ...pageInfo(total, query) });
        },
      }),
      route({
        method: 'post',
        path: '/',
        summary: 'Create a project in an organization',
        permission: 'project:create',
        authorize: { org: ({ body }) => body.org_id },
        status: 201,
        body: createProjectBody,
        response: projectSchema,
        async handle(ctx, { body }) {
          // The organization check let in a user: the creator.
          const principal = principalOf(ctx);
          const project = await s.projects.create({ orgId: body.org_id, name: body.name, description: body.description, createdBy: principal.id });
          created(ctx, presentProject(project, await s.authorizer.projectRole(principal.id, project)), 'Project created');
        },
      }),
      route({
        method: 'get',
        path: '/:project_id',
        summary: 'Read a project',
        permission: 'project:read',
        authorize: { project: ({ params }) => params.project_id },
        params: projectParams,
        response: projectSchema,
        handle(ctx, { access: { project, role } }) {
          ok(ctx, presentProject(project, role));
        },
      }),
      route({
        method: 'put',
        path: '/:project_id',
        summary: "Change a project's name or description",
        permission: 'project:update',
        authorize: { project: ({ params }) => params.project_id },
        params: projectParams,
        body: updateProjectBody,
        response: projectSchema,
        async handle(ctx, { params, body, access: { role } }) {
          ok(ctx, presentProject(await s.projects.update(params.project_id, body), role), 'Project updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:project_id',
        summary: 'Delete a project and all its content',
        permission: 'project:delete',
        authorize: { project: ({ params }) => params.project_id },
        params: projectParams,
        response: deletedSchema,
        async handle(ctx, { params }) {
          await s.projects.delete(params.project_id);
          ok(ctx, presentDeleted(params.project_id), 'Project and all its content deleted');
        },
      }),
      ...projectMemberRoutes(s),
      projectPurgeRoute(s),
    ],
  };
}
