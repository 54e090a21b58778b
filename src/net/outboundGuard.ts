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

/** The IPv4 address inside an IPv4-mapped IPv6 one (`::ffff:127.0.0.1`, or `::ffff:7f00:1` as the URL parser writes it), else null. */
function mappedIPv4(address: string): string | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return null;
  const [hi, lo] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** Whether `list` holds `address` (an IPv4-mapped IPv6 address counts as its IPv4 one); null for non-addresses. */
function listed(list: BlockList, address: string): boolean | null {
  const family = isIP(address);
  if (family === 4) return list.check(address, 'ipv4');
  if (family !== 6) return null;
  const v4 = mappedIPv4(address);
  return v4 ? list.check(v4, 'ipv4') : list.check(address, 'ipv6');
}

export function isPublicAddress(address: string): boolean {
  return listed(blocked, address) === false;
}

/*
 * Database connections (CNS_DB_*) follow another rule than fetches: databases live on private
 * networks, so private addresses pass; loopback only when the operator allows it; and what no
 * connector may ever reach: link-local (cloud metadata at 169.254.169.254), the metadata
 * addresses outside it (Alibaba 100.100.100.200, AWS IPv6 fd00:ec2::254), unspecified (0.0.0.0
 * reaches this host), multicast and reserved ranges.
 */
const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');
const neverForDatabases = new BlockList();
for (const [net, prefix] of [['0.0.0.0', 8], ['169.254.0.0', 16], ['224.0.0.0', 4], ['240.0.0.0', 4]] as const) neverForDatabases.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['fe80::', 10], ['ff00::', 8]] as const) neverForDatabases.addSubnet(net, prefix, 'ipv6');
neverForDatabases.addAddress('100.100.100.200', 'ipv4');
neverForDatabases.addAddress('fd00:ec2::254', 'ipv6');

/** Why a database connection may not reach `address` (a phrase such as "a loopback address"), or null when it may. */
export function databaseAddressRefusal(address: string, allowLoopback: boolean): string | null {
  if (isIP(address) === 0) return 'not an IP address';
  if (listed(neverForDatabases, address)) return 'a link-local, metadata, unspecified, multicast or reserved address';
  if (!allowLoopback && listed(loopback, address)) return 'a loopback address';
  return null;
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
export const publicOnlyLookup: LookupFunction = guardedLookup((address) => (isPublicAddress(address) ? null : 'a non-public address'));

/**
 * A `lookup` for sockets that refuses a name when any address it resolves to is refused by
 * `refusal` (which names why), so the socket connects only to an address that was checked.
 */
export function guardedLookup(refusal: (address: string) => string | null): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as LookupAddress[];
      const refused = list.map((a) => ({ address: a.address, why: refusal(a.address) })).find((r) => r.why);
      if (refused || list.length === 0) return callback(new OutboundRefused(`${hostname} resolves to ${refused?.why ?? 'a non-public address'} (${refused?.address ?? 'none'})`), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

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
