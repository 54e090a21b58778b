import { api } from '../api/client.ts';
import { refreshToken, setSession } from '../api/session.ts';

/** Revokes the refresh token on the server (so it cannot be replayed), then forgets both tokens. */
export async function signOut(): Promise<void> {
  const token = refreshToken();
  try {
    if (token) await api('POST', '/auth/logout', { refresh_token: token });
  } finally {
    setSession(null);
  }
}
