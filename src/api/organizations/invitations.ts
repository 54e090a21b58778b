import type { Services } from '../../app/services.ts';
import { API_PREFIX } from '../../http/apiPrefix.ts';
import { created, ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo, paginationQuery } from '../../http/pagination.ts';
import { route, type RouteDeclaration } from '../../http/routes/declaration.ts';
import { organizationSchema, presentInvitation, presentOrganization } from '../presenters/organization.ts';
import * as schema from './schemas.ts';

/** Invitations: single-use, expiring tokens that let the invited address join with a role. */
export function invitationRoutes(s: Services): RouteDeclaration[] {
  return [
    route({
      method: 'post',
      path: '/:org_id/invite',
      summary: 'Invite an email address with a role; the token is shown once',
      permission: 'org:invite',
      authorize: { org: ({ params }) => params.org_id },
      status: 201,
      params: schema.orgParams,
      body: schema.inviteBody,
      response: schema.createdInvitation,
      handle(ctx, { params, body }) {
        const principal = principalOf(ctx);
        const orgId = params.org_id;
        s.authorizer.requireOrgRoleAssignment(principal, orgId, 'org:invite', null, body.role);
        const { invitation, token } = s.invitations.create({ orgId, email: body.email, role: body.role, invitedBy: principal.id });
        created(
          ctx,
          {
            ...presentInvitation(invitation),
            token,
            accept_url: `${s.settings.baseUrl}${API_PREFIX}/organizations/invitations/${encodeURIComponent(token)}/accept`,
          },
          'Invitation created; the token is shown only this once',
        );
      },
    }),
    route({
      method: 'get',
      path: '/:org_id/invitations',
      summary: "An organization's pending invitations",
      permission: 'org:invite',
      authorize: { org: ({ params }) => params.org_id },
      params: schema.orgParams,
      query: paginationQuery,
      response: schema.invitationList,
      handle(ctx, { params, query }) {
        const { items, total } = s.invitations.listPending(params.org_id, query);
        ok(ctx, { invitations: items.map(presentInvitation), ...pageInfo(total, query) });
      },
    }),
    route({
      method: 'post',
      path: '/invitations/:token/accept',
      summary: 'Accept an invitation, signed in as the invited address; answers the organization joined',
      params: schema.invitationTokenParams,
      response: organizationSchema,
      handle(ctx, { params }) {
        const { user } = s.authorizer.requireUser(principalOf(ctx));
        const invitation = s.invitations.accept(params.token, user);
        ok(ctx, presentOrganization(s.organizations.find(invitation.org_id)!, invitation.role), 'Invitation accepted');
      },
    }),
  ];
}
