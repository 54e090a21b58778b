import * as client from 'openid-client';
import { ProviderError } from '../runtime/providerError.ts';
import type { OutboundFetch } from './outboundFetch.ts';
import type { ProviderDef } from './providers/types.ts';
import { splitScopes } from './scopes.ts';

/** An OAuth app's credentials (settings `CNS_OAUTH_<CLIENT>_CLIENT_ID`/`_SECRET`). */
export interface OAuthApp {
  clientId: string;
  clientSecret: string;
}

/** What a token endpoint granted. `answer` is the whole answer: it holds the tokens, never log it. */
export interface Grant {
  accessToken: string;
  refreshToken: string | null;
  /** ISO time the access token expires; null when the provider did not say (it does not expire). */
  expiresAt: string | null;
  /** The granted scopes, or null when the answer did not list them. */
  scopes: string[] | null;
  answer: Record<string, unknown>;
}

/**
 * The provider answered a grant or revocation with an OAuth error (invalid_grant, bad_verification_code,
 * invalid_client…): the request will not succeed by retrying, unlike a ProviderError.
 */
export class GrantRefused extends Error {
  constructor(
    readonly provider: string,
    readonly error: string,
    readonly description: string | null,
  ) {
    super(`${provider} refused: ${error}${description ? ` (${description})` : ''}`);
    this.name = 'GrantRefused';
  }
}

/**
 * One provider's OAuth client over openid-client: the authorization URL, the code exchange, the
 * refresh and RFC 7009 revocation, with the provider's metadata given by hand (no discovery),
 * its client authentication, and its HTTP through the outbound guard. The provider's departures
 * from the RFCs (JSON bodies, errors sent as 200) are smoothed over in the HTTP adapter below,
 * so openid-client sees a conforming server.
 */
export class OAuthClient {
  private readonly config: client.Configuration;

  constructor(
    private readonly def: ProviderDef,
    app: OAuthApp,
    fetch: OutboundFetch,
  ) {
    const server: client.ServerMetadata = {
      issuer: def.issuer,
      authorization_endpoint: def.endpoints.authorization,
      token_endpoint: def.endpoints.token,
      ...(def.endpoints.revocation ? { revocation_endpoint: def.endpoints.revocation } : {}),
    };
    const auth = def.clientAuth === 'basic' ? plainBasic(app) : client.ClientSecretPost(app.clientSecret);
    this.config = new client.Configuration(server, app.clientId, { client_secret: app.clientSecret }, auth);
    this.config[client.customFetch] = quirkFetch(def, fetch);
    // Plain http only when an endpoint was configured so (a local fake provider).
    if (Object.values(def.endpoints).some((u) => u && new URL(u).protocol === 'http:')) client.allowInsecureRequests(this.config);
  }

  authorizationUrl(p: { redirectUri: string; state: string; codeChallenge: string | null }): URL {
    const params: Record<string, string> = { redirect_uri: p.redirectUri, state: p.state, ...this.def.authorizeParams };
    if (this.def.scopes.length) params.scope = this.def.scopes.join(this.def.scopeSeparator);
    if (p.codeChallenge) {
      params.code_challenge = p.codeChallenge;
      params.code_challenge_method = 'S256';
    }
    return client.buildAuthorizationUrl(this.config, params);
  }

  /** Exchanges the code the provider sent to `callbackUrl` (which carries `code` and `state`). */
  exchange(callbackUrl: URL, checks: { state: string; verifier: string | null }): Promise<Grant> {
    return this.grant(() =>
      client.authorizationCodeGrant(this.config, callbackUrl, { expectedState: checks.state, pkceCodeVerifier: checks.verifier ?? undefined }),
    );
  }

  refresh(refreshToken: string): Promise<Grant> {
    return this.grant(() => client.refreshTokenGrant(this.config, refreshToken));
  }

  async revoke(token: string, hint?: 'access_token' | 'refresh_token'): Promise<void> {
    try {
      await client.tokenRevocation(this.config, token, hint ? { token_type_hint: hint } : undefined);
    } catch (err) {
      throw this.failure(err);
    }
  }

  private async grant(run: () => Promise<client.TokenEndpointResponse>): Promise<Grant> {
    let answer: client.TokenEndpointResponse;
    try {
      answer = await run();
    } catch (err) {
      throw this.failure(err);
    }
    const expiresIn = typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in : null;
    return {
      accessToken: answer.access_token,
      refreshToken: typeof answer.refresh_token === 'string' && answer.refresh_token !== '' ? answer.refresh_token : null,
      expiresAt: expiresIn === null ? null : new Date(Date.now() + expiresIn * 1000).toISOString(),
      scopes: typeof answer.scope === 'string' ? splitScopes(answer.scope) : null,
      answer: answer as unknown as Record<string, unknown>,
    };
  }

  /**
   * openid-client's errors as ours, keeping only what is safe to show and log: the OAuth error
   * code and description, or the status and message. Its `cause` may hold the provider's whole
   * answer (tokens included), so it is never passed on.
   */
  private failure(err: unknown): Error {
    const provider = this.def.displayName;
    if (err instanceof client.ResponseBodyError) return new GrantRefused(provider, err.error, err.error_description ?? null);
    if (err instanceof client.AuthorizationResponseError) return new GrantRefused(provider, err.error, err.error_description ?? null);
    if (err instanceof client.WWWAuthenticateChallengeError) {
      const challenge = err.cause[0];
      return new GrantRefused(provider, challenge?.parameters.error ?? 'invalid_client', challenge?.parameters.error_description ?? null);
    }
    const cause = (err as { cause?: unknown }).cause;
    const status = cause instanceof Response ? cause.status : null;
    const message = err instanceof client.ClientError ? `${err.message} (${err.code ?? 'unknown'})` : (err as Error)?.message ?? String(err);
    return new ProviderError(this.def.id, status, message);
  }
}

/**
 * HTTP Basic client authentication as the providers document it: base64 of `id:secret` as they
 * are. openid-client form-encodes both first (RFC 6749 2.3.1), which turns every `-` of Notion's
 * UUID client ids into `%2D`, and Notion and Airtable do not decode it.
 */
function plainBasic(app: OAuthApp): client.ClientAuth {
  const credentials = Buffer.from(`${app.clientId}:${app.clientSecret}`, 'utf8').toString('base64');
  return (_as, _client, _body, headers) => headers.set('authorization', `Basic ${credentials}`);
}

/**
 * The provider's HTTP quirks, undone for openid-client: its fixed headers (Notion-Version), JSON
 * bodies where it wants JSON (Notion), and errors it sends with status 200 (GitHub) turned into
 * the 400 an OAuth error is.
 */
function quirkFetch(def: ProviderDef, fetch: OutboundFetch): client.CustomFetch {
  const quirks = def.quirks ?? {};
  return async (url, options) => {
    const headers: Record<string, string> = { ...options.headers, ...quirks.headers };
    let body = options.body;
    if (quirks.jsonBodies && body instanceof URLSearchParams) {
      body = JSON.stringify(Object.fromEntries(body));
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(url, { method: options.method, headers, body, signal: options.signal, redirect: options.redirect });
    if (!quirks.errorsWith200 || res.status !== 200) return res;
    const text = await res.text();
    let error = false;
    try {
      error = typeof (JSON.parse(text) as { error?: unknown }).error === 'string';
    } catch {
      /* not JSON: openid-client says so */
    }
    return new Response(text, { status: error ? 400 : 200, headers: res.headers });
  };
}
