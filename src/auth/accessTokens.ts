import { SignJWT, jwtVerify } from 'jose';

const ISSUER = 'cns';
const AUDIENCE = 'cns-api';

const VERIFIED_CACHE_SIZE = 10_000;

/**
 * Signs and verifies the short-lived user access tokens (HS256 JWTs). A token's signature never
 * changes, so a verified token is remembered (bounded, insertion-ordered eviction) and later
 * requests only check its expiry: verification is the costliest step of an authenticated read.
 */
export class AccessTokens {
  private readonly verified = new Map<string, { userId: string; expiresAtMs: number }>();

  constructor(
    private readonly secret: Uint8Array,
    readonly ttlSeconds: number,
  ) {}

  sign(userId: string): Promise<string> {
    return new SignJWT({ typ: 'access' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(userId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${this.ttlSeconds}s`)
      .sign(this.secret);
  }

  /** The user id of a valid token, or null for anything expired, tampered or foreign. */
  async verify(token: string): Promise<string | null> {
    const known = this.verified.get(token);
    if (known) {
      if (known.expiresAtMs > Date.now()) return known.userId;
      this.verified.delete(token);
      return null;
    }
    try {
      const { payload } = await jwtVerify(token, this.secret, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
      if (payload.typ !== 'access' || typeof payload.sub !== 'string' || typeof payload.exp !== 'number') return null;
      if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value!);
      this.verified.set(token, { userId: payload.sub, expiresAtMs: payload.exp * 1000 });
      return payload.sub;
    } catch {
      return null;
    }
  }
}
