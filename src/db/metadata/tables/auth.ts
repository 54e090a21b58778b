/** Sign-ins (migration 001): the tables of the auth domain on the metadata store so far. */
export interface AuthTables {
  refresh_tokens: RefreshTokensTable;
}

export interface RefreshTokensTable {
  id: string;
  user_id: string;
  /** One sign-in: every token a rotation issues keeps it (the cookie session's id). */
  family_id: string;
  /** SHA-256 of the token; the token itself is never stored. */
  token_hash: string;
  created_at: string;
  expires_at: string;
  rotated_at: string | null;
  revoked_at: string | null;
}
