import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The HMAC secret that signs access tokens and presigned addresses. Generated on first start
 * and kept in the data folder, readable by the owner only, so tokens survive restarts.
 */
export function loadOrCreateSigningSecret(dataDir: string): Uint8Array {
  const file = join(dataDir, 'signing.key');
  if (existsSync(file)) {
    const secret = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (secret.length >= 32) return new Uint8Array(secret);
    throw new Error(`The signing secret in ${file} is too short; delete it to generate a new one (this signs everyone out).`);
  }
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(48);
  writeFileSync(file, secret.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return new Uint8Array(secret);
}
