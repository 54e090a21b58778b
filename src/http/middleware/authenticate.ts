import type { Context, Middleware } from 'koa';
import { bearerToken, type Authenticator } from '../../auth/authenticator.ts';
import type { Principal } from '../../auth/principal.ts';
import { AppError, unauthorized } from '../errors.ts';

/**
 * Resolves the caller from `Authorization: Bearer …`. Every route needs a principal except the
 * ones `isPublic` names (fail closed: a new route is private unless listed there).
 */
export function authenticate(authenticator: Authenticator, isPublic: (ctx: Context) => boolean): Middleware {
  return async (ctx, next) => {
    const header = ctx.get('Authorization');
    const token = bearerToken(header || undefined);
    if (token) {
      const principal = await authenticator.authenticate(token);
      if (!principal) {
        if (!isPublic(ctx)) throw new AppError('UNAUTHORIZED', 'The token is invalid, expired or revoked.');
      } else {
        ctx.state.principal = principal;
      }
    } else if (header && !isPublic(ctx)) {
      throw unauthorized('The Authorization header must be "Bearer <token>".');
    } else if (!isPublic(ctx)) {
      throw unauthorized();
    }
    await next();
  };
}

/** The authenticated caller of a private route. */
export function principalOf(ctx: Context): Principal {
  const principal = ctx.state.principal as Principal | undefined;
  if (!principal) throw unauthorized();
  return principal;
}
