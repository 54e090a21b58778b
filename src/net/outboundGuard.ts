import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Addresses a server-side request must not reach unless the operator allows it
 * (CNS_URL_FETCH_ALLOW_PRIVATE): loopback, private, link-local (cloud metadata lives at
 * 169.254.169.254), carrier-grade NAT, multicast, reserved and unspecified ranges, and their
 * IPv4-mapped IPv6 forms. Otherwise a url sync or an MCP proxy would let a project's members
 * reach services on the server's own network.
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return !blocked.check(address, 'ipv4');
  if (family !== 6) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return !blocked.check(mapped[1]!, 'ipv4');
  // The URL parser writes mapped addresses in hex (::ffff:7f00:1): decode them too.
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex) {
    const [hi, lo] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
    return !blocked.check(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, 'ipv4');
  }
  return !blocked.check(address, 'ipv6');
}

/** A destination the guard refused (`code` ENOTPUBLIC, so callers tell it from network failures). */
export class OutboundRefused extends Error {
  readonly code = 'ENOTPUBLIC';
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefused';
  }
}

export const isRefusal = (e: unknown): e is OutboundRefused => (e as { code?: unknown } | null)?.code === 'ENOTPUBLIC';

/** A URL's host without the brackets of an IPv6 literal. */
const bareHost = (hostname: string) => hostname.replace(/^\[|\]$/g, '');

/**
 * The checks that need no resolution: http(s) only, and an IP literal (which never goes through
 * a lookup) must be public unless private addresses are allowed.
 */
export function checkUrlShape(url: URL, allowPrivate: boolean): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundRefused(`unsupported scheme ${url.protocol}`);
  const host = bareHost(url.hostname);
  if (!allowPrivate && isIP(host) && !isPublicAddress(host)) throw new OutboundRefused(`${host} is not a public address`);
}

/**
 * Resolves like dns.lookup but refuses non-public addresses. Given to the request as its
 * `lookup`, it runs when the connection is made and the socket connects to the very address it
 * checked, so a name cannot pass a check and then resolve elsewhere (DNS rebinding).
 */
export const publicOnlyLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, '', 0);
    const list = addresses as LookupAddress[];
    const refused = list.find((a) => !isPublicAddress(a.address));
    if (refused || list.length === 0) return callback(new OutboundRefused(`${hostname} resolves to a non-public address (${refused?.address ?? 'none'})`), '', 0);
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
    return callback(null, list[0]!.address, list[0]!.family);
  });
};

/**
 * Checks an address before it is stored (an MCP proxy's url): shape, then every address its
 * host resolves to now. Requests still go through publicOnlyLookup: a later answer counts.
 */
export async function checkDestination(address: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new OutboundRefused('not a valid URL');
  }
  checkUrlShape(url, allowPrivate);
  const host = bareHost(url.hostname);
  if (allowPrivate || isIP(host)) return url;
  await new Promise<void>((resolve, reject) => {
    publicOnlyLookup(host, { all: true }, (err) => {
      if (!err) return resolve();
      reject(isRefusal(err) ? err : new OutboundRefused(`${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? err.message})`));
    });
  });
  return url;
}
