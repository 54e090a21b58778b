import { createHmac, timingSafeEqual } from 'node:crypto';

/** `sha256=<hex HMAC-SHA256 of the raw body under the hook's secret>`, as GitHub's X-Hub-Signature-256. */
export function signatureOf(secret: string | Buffer, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** What a receiver does: recompute over the bytes received and compare in constant time. */
export function verifySignature(secret: string | Buffer, body: string | Buffer, header: string | undefined): boolean {
  if (!header) return false;
  const expected = Buffer.from(signatureOf(secret, body));
  const given = Buffer.from(header);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
