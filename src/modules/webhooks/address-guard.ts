// Where a production webhook may point (CONTRACT.md §8): https only, and never at an address
// inside our own network. A URL is checked when it is saved and again at every delivery, on
// the addresses the delivery then connects to (a name may resolve elsewhere by then).
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Every address a host name resolves to (injectable: tests decide what a name resolves to). */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: HostResolver = (hostname) =>
  lookup(hostname, { all: true, verbatim: true });

/** Ranges no webhook may reach, each with the word an error message uses for it. */
const BLOCKED: Array<[kind: string, cidrs: string[]]> = [
  ['metadata', ['169.254.169.254/32', 'fd00:ec2::254/128']],
  ['unspecified', ['0.0.0.0/8', '::/128']],
  ['loopback', ['127.0.0.0/8', '::1/128']],
  ['private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7']],
  ['shared (CGNAT)', ['100.64.0.0/10']],
  ['link-local', ['169.254.0.0/16', 'fe80::/10', 'fec0::/10']],
  ['multicast', ['224.0.0.0/4', 'ff00::/8']],
  [
    'reserved',
    [
      '192.0.0.0/24',
      '192.0.2.0/24',
      '198.18.0.0/15',
      '198.51.100.0/24',
      '203.0.113.0/24',
      '240.0.0.0/4',
      '100::/64',
      '2001:db8::/32',
    ],
  ],
  // IPv6 forms that carry an IPv4 address (which could be any of the above). IPv4-mapped
  // addresses (::ffff:a.b.c.d) need no entry: BlockList checks them against the IPv4 ranges.
  ['IPv4-embedding', ['64:ff9b::/96', '64:ff9b:1::/48', '2002::/16', '2001::/32']],
];

const LISTS = BLOCKED.map(([kind, cidrs]) => {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network, prefix] = cidr.split('/') as [string, string];
    list.addSubnet(network, Number(prefix), isIP(network) === 6 ? 'ipv6' : 'ipv4');
  }
  return { kind, list };
});

/** The kind of blocked range an address is in, or undefined when it is a public address. */
export function blockedKind(address: string): string | undefined {
  const version = isIP(address);
  if (version === 0) {
    return 'invalid';
  }
  const type = version === 6 ? 'ipv6' : 'ipv4';
  return LISTS.find(({ list }) => list.check(address, type))?.kind;
}

export class AddressRefusedError extends Error {}

/** URL.hostname keeps the brackets of an IPv6 literal. */
export function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

/** Refuses when any of a host's addresses is not public (AddressRefusedError says why). */
export function assertPublic(host: string, addresses: readonly ResolvedAddress[]): void {
  for (const { address } of addresses) {
    const kind = blockedKind(address);
    if (kind) {
      const where = host === address ? address : `${host} resolves to ${address}`;
      const article = /^[aeiouI]/.test(kind) ? 'an' : 'a';
      throw new AddressRefusedError(`url must not point to ${article} ${kind} address (${where})`);
    }
  }
}

/**
 * Whether a production URL may be saved: https, and every address of its host public. Every
 * address must pass: a name with one private answer among public ones is refused, since a
 * connection could land on any of them.
 */
export async function assertPublicUrl(url: URL, resolve: HostResolver): Promise<void> {
  if (url.protocol !== 'https:') {
    throw new AddressRefusedError('url must use https');
  }
  const host = bareHost(url);
  if (isIP(host)) {
    assertPublic(host, [{ address: host, family: isIP(host) }]);
    return;
  }
  const addresses = await resolve(host).catch(() => []);
  if (addresses.length === 0) {
    throw new AddressRefusedError(`url host ${host} does not resolve`);
  }
  assertPublic(host, addresses);
}
