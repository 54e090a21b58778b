import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value that cannot be opened: wrong key, wrong record (AAD), tampered or unknown format. */
export class SecretBoxError extends Error {
  constructor(message = 'The sealed secret cannot be opened (wrong key or record, or altered).') {
    super(message);
    this.name = 'SecretBoxError';
  }
}

/**
 * Encryption at rest for secrets the service must use later (an MCP proxy's header values):
 * AES-256-GCM under a key derived with HKDF-SHA256 from the service's signing secret and a
 * purpose label (so one purpose's key never opens another's), a random 12-byte IV per value,
 * and the record's id as additional data, so a sealed value copied onto another row fails to
 * open. Format: `v1.<iv>.<ciphertext>.<tag>` in base64url, versioned for a later change.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(secret: Uint8Array, purpose: string) {
    if (!purpose) throw new Error('a SecretBox needs a purpose label');
    this.key = Buffer.from(hkdfSync('sha256', secret, 'cns secret box', `cns:${purpose}:${VERSION}`, 32));
  }

  seal(plaintext: string | Buffer, aad: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return [VERSION, iv, body, cipher.getAuthTag()].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  open(sealed: string, aad: string): Buffer {
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== VERSION) throw new SecretBoxError('Unknown sealed-secret format.');
    const [iv, body, tag] = parts.slice(1).map((p) => Buffer.from(p, 'base64url')) as [Buffer, Buffer, Buffer];
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretBoxError('Unknown sealed-secret format.');
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(body), decipher.final()]);
    } catch {
      throw new SecretBoxError();
    }
  }
}
