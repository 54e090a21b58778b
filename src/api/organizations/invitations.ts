import Router from '@koa/router';
import type { Services } from '../../app/services.ts';
import { created, ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo, paginationQuery } from '../../http/pagination.ts';
import { parseInput } from '../../http/validate.ts';
import { API_PREFIX } from '../router.ts';
import { presentInvitation, presentOrganization } from './presenter.ts';
import { inviteBody } from './schemas.ts';

/** Invitations: single-use, expiring tokens that let the invited address join with a role. */
export function invitationRoutes(s: Services): Router {
  const router = new Router();

  router.post('/organizations/:org_id/invite', (ctx) => {
    const principal = principalOf(ctx);
    const orgId = ctx.params.org_id;
    s.authorizer.requireOrg(principal, orgId, 'org:invite');
    const body = parseInput(inviteBody, ctx.request.body, 'body');
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
  });

  router.get('/organizations/:org_id/invitations', (ctx) => {
    s.authorizer.requireOrg(principalOf(ctx), ctx.params.org_id, 'org:invite');
    const page = parseInput(paginationQuery, ctx.query, 'query');
    const { items, total } = s.invitations.listPending(ctx.params.org_id, page);
    ok(ctx, { invitations: items.map(presentInvitation), ...pageInfo(total, page) });
  });

  router.post('/organizations/invitations/:token/accept', (ctx) => {
    const { user } = s.authorizer.requireUser(principalOf(ctx));
    const invitation = s.invitations.accept(ctx.params.token, user);
    ok(ctx, presentOrganization(s.organizations.find(invitation.org_id)!, invitation.role), 'Invitation accepted');
  });

  return router;
}
