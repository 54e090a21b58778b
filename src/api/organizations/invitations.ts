import type { Settings } from '../../config/settings.ts';
import type { InvitationStore } from '../../domain/invitations/invitationStore.ts';
import type { OrganizationStore } from '../../domain/organizations/organizationStore.ts';
import { API_PREFIX } from '../../config/apiPrefix.ts';
import { created, ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo, paginationQuery } from '../../http/pagination.ts';
import { route, type RouteDeclaration } from '../../http/routes/declaration.ts';
import { organizationSchema, presentInvitation, presentOrganization } from '../presenters/organization.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import * as schema from './schemas.ts';

export interface InvitationRouteDeps {
  invitations: InvitationStore;
  organizations: Pick<OrganizationStore, 'find'>;
  authorizer: Pick<Authorizer, 'requireOrgRoleAssignment'>;
  /** The accept URL is built on the public URL. */
  settings: Pick<Settings, 'baseUrl'>;
}

/** Invitations: single-use, expiring tokens that let the invited address join with a role. */
export function invitationRoutes(s: InvitationRouteDeps): RouteDeclaration[] {
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
      async handle(ctx, { params, body, access: role }) {
        const orgId = params.org_id;
        s.authorizer.requireOrgRoleAssignment(role, null, body.role);
        // The organization check let in a user: the inviter.
        const { invitation, token } = await s.invitations.create({ orgId, email: body.email, role: body.role, invitedBy: principalOf(ctx).id });
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
      async handle(ctx, { params, query }) {
        const { items, total } = await s.invitations.listPending(params.org_id, query);
        ok(ctx, { invitations: items.map(presentInvitation), ...pageInfo(total, query) });
      },
    }),
    route({
      method: 'post',
      path: '/invitations/:token/accept',
      summary: 'Accept an invitation, signed in as the invited address; answers the organization joined',
      authorize: { user: 'the token is the authority, for the user signed in as the invited address' },
      params: schema.invitationTokenParams,
      response: organizationSchema,
      async handle(ctx, { params, access }) {
        const invitation = await s.invitations.accept(params.token, access.user);
        ok(ctx, presentOrganization((await s.organizations.find(invitation.org_id))!, invitation.role), 'Invitation accepted');
      },
    }),
  ];
}
