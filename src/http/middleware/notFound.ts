import type { Middleware } from 'koa';
import { errorBody } from '../envelope.ts';

/**
 * Unknown routes answer 404, and known routes asked with a method they do not serve 405 (with
 * the router's `Allow` header), in the envelope rather than Koa's plain-text defaults. The
 * router answers 501 for methods it knows no route for at all: that is a 405 for the client too.
 */
export function notFoundFallback(): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.body !== undefined && ctx.body !== null) return;
    if (ctx.respond === false) return;
    if (ctx.status === 404) {
      ctx.status = 404;
      ctx.body = errorBody('NOT_FOUND', `No route for ${ctx.method} ${ctx.path}.`);
    } else if (ctx.status === 405 || ctx.status === 501) {
      const allow = ctx.response.get('Allow');
      ctx.status = 405;
      ctx.body = errorBody('METHOD_NOT_ALLOWED', `${ctx.method} is not supported on ${ctx.path}${allow ? `; use ${allow}` : ''}.`, { allow: allow ? allow.split(/,\s*/) : [] });
    }
  };
}
