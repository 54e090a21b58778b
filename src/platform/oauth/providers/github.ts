import { ProviderError } from '../../runtime/providerError.ts';
import { identifyFailed } from '../errors.ts';
import { splitScopes } from '../scopes.ts';
import type { ProviderDef } from './types.ts';

const API_HEADERS = { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' };

/**
 * GitHub (OAuth apps, and GitHub Apps acting for a user). Token endpoint: client_id and
 * client_secret in the form; JSON only when asked with `Accept: application/json` (openid-client
 * sends it), and errors come back as 200 with an `error` member. PKCE S256 is supported (2025).
 * OAuth-app tokens do not expire; GitHub-App user tokens expire in 8 hours with a refresh token
 * (rotated on refresh). `scope` comes back comma-separated.
 */
export const github: ProviderDef = {
  id: 'github',
  displayName: 'GitHub',
  client: 'github',
  issuer: 'https://github.com',
  endpoints: {
    authorization: 'https://github.com/login/oauth/authorize',
    token: 'https://github.com/login/oauth/access_token',
  },
  apiBase: 'https://api.github.com',
  // repo: contents (read, and push's commits), issues and pull requests of private repositories too.
  scopes: ['repo', 'read:user'],
  scopeSeparator: ' ',
  pkce: true,
  clientAuth: 'post',
  quirks: { errorsWith200: true },
  async identify(call, token) {
    const answer = await call({ url: '/user', headers: { ...API_HEADERS, authorization: `Bearer ${token}` } });
    if (!answer.ok) throw identifyFailed(github, answer);
    const user = answer.json<{ login?: string }>();
    // Classic tokens list their scopes in a header; fine-grained tokens and GitHub-App tokens have none.
    const header = answer.headers.get('x-oauth-scopes');
    return { account: user?.login ?? null, scopes: header === null ? undefined : splitScopes(header) };
  },
  /**
   * DELETE /applications/{client_id}/token revokes this one token (Basic auth with the app's
   * credentials). Not /grant: that would delete every token the person gave the app, including
   * the connections of their other projects. 404: the token was already gone.
   */
  async revoke({ accessToken, client, call }) {
    const basic = Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64');
    const answer = await call({
      method: 'DELETE',
      url: `/applications/${encodeURIComponent(client.clientId)}/token`,
      headers: { ...API_HEADERS, authorization: `Basic ${basic}` },
      json: { access_token: accessToken },
    });
    if (!answer.ok && answer.status !== 404) throw new ProviderError('github', answer.status, answer.message());
  },
  manualRevocation: 'GitHub → Settings → Applications (or Developer settings → Personal access tokens)',
};
