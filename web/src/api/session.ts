/**
 * The signed-in session, kept in memory only (never localStorage): a reload signs out, and a
 * script injected into the page cannot read tokens from storage. The access token is refreshed
 * before it expires (and at once when the server answers 401); each refresh token works once,
 * so refreshes are serialized.
 */
export interface Tokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  user: { id: string; email: string; display_name: string | null; initialized: boolean };
}

let current: Tokens | null = null;
let timer: ReturnType<typeof setTimeout> | undefined;
let inFlight: Promise<boolean> | null = null;
const listeners = new Set<(t: Tokens | null) => void>();

export function sessionUser(): Tokens['user'] | null {
  return current?.user ?? null;
}

export function accessToken(): string | null {
  return current?.access_token ?? null;
}

export function onSessionChange(listener: (t: Tokens | null) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function setSession(tokens: Tokens | null): void {
  current = tokens;
  clearTimeout(timer);
  // Refresh well before expiry (a minute, or a fifth of a short lifetime), so no request meets an expired token.
  if (tokens) timer = setTimeout(() => void refreshSession(), Math.max(1, Math.min(tokens.expires_in - 60, tokens.expires_in * 0.8)) * 1000);
  for (const l of listeners) l(tokens);
}

export function refreshSession(): Promise<boolean> {
  inFlight ??= (async () => {
    const refresh = current?.refresh_token;
    if (!refresh) return false;
    const res = await fetch('/api/v1/auth/refresh', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: refresh }),
    });
    const body = await res.json().catch(() => null);
    if (!res.ok || !body?.success) {
      setSession(null);
      return false;
    }
    setSession(body.data as Tokens);
    return true;
  })().finally(() => {
    inFlight = null;
  });
  return inFlight;
}

export function refreshToken(): string | null {
  return current?.refresh_token ?? null;
}
