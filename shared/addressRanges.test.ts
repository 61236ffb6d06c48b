/**
 * IP addresses and networks (shared/addressRanges.ts): the bytes of every written form of an address, networks in
 * CIDR notation with their canonical text, and whether an address is inside one.
 */
import { describe, expect, it } from 'vitest';
import {
  addressBytes,
  addressText,
  networkContains,
  networkText,
  parseAddressRanges,
  parseNetwork,
} from './addressRanges.js';

const network = (entry: string) => {
  const parsed = parseNetwork(entry);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.network;
};
const inside = (entry: string, address: string) => networkContains(network(entry), addressBytes(address)!);

describe('addressBytes', () => {
  it('reads IPv4 as 4 bytes and IPv6 in every written form as 16', () => {
    expect([...addressBytes('203.0.113.7')!]).toEqual([203, 0, 113, 7]);
    const full = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
    for (const text of ['2001:db8::1', '2001:DB8:0:0:0:0:0:1', '2001:0db8:0000::0001', '2001:db8::0.0.0.1'])
      expect([...addressBytes(text)!], text).toEqual(full);
    expect([...addressBytes('::')!]).toEqual(Array(16).fill(0));
  });

  it('reads an IPv4-mapped IPv6 address as the IPv4 address', () => {
    expect([...addressBytes('::ffff:203.0.113.7')!]).toEqual([203, 0, 113, 7]);
    expect([...addressBytes('::FFFF:cb00:7107')!]).toEqual([203, 0, 113, 7]);
  });

  it('is null for anything that is not one address', () => {
    for (const text of [
      '',
      '256.1.1.1',
      '1.2.3',
      '01.2.3.4.5',
      'example.com',
      '1::2::3',
      '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7',
      '12345::1',
      ':::',
      ':1',
      'fe80::1%eth0',
      '10.0.0.0/8',
      '::1.2.3.256',
    ])
      expect(addressBytes(text), text).toBeNull();
  });
});

describe('addressText', () => {
  it('writes IPv6 as RFC 5952 does: lower case, no leading zeros, the longest zero run (the first of equals) as ::', () => {
    const text = (written: string) => addressText(addressBytes(written)!);
    expect(text('2001:0DB8:0000:0000:0000:0000:0000:0001')).toBe('2001:db8::1');
    expect(text('2001:db8:0:0:1:0:0:1')).toBe('2001:db8::1:0:0:1');
    expect(text('2001:db8:0:1:1:1:1:1')).toBe('2001:db8:0:1:1:1:1:1');
    expect(text('0:0:0:0:0:0:0:0')).toBe('::');
    expect(text('1:0:0:0:0:0:0:0')).toBe('1::');
    expect(text('0:0:0:0:0:0:0:1')).toBe('::1');
    expect(text('198.51.100.20')).toBe('198.51.100.20');
  });
});

describe('parseNetwork', () => {
  it('reads networks and single addresses, canonical in CIDR notation', () => {
    expect(networkText(network('203.0.113.0/24'))).toBe('203.0.113.0/24');
    expect(networkText(network('198.51.100.7'))).toBe('198.51.100.7/32');
    expect(networkText(network('0.0.0.0/0'))).toBe('0.0.0.0/0');
    expect(networkText(network('2001:DB8:0::/32'))).toBe('2001:db8::/32');
    expect(networkText(network('2001:db8::5'))).toBe('2001:db8::5/128');
    expect(networkText(network('::/0'))).toBe('::/0');
    expect(networkText(network('::ffff:10.0.0.0/104'))).toBe('10.0.0.0/8');
    expect(networkText(network('::ffff:10.1.2.3'))).toBe('10.1.2.3/32');
  });

  it('refuses bits set past the prefix, naming the network the entry would be', () => {
    expect(parseNetwork('203.0.113.5/24')).toEqual({
      ok: false,
      reason: '203.0.113.5/24 has bits set past its /24 prefix: the network is 203.0.113.0/24',
    });
    expect(parseNetwork('2001:db8::1/64')).toEqual({
      ok: false,
      reason: '2001:db8::1/64 has bits set past its /64 prefix: the network is 2001:db8::/64',
    });
  });

  it('refuses names, bad prefixes and zone ids, saying what an entry must be', () => {
    for (const entry of ['example.com', '10.0.0.0/8/8', 'fe80::/10%eth0', '10.0.0.0/', ''])
      expect(parseNetwork(entry), entry).toEqual({
        ok: false,
        reason: expect.stringMatching(/is not an IP address or a network in CIDR notation|has no valid prefix/),
      });
    expect(parseNetwork('10.0.0.0/33')).toEqual({
      ok: false,
      reason: '10.0.0.0/33 has no valid prefix length (0 to 32)',
    });
    expect(parseNetwork('2001:db8::/129')).toEqual({
      ok: false,
      reason: '2001:db8::/129 has no valid prefix length (0 to 128)',
    });
    expect(parseNetwork('::ffff:10.0.0.0/95')).toEqual({
      ok: false,
      reason: '::ffff:10.0.0.0/95 has no valid prefix length (96 to 128 for an IPv4-mapped network)',
    });
  });
});

describe('networkContains', () => {
  it('holds the addresses of its prefix and no others', () => {
    expect(inside('203.0.113.0/24', '203.0.113.0')).toBe(true);
    expect(inside('203.0.113.0/24', '203.0.113.255')).toBe(true);
    expect(inside('203.0.113.0/24', '203.0.114.0')).toBe(false);
    expect(inside('203.0.113.128/25', '203.0.113.127')).toBe(false);
    expect(inside('203.0.113.128/25', '203.0.113.129')).toBe(true);
    expect(inside('10.0.0.0/7', '11.255.0.1')).toBe(true);
    expect(inside('10.0.0.0/7', '12.0.0.1')).toBe(false);
    expect(inside('198.51.100.7', '198.51.100.7')).toBe(true);
    expect(inside('198.51.100.7', '198.51.100.8')).toBe(false);
    expect(inside('0.0.0.0/0', '192.0.2.1')).toBe(true);
    expect(inside('2001:db8::/32', '2001:db8:ffff::1')).toBe(true);
    expect(inside('2001:db8::/33', '2001:db8:8000::1')).toBe(false);
    expect(inside('2001:db8::/33', '2001:db8:7fff::1')).toBe(true);
  });

  it('keeps the families apart, an IPv4-mapped address counting as IPv4', () => {
    expect(inside('::/0', '192.0.2.1')).toBe(false);
    expect(inside('0.0.0.0/0', '2001:db8::1')).toBe(false);
    expect(inside('192.0.2.0/24', '::ffff:192.0.2.9')).toBe(true);
  });
});

describe('parseAddressRanges', () => {
  it('reads the simulator allow-list entries with the same address rules', () => {
    expect(parseAddressRanges('172.29.79.0/24, 10.0.0.5 fd00::/8 ::ffff:10.0.0.6 host.example 10.0.0.0/40')).toEqual({
      ranges: [
        { family: 'ipv4', address: '172.29.79.0', prefix: 24 },
        { family: 'ipv4', address: '10.0.0.5', prefix: 32 },
        { family: 'ipv6', address: 'fd00::', prefix: 8 },
        { family: 'ipv4', address: '10.0.0.6', prefix: 32 },
      ],
      invalid: ['host.example', '10.0.0.0/40'],
    });
  });
});
