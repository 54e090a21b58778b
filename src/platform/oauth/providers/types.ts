import type { OAuthClientName } from '../../../config/settings.ts';
import type { ProviderCall } from '../providerCall.ts';

/** The provider's OAuth endpoints (absolute addresses). */
export interface OAuthEndpoints {
  /** Where the browser is sent to grant access. */
  authorization: string;
  token: string;
  /** An RFC 7009-style revocation endpoint, when the provider has one (see `revocation`). */
  revocation?: string;
}

/** Who a token belongs to, as the provider says. */
export interface Identity {
  /** A name a person recognizes: a login, an email, a workspace. */
  account: string | null;
  /** The scopes the provider reports for the token, when it reports them. */
  scopes?: string[];
}

/** What a provider's revocation gets: its own tokens, the app's credentials and the ways to call out. */
export interface RevokeContext {
  accessToken: string;
  refreshToken: string | null;
  client: { clientId: string; clientSecret: string };
  /** The provider's API, through the outbound guard. */
  call: ProviderCall;
  /** An RFC 7009 request to `endpoints.revocation` through openid-client (with the provider's client auth and quirks). */
  rfc7009(token: string, hint?: 'access_token' | 'refresh_token'): Promise<void>;
}

/**
 * One platform's OAuth facts, each checked against its documentation: endpoints, how the client
 * authenticates at the token endpoint, PKCE, scopes and their separator, how a token is checked
 * and revoked. Everything provider-specific lives here; the flow itself is shared.
 */
export interface ProviderDef {
  /** The `{provider}` path segment (spec 4.10), lowercase. */
  id: string;
  displayName: string;
  /**
   * The OAuth app (settings `CNS_OAUTH_<CLIENT>_CLIENT_ID`/`_SECRET`). Several providers may share
   * one app: the five Google providers will all use `google`, each asking its own scopes
   * (incremental authorization), while keeping one connection per provider.
   */
  client: OAuthClientName;
  /** The authorization server's identifier, for openid-client's metadata (no discovery is done). */
  issuer: string;
  endpoints: OAuthEndpoints;
  /** The public API base (the settings or the factory may point elsewhere, e.g. a local fake). */
  apiBase: string;
  /** What the authorization request asks for (the connectors' needs). */
  scopes: string[];
  /** How `scope` is joined in the authorization request (Linear: commas). */
  scopeSeparator: ' ' | ',';
  /** PKCE S256 in the authorization request and `code_verifier` in the token request. */
  pkce: boolean;
  /** Client authentication at the token (and revocation) endpoint: HTTP Basic, or client_id/client_secret in the body. */
  clientAuth: 'basic' | 'post';
  /** Further authorization request parameters (Notion `owner=user`; Google: `access_type=offline`, `include_granted_scopes=true`). */
  authorizeParams?: Record<string, string>;
  /** Departures from RFC 6749 at the token/revocation endpoints that the HTTP adapter smooths over. */
  quirks?: {
    /** The endpoints take JSON bodies instead of forms (Notion). */
    jsonBodies?: boolean;
    /** Errors come back with status 200 and an `error` member (GitHub). */
    errorsWith200?: boolean;
    /** Headers every OAuth endpoint request carries (Notion-Version). */
    headers?: Record<string, string>;
  };
  /**
   * Checks a token against the provider and says whose it is. `kind` token is a personal or
   * integration token (Linear's personal keys are sent without `Bearer`). Throws TokenRefused
   * with the provider's words when the provider refuses the token.
   */
  identify(call: ProviderCall, token: string, kind: 'oauth' | 'token'): Promise<Identity>;
  /** The account named in the token answer itself (Notion's workspace), saving a call. */
  accountFromGrant?(grant: Record<string, unknown>): string | null;
  /** Revokes an OAuth grant's tokens at the provider; absent when the provider offers no revocation. */
  revoke?(ctx: RevokeContext): Promise<void>;
  /** Where a person removes the access by hand (personal tokens, providers without revocation). */
  manualRevocation: string;
}
