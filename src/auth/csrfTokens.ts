import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * CSRF tokens of the dashboard's cookie session: an HMAC of the sign-in's id under a key
 * derived from the signing secret. The browser gets it in the readable `cns_csrf` cookie and
 * echoes it in `X-CSRF-Token`; a token is valid for one sign-in only, so a cookie planted by
 * a sibling site (cookie tossing) or kept from an earlier sign-in does not pass.
 */
export class CsrfTokens {
  private readonly key: Buffer;

  constructor(signingSecret: Uint8Array) {
    this.key = Buffer.from(hkdfSync('sha256', signingSecret, 'cns csrf', 'cns:csrf:v1', 32));
  }

  tokenFor(sessionId: string): string {
    return createHmac('sha256', this.key).update(sessionId).digest('base64url');
  }

  /** Whether `presented` (the header's value) is this sign-in's token; compared in constant time. */
  matches(sessionId: string, presented: string | undefined): boolean {
    if (!presented) return false;
    const expected = Buffer.from(this.tokenFor(sessionId));
    const given = Buffer.from(presented);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
}
