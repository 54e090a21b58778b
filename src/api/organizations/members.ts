import { z } from 'zod';
import type { OrgMembers } from '../../domain/organizations/orgMembers.ts';
import { ok } from '../../http/envelope.ts';
import { notFound } from '../../http/errors.ts';
import { pageInfo, paginationQuery } from '../../http/pagination.ts';
import { route, type RouteDeclaration } from '../../http/routes/declaration.ts';
import { withItems } from '../../presenters/items.ts';
import { orgMemberSchema, presentOrgMember } from '../presenters/organization.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import * as schema from './schemas.ts';

export interface OrgMemberRouteDeps {
  orgMembers: OrgMembers;
  authorizer: Pick<Authorizer, 'requireOrgRoleAssignment'>;
}

/** Members of an organization: list, change a role, remove. Leaving is in routes.ts. */
export function orgMemberRoutes(s: OrgMemberRouteDeps): RouteDeclaration[] {
  return [
    route({
      method: 'get',
      path: '/:org_id/members',
      summary: "An organization's members",
      permission: 'org:read',
      authorize: { org: ({ params }) => params.org_id },
      params: schema.orgParams,
      query: paginationQuery,
      response: schema.orgMemberList,
      async handle(ctx, { params, query }) {
        const { items, total } = await s.orgMembers.list(params.org_id, query);
        ok(ctx, { ...withItems('members', items.map(presentOrgMember)), ...pageInfo(total, query) });
      },
    }),
    route({
      method: 'put',
      path: '/:org_id/members/:user_id/role',
      summary: "Change a member's role (admins cannot make or change owners)",
      permission: 'org:members:manage',
      authorize: { org: ({ params }) => params.org_id },
      params: schema.memberParams,
      body: schema.orgRoleBody,
      response: orgMemberSchema,
      async handle(ctx, { params, body, access: role }) {
        const { org_id, user_id } = params;
        const current = await s.orgMembers.roleOf(org_id, user_id);
        if (!current) throw notFound('Member');
        s.authorizer.requireOrgRoleAssignment(role, current, body.role);
        ok(ctx, presentOrgMember(await s.orgMembers.changeRole(org_id, user_id, body.role)), 'Role changed');
      },
    }),
    route({
      method: 'delete',
      path: '/:org_id/members/:user_id',
      summary: 'Remove a member (admins cannot remove owners)',
      permission: 'org:members:manage',
      authorize: { org: ({ params }) => params.org_id },
      params: schema.memberParams,
      response: z.object({ org_id: z.string(), user_id: z.string(), removed: z.literal(true) }),
      async handle(ctx, { params, access: role }) {
        const { org_id, user_id } = params;
        const current = await s.orgMembers.roleOf(org_id, user_id);
        if (!current) throw notFound('Member');
        s.authorizer.requireOrgRoleAssignment(role, current, null);
        await s.orgMembers.remove(org_id, user_id);
        ok(ctx, { org_id, user_id, removed: true }, 'Member removed');
      },
    }),
  ];
}
