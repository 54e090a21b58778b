import { z } from 'zod';
import type { ProjectMembers } from '../../domain/projects/projectMembers.ts';
import type { UserStore } from '../../domain/users/userStore.ts';
import { created, ok } from '../../http/envelope.ts';
import { validationError } from '../../http/errors.ts';
import { pageInfo, paginationQuery } from '../../http/pagination.ts';
import { route, type RouteDeclaration } from '../../http/routes/declaration.ts';
import { itemsSchema, withItems } from '../../presenters/items.ts';
import { pageFields } from '../presenters/page.ts';
import { presentProjectMember, projectMemberSchema } from '../presenters/project.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import { addProjectMemberBody, memberParams, projectParams, projectRoleBody } from './schemas.ts';

export interface ProjectMemberRouteDeps {
  projectMembers: ProjectMembers;
  users: Pick<UserStore, 'findById' | 'findByEmail'>;
  authorizer: Pick<Authorizer, 'requireUser'>;
}

/** Project members (under /projects): everyone with a role, inherited from the organization or explicit. */
export function projectMemberRoutes(s: ProjectMemberRouteDeps): RouteDeclaration[] {
  return [
    route({
      method: 'get',
      path: '/:project_id/members',
      summary: "A project's members with their effective, explicit and inherited roles",
      description: 'Needs a user sign-in: an access key is answered 403.',
      permission: 'project:read',
      authorize: { project: ({ params }) => params.project_id },
      params: projectParams,
      query: paginationQuery,
      response: z.object({ members: z.array(projectMemberSchema), items: itemsSchema(projectMemberSchema, 'members'), ...pageFields }),
      async handle(ctx, { query, access: { principal, project } }) {
        // Members are people: a key of the project may read it, not who else is in it.
        s.authorizer.requireUser(principal);
        const { items, total } = await s.projectMembers.list(project, query);
        ok(ctx, { ...withItems('members', items.map(presentProjectMember)), ...pageInfo(total, query) });
      },
    }),
    route({
      method: 'post',
      path: '/:project_id/members',
      summary: 'Give a user (by id or email) a role on the project',
      permission: 'members:manage',
      authorize: { project: ({ params }) => params.project_id },
      status: 201,
      params: projectParams,
      body: addProjectMemberBody,
      response: projectMemberSchema,
      async handle(ctx, { body, access: { project } }) {
        const user = body.user_id ? await s.users.findById(body.user_id) : await s.users.findByEmail(body.email!);
        if (!user) {
          const field = body.user_id ? 'user_id' : 'email';
          throw validationError('No user has this id or email; they need an account first.', [{ field, message: 'no such user' }]);
        }
        created(ctx, presentProjectMember(await s.projectMembers.add(project, user.id, body.role)), 'Member added');
      },
    }),
    route({
      method: 'put',
      path: '/:project_id/members/:user_id/role',
      summary: "Change a member's explicit role on the project",
      permission: 'members:manage',
      authorize: { project: ({ params }) => params.project_id },
      params: memberParams,
      body: projectRoleBody,
      response: projectMemberSchema,
      async handle(ctx, { params, body, access: { project } }) {
        ok(ctx, presentProjectMember(await s.projectMembers.setRole(project, params.user_id, body.role)), 'Role changed');
      },
    }),
    route({
      method: 'delete',
      path: '/:project_id/members/:user_id',
      summary: "Remove a member's explicit role on the project",
      permission: 'members:manage',
      authorize: { project: ({ params }) => params.project_id },
      params: memberParams,
      response: z.object({ project_id: z.string(), user_id: z.string(), removed: z.literal(true) }),
      async handle(ctx, { params, access: { project } }) {
        await s.projectMembers.remove(project, params.user_id);
        ok(ctx, { project_id: project.id, user_id: params.user_id, removed: true }, 'Member removed');
      },
    }),
  ];
}
