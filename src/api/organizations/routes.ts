import Router from '@koa/router';
import type { Services } from '../../app/services.ts';
import { created, ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { pageInfo } from '../../http/pagination.ts';
import { parseInput } from '../../http/validate.ts';
import { orgMemberRoutes } from './members.ts';
import { invitationRoutes } from './invitations.ts';
import { presentOrganization } from './presenter.ts';
import { createOrganizationBody, listOrganizationsQuery, updateOrganizationBody } from './schemas.ts';

/** Organizations (spec 4.4): the caller's list, CRUD, and (in sibling files) members and invitations. */
export function organizationRoutes(s: Services): Router {
  const router = new Router();

  router.get('/organizations', (ctx) => {
    const user = s.authorizer.requireUser(principalOf(ctx));
    const page = parseInput(listOrganizationsQuery, ctx.query, 'query');
    const { items, total } = s.organizations.listForUser(user.id, page);
    ok(ctx, { organizations: items.map((o) => presentOrganization(o, o.role)), ...pageInfo(total, page) });
  });

  router.post('/organizations', (ctx) => {
    const user = s.authorizer.requireUser(principalOf(ctx));
    const body = parseInput(createOrganizationBody, ctx.request.body, 'body');
    const org = s.organizations.create({ name: body.name, description: body.description, createdBy: user.id });
    created(ctx, presentOrganization(org, 'owner'), 'Organization created');
  });

  router.get('/organizations/:org_id', (ctx) => {
    const role = s.authorizer.requireOrg(principalOf(ctx), ctx.params.org_id, 'org:read');
    ok(ctx, presentOrganization(s.organizations.find(ctx.params.org_id)!, role));
  });

  router.put('/organizations/:org_id', (ctx) => {
    const role = s.authorizer.requireOrg(principalOf(ctx), ctx.params.org_id, 'org:update');
    const body = parseInput(updateOrganizationBody, ctx.request.body, 'body');
    ok(ctx, presentOrganization(s.organizations.update(ctx.params.org_id, body), role), 'Organization updated');
  });

  router.delete('/organizations/:org_id', (ctx) => {
    s.authorizer.requireOrg(principalOf(ctx), ctx.params.org_id, 'org:delete');
    s.organizations.delete(ctx.params.org_id);
    ok(ctx, { id: ctx.params.org_id, deleted: true }, 'Organization deleted');
  });

  router.post('/organizations/:org_id/leave', (ctx) => {
    const principal = principalOf(ctx);
    s.authorizer.requireOrg(principal, ctx.params.org_id, 'org:read');
    s.orgMembers.remove(ctx.params.org_id, principal.id, 'leave');
    ok(ctx, { org_id: ctx.params.org_id, left: true }, 'You left the organization');
  });

  for (const r of [orgMemberRoutes(s), invitationRoutes(s)]) router.use(r.routes());
  return router;
}
