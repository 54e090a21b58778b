import { identifyFailed } from '../errors.ts';
import type { ProviderDef } from './types.ts';

/** The API version every Notion request names (its OAuth endpoints included). */
export const NOTION_VERSION = '2022-06-28';

/**
 * Notion public integrations. The token, refresh and revoke endpoints take JSON bodies with HTTP
 * Basic client authentication and a Notion-Version header; no PKCE and no scopes (an integration's
 * capabilities are set in its settings, pages are shared with it by the person). `owner=user` is
 * required in the authorization request. Newer tokens come with a refresh token (rotated).
 * Internal integrations connect with their token instead (POST /oauth/notion/token).
 */
export const notion: ProviderDef = {
  id: 'notion',
  displayName: 'Notion',
  client: 'notion',
  issuer: 'https://api.notion.com',
  endpoints: {
    authorization: 'https://api.notion.com/v1/oauth/authorize',
    token: 'https://api.notion.com/v1/oauth/token',
    revocation: 'https://api.notion.com/v1/oauth/revoke',
  },
  apiBase: 'https://api.notion.com',
  scopes: [],
  scopeSeparator: ' ',
  pkce: false,
  clientAuth: 'basic',
  authorizeParams: { owner: 'user' },
  quirks: { jsonBodies: true, headers: { 'notion-version': NOTION_VERSION } },
  async identify(call, token) {
    const answer = await call({ url: '/v1/users/me', headers: { authorization: `Bearer ${token}`, 'notion-version': NOTION_VERSION } });
    if (!answer.ok) throw identifyFailed(notion, answer);
    const me = answer.json<{ name?: string | null; bot?: { workspace_name?: string | null } }>();
    return { account: me?.bot?.workspace_name ?? me?.name ?? null };
  },
  accountFromGrant: (grant) => (typeof grant.workspace_name === 'string' ? grant.workspace_name : null),
  // POST /v1/oauth/revoke {token}: revoking the access token ends the integration's access.
  revoke: ({ accessToken, rfc7009 }) => rfc7009(accessToken),
  manualRevocation: 'Notion → Settings → Connections',
};
