/**
 * IP addresses and CIDR networks, pure so the edge worker, the Node processes and the registry CLI read them alike:
 *
 * - `SIM_MANAGER_ALLOW`: the peers besides loopback that may reach the simulator, as IP addresses and CIDR ranges
 *   separated by commas or spaces (`172.29.79.0/24, 10.0.0.5, fd00::/8`) (`parseAddressRanges`). Names are not
 *   accepted: the peer is judged by the address its connection comes from.
 * - An API client's allowed networks (workers/registry/records.ts): each entry one network in CIDR notation, or one
 *   address (`parseNetwork`), matched against a request's source address as bytes (`addressBytes`, `networkContains`).
 *
 * An IPv4 address written IPv6-mapped (`::ffff:10.0.0.5`) is read as the IPv4 address everywhere.
 */

export interface AddressRange {
  family: 'ipv4' | 'ipv6';
  /** The address as written (IPv4-mapped IPv6 as its IPv4 address). */
  address: string;
  /** Leading bits that must match: 32 or 128 for one address. */
  prefix: number;
}

export interface ParsedAddressRanges {
  ranges: AddressRange[];
  /** Entries that are neither an address nor a range (a name, a bad prefix). */
  invalid: string[];
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const MAPPED_IPV4 = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/i;

export function parseAddressRanges(raw: string | undefined): ParsedAddressRanges {
  const ranges: AddressRange[] = [];
  const invalid: string[] = [];
  for (const entry of (raw ?? '').split(/[\s,]+/).filter(Boolean)) {
    const range = addressRange(entry);
    if (range) ranges.push(range);
    else invalid.push(entry);
  }
  return { ranges, invalid };
}

/** The address of an IPv4 peer as an IPv6 socket reports it (`::ffff:10.0.0.5`) as the IPv4 address. */
export function unmapIpv4(address: string): string {
  return MAPPED_IPV4.exec(address)?.[1] ?? address;
}

function addressRange(entry: string): AddressRange | null {
  const slash = entry.indexOf('/');
  const address = unmapIpv4(slash < 0 ? entry : entry.slice(0, slash));
  const family = isIpv4(address) ? 'ipv4' : isIpv6(address) ? 'ipv6' : null;
  if (family === null) return null;
  const max = family === 'ipv4' ? 32 : 128;
  if (slash < 0) return { family, address, prefix: max };
  const bits = entry.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return null;
  return { family, address, prefix: Number(bits) };
}

function isIpv4(text: string): boolean {
  return ipv4Bytes(text) !== null;
}

function isIpv6(text: string): boolean {
  return ipv6Bytes(text) !== null;
}

/**
 * The bytes of an IP address: 4 for IPv4 (an IPv4-mapped IPv6 address included), 16 for IPv6; null for anything else
 * (a name, a range, a zone id, stray characters). Written without node:net, which the edge worker lacks.
 */
export function addressBytes(text: string): Uint8Array | null {
  const v4 = ipv4Bytes(text);
  if (v4) return v4;
  const v6 = ipv6Bytes(text);
  if (!v6) return null;
  return isMapped(v6) ? v6.slice(12) : v6;
}

const isMapped = (v6: Uint8Array) => v6.subarray(0, 10).every((b) => b === 0) && v6[10] === 0xff && v6[11] === 0xff;

function ipv4Bytes(text: string): Uint8Array | null {
  const parts = IPV4.exec(text);
  if (!parts) return null;
  const bytes = parts.slice(1).map(Number);
  return bytes.every((b) => b <= 255) ? Uint8Array.from(bytes) : null;
}

/** The 16 bytes of an IPv6 address in any of its written forms (`::` once, a dotted IPv4 tail); null otherwise. */
function ipv6Bytes(text: string): Uint8Array | null {
  let rest = text.toLowerCase();
  const tail = /^(.*:)(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(rest);
  if (tail) {
    const v4 = ipv4Bytes(tail[2]);
    if (!v4) return null;
    rest = `${tail[1]}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
  }
  const halves = rest.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const end = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - end.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const groups = [...head, ...Array<string>(missing).fill('0'), ...end];
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    const value = parseInt(g, 16);
    bytes[2 * i] = value >> 8;
    bytes[2 * i + 1] = value & 0xff;
  });
  return bytes;
}

/** One network: the address bytes (4 or 16) with every bit past `prefix` zero. */
export interface Network {
  bytes: Uint8Array;
  prefix: number;
}

/**
 * One network as written (`203.0.113.0/24`, `2001:db8::/32`, or one address, `198.51.100.7`): the network, or why
 * the entry is none. Bits set past the prefix are refused rather than cleared (`203.0.113.5/24` is a typo for one
 * address or for its network, and which one cannot be told), naming the network the entry would be.
 */
export function parseNetwork(entry: string): { ok: true; network: Network } | { ok: false; reason: string } {
  const slash = entry.indexOf('/');
  const written = slash < 0 ? entry : entry.slice(0, slash);
  const v4 = ipv4Bytes(written);
  const v6 = v4 ? null : ipv6Bytes(written);
  const bytes = v4 ?? (v6 && isMapped(v6) ? v6.slice(12) : v6);
  if (!bytes) return { ok: false, reason: `${entry} is not an IP address or a network in CIDR notation` };
  const max = bytes.length * 8;
  let prefix = max;
  if (slash >= 0) {
    const bits = entry.slice(slash + 1);
    // An IPv4-mapped network's prefix counts the 96 bits of the mapping.
    const offset = v6 !== null && isMapped(v6) ? 96 : 0;
    if (!/^\d{1,3}$/.test(bits) || Number(bits) < offset || Number(bits) - offset > max)
      return {
        ok: false,
        reason: `${entry} has no valid prefix length (${offset > 0 ? `${offset} to ${max + offset} for an IPv4-mapped network` : `0 to ${max}`})`,
      };
    prefix = Number(bits) - offset;
  }
  const network = { bytes: masked(bytes, prefix), prefix };
  if (!network.bytes.every((b, i) => b === bytes[i]))
    return {
      ok: false,
      reason: `${entry} has bits set past its /${prefix} prefix: the network is ${networkText(network)}`,
    };
  return { ok: true, network };
}

function masked(bytes: Uint8Array, prefix: number): Uint8Array {
  return bytes.map((b, i) => {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    return b & ((0xff << (8 - keep)) & 0xff);
  });
}

/** Whether an address (its bytes) is inside the network; an IPv4 address is never inside an IPv6 network. */
export function networkContains(network: Network, address: Uint8Array): boolean {
  if (address.length !== network.bytes.length) return false;
  const inside = masked(address, network.prefix);
  return inside.every((b, i) => b === network.bytes[i]);
}

/** The address's text: dotted for IPv4, RFC 5952 for IPv6 (lower case, the longest run of zero groups as `::`). */
export function addressText(bytes: Uint8Array): string {
  if (bytes.length === 4) return bytes.join('.');
  const groups = Array.from({ length: 8 }, (_, i) => (bytes[2 * i] << 8) | bytes[2 * i + 1]);
  let best = { at: -1, length: 1 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j;
  }
  const hex = (from: number, to: number) =>
    groups
      .slice(from, to)
      .map((g) => g.toString(16))
      .join(':');
  return best.at < 0 ? hex(0, 8) : `${hex(0, best.at)}::${hex(best.at + best.length, 8)}`;
}

/** The network in CIDR notation, canonical: `203.0.113.0/24`, `2001:db8::/32`, `198.51.100.7/32`. */
export function networkText(network: Network): string {
  return `${addressText(network.bytes)}/${network.prefix}`;
}
