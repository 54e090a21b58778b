import type { Middleware } from 'koa';
import { errorBody } from '../envelope.ts';

/** Unknown routes answer 404 in the envelope rather than Koa's plain-text default. */
export function notFoundFallback(): Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.status === 404 && ctx.body === undefined && ctx.respond !== false) {
      ctx.status = 404;
      ctx.body = errorBody('NOT_FOUND', `No route for ${ctx.method} ${ctx.path}.`);
    }
  };
}
