import { SignJWT, jwtVerify } from 'jose';

const ISSUER = 'cns';
const AUDIENCE = 'cns-api';

const VERIFIED_CACHE_SIZE = 10_000;

/** What a valid access token says: whose it is, the sign-in it belongs to (cookie sessions only) and when it expires. */
export interface AccessClaims {
  userId: string;
  /** The refresh-token family of a dashboard cookie session; null for a bearer token. */
  sessionId: string | null;
  expiresAtMs: number;
}

/**
 * Signs and verifies the short-lived user access tokens (HS256 JWTs). A token's signature never
 * changes, so a verified token is remembered (bounded, insertion-ordered eviction) and later
 * requests only check its expiry: verification is the costliest step of an authenticated read.
 */
export class AccessTokens {
  private readonly verified = new Map<string, AccessClaims>();

  constructor(
    private readonly secret: Uint8Array,
    readonly ttlSeconds: number,
  ) {}

  /** A session id binds the token to one sign-in, so it dies with it (logout, reuse of its refresh token). */
  sign(userId: string, sessionId?: string): Promise<string> {
    return new SignJWT(sessionId ? { typ: 'access', sid: sessionId } : { typ: 'access' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(userId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .sign(this.secret);
  }

  /** The claims of a valid token, or null for anything expired, tampered or foreign. */
  async verify(token: string): Promise<AccessClaims | null> {
    const known = this.verified.get(token);
    if (known) {
      if (known.expiresAtMs > Date.now()) return known;
      this.verified.delete(token);
      return null;
    }
    try {
      const { payload } = await jwtVerify(token, this.secret, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
      if (payload.typ !== 'access' || typeof payload.sub !== 'string' || typeof payload.exp !== 'number') return null;
      const sessionId = typeof payload.sid === 'string' ? payload.sid : null;
      if (payload.sid !== undefined && sessionId === null) return null;
      const claims: AccessClaims = { userId: payload.sub, sessionId, expiresAtMs: payload.exp * 1000 };
      if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, claims);
      return claims;
    } catch {
      return null;
    }
  }
}
