import type { Context, Middleware } from 'koa';
import { bearerToken, type Authenticator } from '../../auth/authenticator.ts';
import { ANON_KEY_IS_NOT_A_CREDENTIAL } from '../../auth/anonKey.ts';
import type { Principal } from '../../auth/principal.ts';
import { looksLikeAccessKey } from '../../auth/accessKeys.ts';
import type { CsrfTokens } from '../../auth/csrfTokens.ts';
import { AppError, unauthorized } from '../errors.ts';
import { ACCESS_COOKIE, requestCookie } from '../sessionCookies.ts';
import { authenticateCookie } from './cookieSession.ts';

/**
 * Resolves the caller from `Authorization: Bearer …`, or from an access key in `X-Access-Key`
 * (the header clients written for the spec's original service send), or else from the
 * dashboard's session cookie (with its CSRF check: ./cookieSession.ts). Every route needs a
 * principal except the ones `isPublic` names (fail closed: a new route is private unless listed).
 * Public routes never look at the cookie: refresh and logout read theirs themselves, and a
 * presigned address carries its own grant.
 */
export function authenticate(authenticator: Authenticator, isPublic: (ctx: Context) => boolean, csrf: CsrfTokens): Middleware {
  return async (ctx, next) => {
    if (admittedRequests.has(ctx)) return next();
    const header = ctx.get('Authorization');
    const token = bearerToken(header || undefined) ?? accessKeyHeader(ctx);
    if (token) {
      const principal = await authenticator.authenticate(token);
      if (!principal) {
        if (authenticator.isAnonKey(token) && !isPublic(ctx)) throw new AppError('UNAUTHORIZED', ANON_KEY_IS_NOT_A_CREDENTIAL);
        if (!isPublic(ctx)) throw new AppError('UNAUTHORIZED', 'The token is invalid, expired or revoked.');
      } else {
        ctx.state.principal = principal;
      }
    } else if (header && !isPublic(ctx)) {
      throw unauthorized('The Authorization header must be "Bearer <token>".');
    } else if (!isPublic(ctx)) {
      const cookie = requestCookie(ctx, ACCESS_COOKIE);
      if (!cookie) throw unauthorized();
      await authenticateCookie(ctx, cookie, authenticator, csrf);
    }
    await next();
  };
}

const admittedRequests = new WeakSet<Context>();

/**
 * For a gate mounted before authentication that has itself checked the request's credential
 * against the one resource it serves (the MCP servers' gate): its caller is the request's
 * principal, and authentication does not check the same credential a second time.
 */
export function admitted(ctx: Context, principal: Principal): void {
  ctx.state.principal = principal;
  admittedRequests.add(ctx);
}

/** `X-Access-Key` carries only access keys, never user tokens: a JWT there is not looked at. */
function accessKeyHeader(ctx: Context): string | null {
  const key = ctx.get('X-Access-Key').trim();
  return key && looksLikeAccessKey(key) ? key : null;
}

/** The authenticated caller of a private route. */
export function principalOf(ctx: Context): Principal {
  const principal = ctx.state.principal as Principal | undefined;
  if (!principal) throw unauthorized();
  return principal;
}
