/**
 * Which peers a bridge listener answers, judged by the address their connection comes from: loopback (127.0.0.1,
 * ::1, and 127.0.0.1 as an IPv6 socket reports it) always, and the addresses and CIDR ranges of an allow-list
 * (`shared/addressRanges.ts` parses them), IPv4 peers also when written IPv6-mapped (`::ffff:10.0.0.5`).
 */
import { BlockList } from 'node:net';
import { unmapIpv4, type AddressRange } from '../../shared/addressRanges.js';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

export function isLoopback(address: string | undefined): boolean {
  return address !== undefined && LOOPBACK.has(address);
}

/** Whether `address` is loopback or inside one of `ranges`. */
export function peerFilter(ranges: readonly AddressRange[]): (address: string | undefined) => boolean {
  const list = new BlockList();
  for (const range of ranges) list.addSubnet(range.address, range.prefix, range.family);
  return (address) => {
    if (address === undefined) return false;
    if (isLoopback(address)) return true;
    const plain = unmapIpv4(address);
    return list.check(plain, plain.includes(':') ? 'ipv6' : 'ipv4');
  };
}
