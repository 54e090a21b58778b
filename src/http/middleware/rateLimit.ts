import type { Context, Middleware } from 'koa';
import { AppError } from '../errors.ts';
import type { RateLimiter } from '../rateLimiter.ts';

/** 429 RATE_LIMITED with Retry-After when the caller's bucket is empty. */
export function rateLimit(limiter: RateLimiter, keyOf: (ctx: Context) => string | null): Middleware {
  return async (ctx, next) => {
    // Forwarded by another worker of this box, which took the token already.
    const key = ctx.state.forwarded ? null : keyOf(ctx);
    if (key !== null) {
      const retryAfter = limiter.take(key);
      if (retryAfter > 0) {
        throw new AppError('RATE_LIMITED', `Too many requests; retry in ${retryAfter} s.`, { retry_after: retryAfter }, {
          'Retry-After': String(retryAfter),
        });
      }
    }
    await next();
  };
}

/** Per credential when authenticated, else per client address. */
export function callerKey(ctx: Context): string {
  const principal = ctx.state.principal as { kind: string; id: string } | undefined;
  return principal ? `${principal.kind}:${principal.id}` : `ip:${ctx.ip}`;
}
