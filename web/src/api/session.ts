import { csrfHeaders, csrfToken } from './csrf.ts';

/**
 * The signed-in session. Its tokens are in HttpOnly cookies the page cannot read (so a script
 * injected into it cannot steal them); the page knows only who is signed in and when the access
 * token expires. A reload asks the server (`GET /auth/me`) and stays signed in. The access token
 * is refreshed before it expires and at once after a 401. Each refresh token works once and
 * every tab shares the cookies, so refreshes are serialized across tabs (Web Locks) and a tab
 * first checks whether another one already renewed them.
 */
export interface SessionUser {
  id: string;
  email: string;
  display_name: string | null;
  initialized: boolean;
}

/** What login, refresh and `/auth/me` answer for a cookie session. */
export interface SessionAnswer {
  user: SessionUser;
  expires_in?: number;
}

/** Whether two expiries differ by more than rounding to whole seconds. */
const SLACK_MS = 2000;
/** After a refresh that could not reach the server: try again, without signing out. */
const RETRY_MS = 15_000;

let user: SessionUser | null = null;
let expiresAt = 0;
let timer: ReturnType<typeof setTimeout> | undefined;
let inFlight: Promise<boolean> | null = null;
const listeners = new Set<(u: SessionUser | null) => void>();

export function sessionUser(): SessionUser | null {
  return user;
}

export function onSessionChange(listener: (u: SessionUser | null) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function setSession(answer: SessionAnswer | null): void {
  user = answer?.user ?? null;
  clearTimeout(timer);
  const lifetime = answer?.expires_in ?? 0;
  expiresAt = Date.now() + lifetime * 1000;
  // Refresh well before expiry (a minute, or a fifth of a short lifetime), so no request meets an expired token.
  if (answer) timer = setTimeout(() => void refreshSession(), Math.max(1, Math.min(lifetime - 60, lifetime * 0.8)) * 1000);
  for (const l of listeners) l(user);
}

/** At start: who is signed in? Without the `cns_csrf` cookie there is no session to ask about. */
export async function restoreSession(): Promise<void> {
  if (!csrfToken()) return setSession(null);
  if (!(await refreshSession())) setSession(null);
}

export function refreshSession(): Promise<boolean> {
  inFlight ??= exclusive(async () => {
    try {
      // Another tab may have renewed the shared cookies while this one waited: then adopt them.
      const current = await ask('GET', '/auth/me');
      if (current && Date.now() + (current.expires_in ?? 0) * 1000 > expiresAt + SLACK_MS) {
        setSession(current);
        return true;
      }
      const renewed = await ask('POST', '/auth/refresh');
      setSession(renewed);
      return renewed !== null;
    } catch {
      if (user) timer = setTimeout(() => void refreshSession(), RETRY_MS);
      return false;
    }
  }).finally(() => {
    inFlight = null;
  });
  return inFlight;
}

/** Signs out on the server (the sign-in is revoked, the cookies cleared), then here, whatever the server said. */
export async function endSession(): Promise<void> {
  try {
    await ask('POST', '/auth/logout');
  } catch {
    // Unreachable: the page forgets the session anyway.
  } finally {
    setSession(null);
  }
}

/** The session an auth route answers, or null when it refused; throws when the server cannot be reached. */
async function ask(method: 'GET' | 'POST', path: string): Promise<SessionAnswer | null> {
  const post = method === 'POST';
  const res = await fetch(`/api/v1${path}`, {
    method,
    credentials: 'same-origin',
    headers: post ? { 'content-type': 'application/json', ...csrfHeaders(method) } : {},
    body: post ? '{}' : undefined,
  });
  const body = await res.json().catch(() => null);
  return res.ok && body?.success && body.data?.user ? (body.data as SessionAnswer) : null;
}

/** Runs `fn` while no other tab of this origin runs it (Web Locks; secure contexts only, else just runs it). */
function exclusive<T>(fn: () => Promise<T>): Promise<T> {
  return 'locks' in navigator && navigator.locks ? navigator.locks.request('cns-session-refresh', fn) : fn();
}
