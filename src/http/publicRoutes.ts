import type { Context } from 'koa';

/**
 * The paths reachable without a credential that no route declaration describes: the API
 * description and what middleware outside the declared routes serves (the dashboard's files).
 * Declared routes say `authorize: { public }` themselves. Everything else requires a credential,
 * so a route added later is private unless it says so.
 */
const undeclared: { method: string; pattern: RegExp }[] = [{ method: 'GET', pattern: /^\/api\/v1\/openapi\.json$/ }];

export function registerPublicRoute(method: string, pattern: RegExp): void {
  undeclared.push({ method, pattern });
}

/** Whether a request needs no credential: a declared public route, or one of the undeclared paths above. */
export function publicRoutes(declared: (method: string, path: string) => boolean): (ctx: Context) => boolean {
  return (ctx) => {
    const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
    return declared(method, ctx.path) || undeclared.some((r) => r.method === method && r.pattern.test(ctx.path));
  };
}
