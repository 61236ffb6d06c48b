/**
 * `SIM_MANAGER_ALLOW`: the peers besides loopback that may reach the simulator, as IP addresses and CIDR ranges
 * separated by commas or spaces (`172.29.79.0/24, 10.0.0.5, fd00::/8`). Names are not accepted: the peer is judged by
 * the address its connection comes from. An IPv4 address written IPv6-mapped (`::ffff:10.0.0.5`) is read as the IPv4
 * address. Pure, so the environment check (shared/environment.ts) and the simulator read the same entries.
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
  const parts = IPV4.exec(text);
  return parts !== null && parts.slice(1).every((p) => Number(p) <= 255);
}

/** Without node:net (the edge worker reads the same environment rules): the URL parser knows IPv6 literals. */
function isIpv6(text: string): boolean {
  if (!text.includes(':') || !/^[0-9A-Fa-f:.]+$/.test(text)) return false;
  try {
    return new URL(`http://[${text}]/`).hostname.length > 2;
  } catch {
    return false;
  }
}
