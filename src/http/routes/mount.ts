import Router from '@koa/router';
import type { Context } from 'koa';
import { principalOf } from '../middleware/authenticate.ts';
import { parseInput } from '../validate.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import type { OrgAction, ProjectAction } from '../../policies/permissions.ts';
import type { RouteAuthorization, RouteDeclaration, RouteGroup, RouteInput } from './declaration.ts';

/** What the mount asks about a route that declares `authorize`. */
export type RouteAuthorizer = Pick<Authorizer, 'requireOrg' | 'requireProject'>;

/**
 * Builds a group's router from its declarations: validate each declared part, check the declared
 * authorization, then handle. A route that declares `authorize` cannot be mounted without an
 * authorizer or without its `permission` (fail at start-up, never open at run time).
 */
export function mountGroup(group: RouteGroup, authorizer?: RouteAuthorizer): Router {
  const router = new Router({ prefix: group.prefix });
  for (const r of group.routes) {
    if (r.authorize && (!authorizer || !r.permission)) {
      throw new Error(`${r.method.toUpperCase()} ${group.prefix}${r.path} declares authorize without ${authorizer ? 'a permission' : 'an authorizer to ask'}`);
    }
    router[r.method](r.path, ...(r.multipart ? [r.multipart] : []), async (ctx) => {
      const input: RouteInput<unknown, unknown, unknown> = {
        params: r.params ? parseInput(r.params, ctx.params, 'params') : ctx.params,
        query: r.query ? parseInput(r.query, ctx.query, 'query') : ctx.query,
        body: r.body ? parseInput(r.body, ctx.request.body, 'body') : ctx.request.body,
      };
      const access = r.authorize ? authorizeRoute(authorizer!, r, input, ctx) : undefined;
      await r.handle(ctx, { ...input, access } as Parameters<RouteDeclaration['handle']>[1]);
    });
  }
  return router;
}

/** The declared check: the caller's role or project access, or a domain error (404 unseen, 403 too little). */
function authorizeRoute(authorizer: RouteAuthorizer, r: RouteDeclaration, input: RouteInput<unknown, unknown, unknown>, ctx: Context) {
  const on = r.authorize as Partial<RouteAuthorization>;
  const principal = principalOf(ctx);
  return on.org
    ? authorizer.requireOrg(principal, on.org(input), r.permission as OrgAction)
    : authorizer.requireProject(principal, on.project!(input), r.permission as ProjectAction);
}
