import { createHash, randomBytes } from 'node:crypto';

export const ACCESS_KEY_PREFIX = 'cns_';

/**
 * Access keys are 256 random bits with a recognisable prefix (secret scanners can spot them).
 * They have full entropy, so a plain SHA-256 is a safe way to store them: no salt or
 * stretching is needed and look-up stays a single indexed query.
 */
export function generateAccessKey(): { key: string; hash: string; displayPrefix: string } {
  const key = ACCESS_KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key, hash: hashAccessKey(key), displayPrefix: key.slice(0, ACCESS_KEY_PREFIX.length + 6) };
}

export function hashAccessKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export const looksLikeAccessKey = (token: string): boolean => token.startsWith(ACCESS_KEY_PREFIX);
