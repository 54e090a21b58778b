import { createHmac } from 'node:crypto';

/** What the fingerprint signs: fixed, so every node with the same key computes the same value. */
const LABEL = 'cns cluster key fingerprint v1';

/**
 * A fingerprint of the signing secret (auth/signingSecret.ts) that says whether two nodes hold the
 * same key without revealing it: an HMAC-SHA256 of a fixed label keyed by the secret, in hex.
 * Every node of a cluster needs the same key (tokens, CSRF tokens and sealed secrets cross nodes).
 */
export function keyFingerprint(secret: Uint8Array): string {
  return createHmac('sha256', secret).update(LABEL).digest('hex');
}
