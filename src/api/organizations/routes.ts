import { z } from 'zod';
import type { OrganizationStore } from '../../domain/organizations/organizationStore.ts';
import { created, ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo } from '../../http/pagination.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { withItems } from '../../presenters/items.ts';
import { organizationSchema, presentOrganization } from '../presenters/organization.ts';
import { deletedSchema, presentDeleted } from '../presenters/deletion.ts';
import { invitationRoutes, type InvitationRouteDeps } from './invitations.ts';
import { orgMemberRoutes, type OrgMemberRouteDeps } from './members.ts';
import * as schema from './schemas.ts';

export interface OrganizationRouteDeps extends OrgMemberRouteDeps, InvitationRouteDeps {
  organizations: OrganizationStore;
}

/** Organizations (spec 4.4): the caller's list, CRUD, and (in sibling files) members and invitations. */
export function organizationRoutes(s: OrganizationRouteDeps): RouteGroup {
  return {
    prefix: '/organizations',
    tag: 'Organizations',
    routes: [
      route({
        method: 'get',
        path: '/',
        summary: "The signed-in user's organizations, with their role in each",
        authorize: { user: 'the organizations the signed-in user belongs to; keys belong to none' },
        query: schema.listOrganizationsQuery,
        response: schema.organizationList,
        async handle(ctx, { query, access: user }) {
          const { items, total } = await s.organizations.listForUser(user.id, query);
          ok(ctx, { ...withItems('organizations', items.map((o) => ({ ...presentOrganization(o, o.role), member_count: o.member_count }))), ...pageInfo(total, query) });
        },
      }),
      route({
        method: 'post',
        path: '/',
        summary: 'Create an organization; the caller becomes its owner',
        authorize: { user: 'any user may found an organization; keys may not' },
        status: 201,
        body: schema.createOrganizationBody,
        response: organizationSchema,
        async handle(ctx, { body, access: user }) {
          const org = await s.organizations.create({ name: body.name, description: body.description, createdBy: user.id });
          created(ctx, presentOrganization(org, 'owner'), 'Organization created');
        },
      }),
      route({
        method: 'get',
        path: '/:org_id',
        summary: 'Read an organization',
        permission: 'org:read',
        authorize: { org: ({ params }) => params.org_id },
        params: schema.orgParams,
        response: organizationSchema,
        async handle(ctx, { params, access: role }) {
          ok(ctx, presentOrganization((await s.organizations.find(params.org_id))!, role));
        },
      }),
      route({
        method: 'put',
        path: '/:org_id',
        summary: "Change an organization's name or description",
        permission: 'org:update',
        authorize: { org: ({ params }) => params.org_id },
        params: schema.orgParams,
        body: schema.updateOrganizationBody,
        response: organizationSchema,
        async handle(ctx, { params, body, access: role }) {
          ok(ctx, presentOrganization(await s.organizations.update(params.org_id, body), role), 'Organization updated');
        },
      }),
      route({
        method: 'delete',
        path: '/:org_id',
        summary: 'Delete an organization',
        permission: 'org:delete',
        authorize: { org: ({ params }) => params.org_id },
        params: schema.orgParams,
        response: deletedSchema,
        async handle(ctx, { params }) {
          await s.organizations.delete(params.org_id);
          ok(ctx, presentDeleted(params.org_id), 'Organization deleted');
        },
      }),
      route({
        method: 'post',
        path: '/:org_id/leave',
        summary: 'Leave an organization (its last owner cannot)',
        permission: 'org:read',
        authorize: { org: ({ params }) => params.org_id },
        params: schema.orgParams,
        response: z.object({ org_id: z.string(), left: z.literal(true) }),
        async handle(ctx, { params }) {
          // The organization check let in a user: the one who leaves.
          await s.orgMembers.remove(params.org_id, principalOf(ctx).id, 'leave');
          ok(ctx, { org_id: params.org_id, left: true }, 'You left the organization');
        },
      }),
      ...orgMemberRoutes(s),
      ...invitationRoutes(s),
    ],
  };
}
