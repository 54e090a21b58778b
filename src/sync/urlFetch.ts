import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { redactUrl } from '../logging/redact.ts';
import { isPublicAddress } from './publicAddress.ts';

export interface FetchUrlOptions {
  maxBytes: number;
  timeoutMs?: number;
  /** Allow loopback and private addresses (CNS_URL_FETCH_ALLOW_PRIVATE; off by default). */
  allowPrivate?: boolean;
}

const MAX_REDIRECTS = 5;

/**
 * Resolves like dns.lookup but refuses non-public addresses. It runs when each connection is
 * made (redirect targets included), so a name cannot pass a check and then resolve elsewhere.
 */
const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const list = addresses as LookupAddress[];
    const refused = list.find((a) => !isPublicAddress(a.address));
    if (refused || list.length === 0) {
      return callback(Object.assign(new Error(`${hostname} resolves to a non-public address (${refused?.address ?? 'none'})`), { code: 'ENOTPUBLIC' }), '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
    return callback(null, list[0]!.address, list[0]!.family);
  });
};

function get(url: URL, options: FetchUrlOptions, signal: AbortSignal): Promise<IncomingMessage> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', signal, lookup: options.allowPrivate ? undefined : publicOnlyLookup }, resolve);
    req.once('error', reject);
    req.end();
  });
}

/**
 * Fetches one URL for a `url` sync: http(s) only, public addresses only by default, bounded in
 * time, size and redirects. Error messages (recorded in sync runs) name the address redacted.
 */
export async function fetchUrl(url: string, options: FetchUrlOptions): Promise<{ bytes: Buffer; contentType: string | null }> {
  const signal = AbortSignal.timeout(options.timeoutMs ?? 15_000);
  let current = new URL(url);
  for (let hop = 0; ; hop++) {
    if (current.protocol !== 'http:' && current.protocol !== 'https:') throw new Error(`unsupported scheme ${current.protocol}`);
    if (!options.allowPrivate && isLiteralPrivate(current.hostname)) throw new Error(`${current.hostname} is not a public address`);
    const res = await get(current, options, signal);
    const status = res.statusCode ?? 0;
    if (status >= 300 && status < 400 && res.headers.location) {
      res.resume();
      if (hop >= MAX_REDIRECTS) throw new Error(`too many redirects from ${redactUrl(url)}`);
      current = new URL(res.headers.location, current);
      continue;
    }
    if (status < 200 || status >= 300) {
      res.resume();
      throw new Error(`GET ${redactUrl(current.toString())} answered ${status}`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res as AsyncIterable<Buffer>) {
      size += chunk.byteLength;
      if (size > options.maxBytes) {
        res.destroy();
        throw new Error(`${redactUrl(url)} is larger than ${options.maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
    return { bytes: Buffer.concat(chunks), contentType: (res.headers['content-type'] as string | undefined) ?? null };
  }
}

/** IP literals never go through the lookup, so they are checked here. */
function isLiteralPrivate(hostname: string): boolean {
  const bare = hostname.replace(/^\[|\]$/g, '');
  return /^[\d.]+$|:/.test(bare) && !isPublicAddress(bare);
}
