/**
 * The source a token request's failures are counted against (workers/limits/requestSource.ts): `CF-Connecting-IP`
 * only behind a front that sets `request.cf`, an IPv6 address by its /64, and one shared source otherwise.
 */
import { describe, expect, it } from 'vitest';
import { LOCAL_SOURCE, requestSource, UNRECOGNISED_SOURCE } from './requestSource.js';

/** A request as Cloudflare's front hands it on (`cf` set) or as the local socket does (none). */
function request(address: string | null, front = true): Request {
  const req = new Request('http://edge.test/connect/token', {
    method: 'POST',
    headers: address === null ? {} : { 'CF-Connecting-IP': address },
  });
  if (front) Object.defineProperty(req, 'cf', { value: { colo: 'TEST' } });
  return req;
}

describe('requestSource', () => {
  it('is the IPv4 address Cloudflare names', () => {
    expect(requestSource(request('203.0.113.7'))).toBe('203.0.113.7');
    expect(requestSource(request(' 198.51.100.20 '))).toBe('198.51.100.20');
  });

  it('is the /64 network of an IPv6 address, however it is written', () => {
    const network = '2001:db8:0:1::/64';
    for (const address of [
      '2001:db8:0:1::1',
      '2001:DB8:0:1:ffff:ffff:ffff:ffff',
      '2001:0db8:0000:0001:0:0:0:2',
      '2001:db8:0:1::c000:201',
      '2001:db8:0:1::192.0.2.1',
    ]) {
      expect(requestSource(request(address)), address).toBe(network);
    }
    expect(requestSource(request('fe80::1%eth0'))).toBe('fe80:0:0:0::/64');
    expect(requestSource(request('2001:db8:0:2::1'))).toBe('2001:db8:0:2::/64');
    expect(requestSource(request('::'))).toBe('0:0:0:0::/64');
  });

  it('reads an IPv4-mapped IPv6 address as the IPv4 address', () => {
    expect(requestSource(request('::ffff:203.0.113.7'))).toBe('203.0.113.7');
    expect(requestSource(request('::ffff:cb00:7107'))).toBe('203.0.113.7');
  });

  it('is one shared source for a value that is no IP address', () => {
    for (const address of [
      '256.1.1.1',
      '1.2.3',
      'example.com',
      '1::2::3',
      '1:2:3:4:5:6:7:8:9',
      '12345::1',
      '1:2:3:4:5:6:7',
      ':::',
    ]) {
      expect(requestSource(request(address)), address).toBe(UNRECOGNISED_SOURCE);
    }
  });

  it('is the local source without a front, whatever the caller sends, and when the front names no address', () => {
    expect(requestSource(request('203.0.113.7', false))).toBe(LOCAL_SOURCE);
    expect(requestSource(request(null, false))).toBe(LOCAL_SOURCE);
    expect(requestSource(request(null))).toBe(LOCAL_SOURCE);
    expect(requestSource(request(''))).toBe(LOCAL_SOURCE);
  });
});
