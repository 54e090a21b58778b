import type { Context } from 'koa';
import { API_PREFIX } from '../config/apiPrefix.ts';

/** The dashboard's cookie session (README: The web dashboard). */
export const ACCESS_COOKIE = 'cns_access';
export const REFRESH_COOKIE = 'cns_refresh';
export const CSRF_COOKIE = 'cns_csrf';
export const CSRF_HEADER = 'X-CSRF-Token';

/**
 * Each cookie goes only where it is read: the access token to the API, the refresh token to the
 * auth routes (refresh and logout), the CSRF token to the pages, whose script echoes it. The
 * two tokens are HttpOnly, so a script injected into the page cannot read them.
 */
const ACCESS_PATH = '/api';
const REFRESH_PATH = `${API_PREFIX}/auth`;
const CSRF_PATH = '/';

export interface SessionCookieValues {
  accessToken: string;
  accessTtlSeconds: number;
  refreshToken: string;
  refreshTtlSeconds: number;
  csrfToken: string;
}

/** Secure when the browser reached us over https: directly, or through the public address (a TLS proxy). */
export function secureRequest(ctx: Context, baseUrl: string): boolean {
  return ctx.secure || baseUrl.startsWith('https://');
}

export function setSessionCookies(ctx: Context, v: SessionCookieValues, secure: boolean): void {
  ctx.append('Set-Cookie', [
    cookie(ACCESS_COOKIE, v.accessToken, ACCESS_PATH, v.accessTtlSeconds, true, secure),
    cookie(REFRESH_COOKIE, v.refreshToken, REFRESH_PATH, v.refreshTtlSeconds, true, secure),
    // As long as the refresh token: the page reads it to know that a session may exist.
    cookie(CSRF_COOKIE, v.csrfToken, CSRF_PATH, v.refreshTtlSeconds, false, secure),
  ]);
}

export function clearSessionCookies(ctx: Context, secure: boolean): void {
  ctx.append('Set-Cookie', [
    cookie(ACCESS_COOKIE, '', ACCESS_PATH, 0, true, secure),
    cookie(REFRESH_COOKIE, '', REFRESH_PATH, 0, true, secure),
    cookie(CSRF_COOKIE, '', CSRF_PATH, 0, false, secure),
  ]);
}

/** A cookie of the request, or null when absent or empty. */
export function requestCookie(ctx: Context, name: string): string | null {
  return ctx.cookies.get(name) || null;
}

/** Written by hand: Koa's cookie writer refuses `Secure` on a plain-http hop behind a TLS proxy. */
function cookie(name: string, value: string, path: string, maxAgeSeconds: number, httpOnly: boolean, secure: boolean): string {
  const parts = [`${name}=${value}`, `Path=${path}`, `Max-Age=${maxAgeSeconds}`, 'SameSite=Strict'];
  if (httpOnly) parts.push('HttpOnly');
  if (secure) parts.push('Secure');
  return parts.join('; ');
}
