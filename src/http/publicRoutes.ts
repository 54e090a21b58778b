import type { Context } from 'koa';

/**
 * The only routes reachable without a credential. Everything else requires one, so a route
 * added later is private unless it is listed here.
 */
const publicRoutes: { method: string; pattern: RegExp }[] = [
  { method: 'GET', pattern: /^\/healthz$/ },
  { method: 'GET', pattern: /^\/api\/v1\/openapi\.json$/ },
  { method: 'GET', pattern: /^\/api\/v1\/auth\/config$/ },
  { method: 'POST', pattern: /^\/api\/v1\/auth\/(login|refresh|signup|logout)$/ },
  { method: 'GET', pattern: /^\/api\/v1\/p\/[^/]+/ },
];

export function registerPublicRoute(method: string, pattern: RegExp): void {
  publicRoutes.push({ method, pattern });
}

export function isPublicRoute(ctx: Context): boolean {
  const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
  return publicRoutes.some((r) => r.method === method && r.pattern.test(ctx.path));
}
