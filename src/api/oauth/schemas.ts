import { z } from 'zod';
import { oauthProviderIds } from '../../platform/oauth/providers/index.ts';

const id = z.string().min(1).max(100);
/** Printable ASCII without spaces: what tokens and codes are, and what an HTTP header may carry. */
const opaque = (max: number) => z.string().min(1).max(max).regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces');

export const providerParams = z.object({ provider: z.enum(oauthProviderIds) });
export const projectQuery = z.object({ project_id: id });
export const authorizeQuery = z.object({
  project_id: id,
  redirect_uri: z.string().min(1).max(2048).optional().describe('Where the browser goes after the callback: a path, or an address on this service\'s origin.'),
});
export const callbackQuery = z.object({
  code: z.string().max(4096).optional(),
  state: z.string().max(4096).optional(),
  error: z.string().max(200).optional(),
  error_description: z.string().max(1000).optional(),
});
export const callbackBody = z.object({ code: opaque(4096), state: opaque(4096) });
export const tokenBody = z.object({ project_id: id, token: opaque(4096).describe('A personal or integration token; checked with the provider, then stored encrypted, never shown again.') });

export const connectionSchema = z.object({
  provider: z.string(),
  project_id: z.string(),
  connected: z.boolean(),
  kind: z.enum(['oauth', 'token']).nullable(),
  account: z.string().nullable(),
  scopes: z.array(z.string()),
  expires_at: z.string().nullable().describe('When the access token expires (it is refreshed before use); null: it does not.'),
  needs_reauth: z.boolean(),
  connected_at: z.string().nullable(),
  oauth_configured: z.boolean().describe('Whether this server has the provider\'s OAuth app (CNS_OAUTH_<PROVIDER>_CLIENT_ID/_SECRET).'),
});

export const authorizeAnswer = z.object({
  provider: z.string(),
  project_id: z.string(),
  authorization_url: z.string(),
  redirect_uri: z.string().describe('The callback URL the provider sends the browser to; register it with the OAuth app.'),
  expires_at: z.string(),
});

export const disconnectAnswer = z.object({
  provider: z.string(),
  project_id: z.string(),
  disconnected: z.literal(true),
  revoked: z.boolean().describe('Whether the provider confirmed revoking the tokens.'),
  revocation_error: z.string().nullable(),
  revoke_manually: z.string().nullable().describe('Where to remove the access by hand when it was not revoked here.'),
});
