import type { Context } from 'koa';
import type { AccessTokens } from '../../auth/accessTokens.ts';
import type { CsrfTokens } from '../../auth/csrfTokens.ts';
import type { RefreshTokens } from '../../auth/refreshTokens.ts';
import type { Settings } from '../../config/settings.ts';
import type { UserRecord } from '../../domain/users/userStore.ts';
import { AppError } from '../../http/errors.ts';
import { CSRF_HEADER, REFRESH_COOKIE, clearSessionCookies, requestCookie, secureRequest, setSessionCookies } from '../../http/sessionCookies.ts';
import { newId } from '../../util/ids.ts';
import { presentUser } from '../presenters/user.ts';

/** What the cookie session uses: the tokens it sets and the public URL that says whether cookies are Secure. */
export interface CookieSessionDeps {
  settings: Pick<Settings, 'baseUrl'>;
  accessTokens: AccessTokens;
  refreshTokens: RefreshTokens;
  csrfTokens: CsrfTokens;
}

export const NO_REFRESH_TOKEN = 'No refresh token: send refresh_token in the body, or the cns_refresh cookie of a dashboard session.';

/**
 * The dashboard's sign-in as cookies (login with `session: "cookie"`): the tokens go into
 * HttpOnly cookies and never into the answer, which says only who signed in and when the access
 * token expires. The sign-in's refresh-token family is its session id: the access token carries
 * it (so logout ends it at once) and the CSRF token is derived from it.
 */
export function cookieSessions(s: CookieSessionDeps, rotate: (token: string) => Promise<{ user: UserRecord; token: string; sessionId: string }>) {
  const secure = (ctx: Context) => secureRequest(ctx, s.settings.baseUrl);

  async function answer(ctx: Context, user: UserRecord, sessionId: string, refreshToken: string) {
    setSessionCookies(
      ctx,
      {
        accessToken: await s.accessTokens.sign(user.id, sessionId),
        accessTtlSeconds: s.accessTokens.ttlSeconds,
        refreshToken,
        refreshTtlSeconds: s.refreshTokens.ttlSeconds,
        csrfToken: s.csrfTokens.tokenFor(sessionId),
      },
      secure(ctx),
    );
    return { token_type: 'cookie' as const, expires_in: s.accessTokens.ttlSeconds, user: presentUser(user) };
  }

  /**
   * The refresh cookie's sign-in, once the request proved it comes from our page (refresh and
   * logout change state, so they need the CSRF header like any other write). An unknown token
   * clears the cookies: there is nothing left to keep.
   */
  async function presented(ctx: Context): Promise<{ token: string; sessionId: string } | null> {
    const token = requestCookie(ctx, REFRESH_COOKIE);
    if (!token) return null;
    const sessionId = await s.refreshTokens.familyOf(token);
    if (!sessionId) {
      clearSessionCookies(ctx, secure(ctx));
      throw new AppError('UNAUTHORIZED', 'The session cookie is not valid; sign in again.');
    }
    if (!s.csrfTokens.matches(sessionId, ctx.get(CSRF_HEADER) || undefined)) {
      throw new AppError('FORBIDDEN', `A request with the session cookie must send the cns_csrf cookie's value in ${CSRF_HEADER}; nothing was changed.`, {
        reason: ctx.get(CSRF_HEADER) ? 'csrf_mismatch' : 'csrf_missing',
      });
    }
    return { token, sessionId };
  }

  return {
    /** A new sign-in; one this browser still held is revoked, not left behind unreachable. */
    async start(ctx: Context, user: UserRecord) {
      const previous = requestCookie(ctx, REFRESH_COOKIE);
      if (previous) await s.refreshTokens.revoke(previous);
      const sessionId = newId('rtf');
      return answer(ctx, user, sessionId, await s.refreshTokens.issue(user.id, sessionId));
    },

    /** Rotates both cookies; a refused refresh token (expired, revoked, reused) clears them. */
    async refresh(ctx: Context) {
      const session = await presented(ctx);
      if (!session) throw new AppError('UNAUTHORIZED', NO_REFRESH_TOKEN);
      let next: Awaited<ReturnType<typeof rotate>>;
      try {
        next = await rotate(session.token);
      } catch (err) {
        clearSessionCookies(ctx, secure(ctx));
        throw err;
      }
      return answer(ctx, next.user, next.sessionId, next.token);
    },

    /** Revokes the sign-in (its access cookie stops working too) and clears the cookies. */
    async end(ctx: Context): Promise<void> {
      const session = await presented(ctx);
      clearSessionCookies(ctx, secure(ctx));
      if (!session) throw new AppError('UNAUTHORIZED', NO_REFRESH_TOKEN);
      await s.refreshTokens.revoke(session.token);
    },
  };
}
