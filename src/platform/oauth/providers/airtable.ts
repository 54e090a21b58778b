import { identifyFailed } from '../errors.ts';
import { splitScopes } from '../scopes.ts';
import type { ProviderDef } from './types.ts';

/**
 * Airtable. PKCE S256 is required; the token endpoint takes a form with HTTP Basic client
 * authentication (for integrations with a secret). Access tokens last an hour; refresh tokens
 * (60 days) are single-use, so every refresh stores the new one. Scopes are space-separated.
 * Airtable documents no revocation endpoint: a disconnect deletes the tokens here, and the
 * person removes the integration in Airtable.
 */
export const airtable: ProviderDef = {
  id: 'airtable',
  displayName: 'Airtable',
  client: 'airtable',
  issuer: 'https://airtable.com',
  endpoints: {
    authorization: 'https://airtable.com/oauth2/v1/authorize',
    token: 'https://airtable.com/oauth2/v1/token',
  },
  apiBase: 'https://api.airtable.com',
  // Rows (read, and the push of field changes), the bases' schemas, and whoami's email.
  scopes: ['data.records:read', 'data.records:write', 'schema.bases:read', 'user.email:read'],
  scopeSeparator: ' ',
  pkce: true,
  clientAuth: 'basic',
  async identify(call, token) {
    const answer = await call({ url: '/v0/meta/whoami', headers: { authorization: `Bearer ${token}` } });
    if (!answer.ok) throw identifyFailed(airtable, answer);
    const me = answer.json<{ id?: string; email?: string; scopes?: string[] | string }>();
    const scopes = Array.isArray(me?.scopes) ? me.scopes : typeof me?.scopes === 'string' ? splitScopes(me.scopes) : undefined;
    return { account: me?.email ?? me?.id ?? null, scopes };
  },
  manualRevocation: 'Airtable → Builder hub → Personal access tokens / Integrations',
};
