import { DomainError } from '../../../errors/domainError.ts';
import { identifyFailed } from '../errors.ts';
import type { ProviderDef } from './types.ts';

/** The OpenID Connect UserInfo endpoint: the account's email for a token holding the email scope. */
export const GOOGLE_USERINFO = 'https://www.googleapis.com/oauth2/v3/userinfo';

/**
 * The email scope (`email` is its alias; Google reports the long form in the token answer). It is
 * non-sensitive (no app verification) and lets identify name the account: the API scopes alone
 * say nothing of whose mailbox, drive or calendar it is (Docs and Sheets have no "who am I" call).
 */
export const GOOGLE_EMAIL_SCOPE = 'https://www.googleapis.com/auth/userinfo.email';

/** The narrowest scope each Google provider's connector needs: read-only unless it pushes. */
export const GOOGLE_SCOPES: Record<string, string[]> = {
  gmail: ['https://www.googleapis.com/auth/gmail.readonly'],
  'google-calendar': ['https://www.googleapis.com/auth/calendar.readonly'],
  'google-drive': ['https://www.googleapis.com/auth/drive.readonly'],
  // The push rewrites documents; the Docs API tells no version, so whether a document changed is
  // read from its Drive metadata (`version`), which needs no access to Drive's content.
  'google-docs': ['https://www.googleapis.com/auth/documents', 'https://www.googleapis.com/auth/drive.metadata.readonly'],
  // The push writes cells: the narrowest scope that reads and writes spreadsheets; Drive's
  // metadata (a file's version) lets a run skip a spreadsheet that has not changed.
  'google-sheets': ['https://www.googleapis.com/auth/spreadsheets', 'https://www.googleapis.com/auth/drive.metadata.readonly'],
};

/**
 * One Google provider. All five share the `google` OAuth app (CNS_OAUTH_GOOGLE_CLIENT_ID/_SECRET,
 * a "Web application" client) and Google's endpoints; each asks only its own scopes.
 *
 * - PKCE S256, client_id/client_secret in the token request's form.
 * - `access_type=offline` so a refresh token comes; `prompt=consent` because Google sends the
 *   refresh token only at a consent, and a person reconnecting (or connecting a second Google
 *   provider) would otherwise get none; `include_granted_scopes=true` (incremental authorization):
 *   the grant keeps the scopes given to the app before, so connecting Drive after Gmail does not
 *   take Gmail's scopes away from the Google account's grant.
 * - Access tokens last an hour; a refresh answer has no new refresh token (the old one stays valid).
 * - identify: the UserInfo endpoint with the token as a Bearer header (never in a URL, unlike
 *   tokeninfo, which Google documents as a debugging aid), made possible by the email scope.
 *   The granted scopes come from the token answer's `scope` (with incremental authorization they
 *   include the app's other Google scopes).
 * - Revocation: RFC 7009-style POST to /revoke with the token in a form. Google revokes the whole
 *   grant of the app for the Google account (refresh and access tokens, every scope granted
 *   incrementally), so the refresh token is the one sent when there is one.
 * - No personal tokens: Google has no equivalent of a personal access token for these APIs.
 */
function googleProvider(id: string, displayName: string): ProviderDef {
  const def: ProviderDef = {
    id,
    displayName,
    client: 'google',
    issuer: 'https://accounts.google.com',
    endpoints: {
      authorization: 'https://accounts.google.com/o/oauth2/v2/auth',
      token: 'https://oauth2.googleapis.com/token',
      revocation: 'https://oauth2.googleapis.com/revoke',
    },
    apiBase: GOOGLE_API_BASES[id]!,
    scopes: [...GOOGLE_SCOPES[id]!, GOOGLE_EMAIL_SCOPE],
    scopeSeparator: ' ',
    pkce: true,
    clientAuth: 'post',
    authorizeParams: { access_type: 'offline', include_granted_scopes: 'true', prompt: 'consent' },
    async identify(call, token, kind) {
      if (kind === 'token') throw oauthOnly(def);
      const answer = await call({ url: GOOGLE_USERINFO, headers: { authorization: `Bearer ${token}` } });
      if (!answer.ok) throw identifyFailed(def, answer);
      const me = answer.json<{ sub?: string; email?: string }>();
      return { account: me?.email ?? me?.sub ?? null };
    },
    revoke: ({ accessToken, refreshToken, rfc7009 }) => (refreshToken ? rfc7009(refreshToken, 'refresh_token') : rfc7009(accessToken, 'access_token')),
    manualRevocation: 'Google Account → Security → Your connections to third-party apps & services',
  };
  return def;
}

/** The APIs' public addresses (settings CNS_<PROVIDER>_API_URL replace them). */
const GOOGLE_API_BASES: Record<string, string> = {
  gmail: 'https://gmail.googleapis.com',
  'google-calendar': 'https://www.googleapis.com',
  'google-drive': 'https://www.googleapis.com',
  'google-docs': 'https://docs.googleapis.com',
  'google-sheets': 'https://sheets.googleapis.com',
};

/** POST /oauth/{google provider}/token: a 422 saying how to connect instead. */
function oauthOnly(def: ProviderDef): DomainError {
  const message = `${def.displayName} connects through OAuth only (Google has no personal tokens for its APIs): start with GET /oauth/${def.id}/authorize.`;
  return new DomainError('VALIDATION_ERROR', message, [{ field: 'token', message }]);
}

export const gmail = googleProvider('gmail', 'Gmail');
export const googleCalendar = googleProvider('google-calendar', 'Google Calendar');
export const googleDrive = googleProvider('google-drive', 'Google Drive');
export const googleDocs = googleProvider('google-docs', 'Google Docs');
export const googleSheets = googleProvider('google-sheets', 'Google Sheets');

export const googleProviders: readonly ProviderDef[] = [gmail, googleDrive, googleDocs, googleSheets, googleCalendar];
