import type { Context } from 'koa';
import type { Authenticator } from '../../auth/authenticator.ts';
import type { CsrfTokens } from '../../auth/csrfTokens.ts';
import { AppError } from '../errors.ts';
import { CSRF_HEADER } from '../sessionCookies.ts';

/** What a request authenticated by the dashboard's session cookie knows of its sign-in. */
export interface CookieSession {
  id: string;
  expiresAtMs: number;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Authenticates a request by its `cns_access` cookie. Only session-bound tokens count (a bearer
 * token copied into the cookie does not), and every state-changing request must echo the
 * session's CSRF token in `X-CSRF-Token`: a browser attaches cookies to requests that other
 * sites make it send, but only our own script can read `cns_csrf` and set the header.
 */
export async function authenticateCookie(ctx: Context, token: string, authenticator: Authenticator, csrf: CsrfTokens): Promise<void> {
  const found = await authenticator.userSession(token);
  if (!found || found.sessionId === null) {
    throw new AppError('UNAUTHORIZED', 'The session has expired or was signed out: refresh it (POST /auth/refresh) or sign in again.');
  }
  if (!SAFE_METHODS.has(ctx.method)) {
    const presented = ctx.get(CSRF_HEADER) || undefined;
    if (!csrf.matches(found.sessionId, presented)) {
      throw new AppError(
        'FORBIDDEN',
        presented
          ? `The ${CSRF_HEADER} header does not match this session's cns_csrf cookie; nothing was changed.`
          : `A request authenticated by the session cookie must send the cns_csrf cookie's value in ${CSRF_HEADER}; nothing was changed.`,
        { reason: presented ? 'csrf_mismatch' : 'csrf_missing' },
      );
    }
  }
  ctx.state.principal = found.principal;
  ctx.state.cookieSession = { id: found.sessionId, expiresAtMs: found.expiresAtMs } satisfies CookieSession;
}

/** The cookie session of this request, or null when it was authenticated otherwise (a header) or not at all. */
export function cookieSessionOf(ctx: Context): CookieSession | null {
  return (ctx.state.cookieSession as CookieSession | undefined) ?? null;
}
