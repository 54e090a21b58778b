/** OAuth and token connections per project (migration 020): src/platform/oauth/. */
export interface OAuthTables {
  oauth_connections: OAuthConnectionsTable;
  oauth_states: OAuthStatesTable;
}

/** At most one per project and provider; the tokens only sealed (the row id as AAD). */
export interface OAuthConnectionsTable {
  id: string;
  project_id: string;
  provider: string;
  kind: 'oauth' | 'token';
  account: string | null;
  /** A JSON array of strings. */
  scopes: string;
  tokens_sealed: string;
  expires_at: string | null;
  /** 1 or 0. */
  needs_reauth: number;
  connected_by: string | null;
  connected_at: string;
  updated_at: string;
}

/** An authorization request in flight, one per signed state (its id); the PKCE verifier sealed. */
export interface OAuthStatesTable {
  id: string;
  user_id: string;
  project_id: string;
  provider: string;
  verifier_sealed: string | null;
  redirect_after: string | null;
  /** Unix time in milliseconds. */
  expires_at: number;
}
