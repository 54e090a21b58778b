import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** Headers by which one node vouches for a request it sends another (a forwarded request, an internal call). */
export const NODE_HEADER = 'x-cns-node';
export const NODE_TS_HEADER = 'x-cns-node-ts';
export const NODE_SIG_HEADER = 'x-cns-node-sig';

/** How long a signature holds: node clocks may differ by this much. */
const VALID_MS = 30_000;

/**
 * The key nodes sign each other's requests with, derived from the signing secret every node of a
 * cluster shares (membership refuses a node whose secret differs), so no second secret is needed.
 */
export function clusterKey(signingSecret: Uint8Array): Buffer {
  return createHmac('sha256', signingSecret).update('cns cluster requests v1').digest();
}

/** The headers that make `method path` from node `node` trusted by the other nodes, for 30 s. */
export function signedHeaders(key: Buffer, node: string, method: string, path: string, now = Date.now()): Record<string, string> {
  const ts = String(now);
  return { [NODE_HEADER]: node, [NODE_TS_HEADER]: ts, [NODE_SIG_HEADER]: sign(key, node, method, path, ts) };
}

/** The node that signed this request, or null when it is unsigned, stale or forged. */
export function verifiedNode(key: Buffer, headers: IncomingHttpHeaders, method: string, path: string, now = Date.now()): string | null {
  const node = headers[NODE_HEADER];
  const ts = headers[NODE_TS_HEADER];
  const sig = headers[NODE_SIG_HEADER];
  if (typeof node !== 'string' || typeof ts !== 'string' || typeof sig !== 'string' || !/^\d{1,15}$/.test(ts)) return null;
  if (Math.abs(now - Number(ts)) > VALID_MS) return null;
  const want = Buffer.from(sign(key, node, method, path, ts));
  const got = Buffer.from(sig);
  return got.length === want.length && timingSafeEqual(got, want) ? node : null;
}

function sign(key: Buffer, node: string, method: string, path: string, ts: string): string {
  return createHmac('sha256', key).update(`${node}\n${method.toUpperCase()}\n${path}\n${ts}`).digest('base64url');
}
