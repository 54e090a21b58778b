import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { DEFAULT_PASSWORD_HASH_COST } from '../config/settings.ts';

export { DEFAULT_PASSWORD_HASH_COST };
const r = 8;
const p = 1;
const keyLength = 64;

function derive(password: string, salt: Buffer, N: number, r: number, p: number, keyLength: number): Promise<Buffer> {
  // Twice what scrypt needs (128 · N · r bytes), so a stored hash of a raised cost still verifies.
  const options: ScryptOptions = { N, r, p, maxmem: Math.max(64 * 1024 * 1024, 256 * N * r) };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** Hashes a password with scrypt; the parameters travel in the stored string, so the cost can be raised later. */
export async function hashPassword(password: string, cost = DEFAULT_PASSWORD_HASH_COST): Promise<string> {
  const salt = randomBytes(16);
  const N = 2 ** cost;
  const key = await derive(password, salt, N, r, p, keyLength);
  return ['scrypt', N, r, p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** Compares in constant time; a malformed stored hash simply does not match. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, saltB64, keyB64] = stored.split('$');
  if (scheme !== 'scrypt' || !saltB64 || !keyB64) return false;
  const expected = Buffer.from(keyB64, 'base64');
  const actual = await derive(password, Buffer.from(saltB64, 'base64'), Number(n), Number(r), Number(p), expected.length);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * A hash burned through for unknown emails, of the cost new passwords get, so that the time a
 * login takes does not reveal which emails exist.
 */
export function dummyPasswordHash(cost = DEFAULT_PASSWORD_HASH_COST): string {
  return `scrypt$${2 ** cost}$${r}$${p}$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(keyLength).toString('base64')}`;
}
