import { hkdfSync } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';

/** How long a person has between GET /oauth/{provider}/authorize and the callback. */
export const STATE_TTL_SECONDS = 600;

const ISSUER = 'cns';
const AUDIENCE = 'cns:oauth-state';

/** What a state binds: the request (its id, single-use), who started it, for which project and provider. */
export interface StateClaims {
  id: string;
  userId: string;
  projectId: string;
  provider: string;
}

/** Why a state was refused: tampered or foreign (`invalid`), or older than STATE_TTL_SECONDS (`expired`). */
export class StateRefused extends Error {
  constructor(readonly reason: 'invalid' | 'expired') {
    super(
      reason === 'expired'
        ? 'The authorization request expired (it is valid for 10 minutes): start again with GET /oauth/{provider}/authorize.'
        : 'The state is invalid or was altered: start again with GET /oauth/{provider}/authorize.',
    );
    this.name = 'StateRefused';
  }
}

/**
 * The OAuth `state`: an HS256 JWT under a key derived from the signing secret for this purpose
 * only (so no other token of the service verifies as a state, nor a state as anything else).
 * The signature makes it tamper-proof; single use is the pending row its id names (pendingStates.ts).
 */
export class StateTokens {
  private readonly key: Uint8Array;

  constructor(secret: Uint8Array) {
    this.key = new Uint8Array(hkdfSync('sha256', secret, 'cns oauth state', 'cns:oauth-state:v1', 32));
  }

  sign(c: StateClaims, nowMs = Date.now()): Promise<string> {
    const iat = Math.floor(nowMs / 1000);
    // Short on purpose: it travels in URLs, and providers cap the length of `state`.
    return new SignJWT({ prj: c.projectId, prv: c.provider })
      .setProtectedHeader({ alg: 'HS256', typ: 'oauth-state+jwt' })
      .setJti(c.id)
      .setSubject(c.userId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(iat + STATE_TTL_SECONDS)
      .sign(this.key);
  }

  async verify(token: string): Promise<StateClaims> {
    try {
      const { payload: p } = await jwtVerify(token, this.key, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'], typ: 'oauth-state+jwt', clockTolerance: 0 });
      if (typeof p.jti !== 'string' || typeof p.sub !== 'string' || typeof p.prj !== 'string' || typeof p.prv !== 'string') throw new StateRefused('invalid');
      return { id: p.jti, userId: p.sub, projectId: p.prj, provider: p.prv };
    } catch (err) {
      if (err instanceof StateRefused) throw err;
      throw new StateRefused(err instanceof errors.JWTExpired ? 'expired' : 'invalid');
    }
  }
}
