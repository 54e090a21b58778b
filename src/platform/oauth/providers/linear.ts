import { identifyFailed } from '../errors.ts';
import type { ProviderDef } from './types.ts';

const VIEWER = '{ viewer { id name email } }';

/**
 * Linear. Token endpoint: a form with client_id and client_secret; PKCE S256 supported; scopes
 * comma-separated. Access tokens last 24 hours with a refresh token (every app since April 2026).
 * Revocation is RFC 7009 at /oauth/revoke. Personal API keys go in `Authorization` without
 * `Bearer` (OAuth tokens with it); the GraphQL API answers auth failures with `errors`.
 */
export const linear: ProviderDef = {
  id: 'linear',
  displayName: 'Linear',
  client: 'linear',
  issuer: 'https://linear.app',
  endpoints: {
    authorization: 'https://linear.app/oauth/authorize',
    token: 'https://api.linear.app/oauth/token',
    revocation: 'https://api.linear.app/oauth/revoke',
  },
  apiBase: 'https://api.linear.app',
  // write: the push of titles, descriptions, states and assignees.
  scopes: ['read', 'write'],
  scopeSeparator: ',',
  pkce: true,
  clientAuth: 'post',
  async identify(call, token, kind) {
    const answer = await call({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: kind === 'token' ? token : `Bearer ${token}` },
      json: { query: VIEWER },
    });
    const body = answer.json<{ data?: { viewer?: { name?: string; email?: string } | null }; errors?: unknown[] }>();
    const viewer = body?.data?.viewer;
    if (answer.ok && viewer && !body?.errors?.length) return { account: viewer.email ?? viewer.name ?? null };
    // An unauthenticated GraphQL call is a 400 (or a 200) with errors: the key was refused.
    if (answer.status < 500 && body?.errors?.length) throw identifyFailed(linear, { ...answer, status: 401 });
    throw identifyFailed(linear, answer);
  },
  async revoke({ accessToken, refreshToken, rfc7009 }) {
    if (refreshToken) await rfc7009(refreshToken, 'refresh_token');
    await rfc7009(accessToken, 'access_token');
  },
  manualRevocation: 'Linear → Settings → Account → Security & access (API keys, authorized applications)',
};
