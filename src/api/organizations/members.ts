import Router from '@koa/router';
import type { Services } from '../../app/services.ts';
import { ok } from '../../http/envelope.ts';
import { notFound } from '../../http/errors.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo, paginationQuery } from '../../http/pagination.ts';
import { parseInput } from '../../http/validate.ts';
import { presentOrgMember } from './presenter.ts';
import { orgRoleBody } from './schemas.ts';

/** Members of an organization: list, change a role, remove. Leaving is in routes.ts. */
export function orgMemberRoutes(s: Services): Router {
  const router = new Router();

  router.get('/organizations/:org_id/members', (ctx) => {
    s.authorizer.requireOrg(principalOf(ctx), ctx.params.org_id, 'org:read');
    const page = parseInput(paginationQuery, ctx.query, 'query');
    const { items, total } = s.orgMembers.list(ctx.params.org_id, page);
    ok(ctx, { members: items.map(presentOrgMember), ...pageInfo(total, page) });
  });

  router.put('/organizations/:org_id/members/:user_id/role', (ctx) => {
    const principal = principalOf(ctx);
    const { org_id, user_id } = ctx.params;
    s.authorizer.requireOrg(principal, org_id, 'org:members:manage');
    const body = parseInput(orgRoleBody, ctx.request.body, 'body');
    const current = s.orgMembers.roleOf(org_id, user_id);
    if (!current) throw notFound('Member');
    s.authorizer.requireOrgRoleAssignment(principal, org_id, 'org:members:manage', current, body.role);
    ok(ctx, presentOrgMember(s.orgMembers.changeRole(org_id, user_id, body.role)), 'Role changed');
  });

  router.delete('/organizations/:org_id/members/:user_id', (ctx) => {
    const principal = principalOf(ctx);
    const { org_id, user_id } = ctx.params;
    s.authorizer.requireOrg(principal, org_id, 'org:members:manage');
    const current = s.orgMembers.roleOf(org_id, user_id);
    if (!current) throw notFound('Member');
    s.authorizer.requireOrgRoleAssignment(principal, org_id, 'org:members:manage', current, null);
    s.orgMembers.remove(org_id, user_id);
    ok(ctx, { org_id, user_id, removed: true }, 'Member removed');
  });

  return router;
}
