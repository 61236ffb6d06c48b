/**
 * How the edge names its gateway objects (workers/gateway/names.ts): the FNV-1a spread, the default object counts,
 * and the exact names of link objects and idempotency ledgers (the counts' bounds: environment.test.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_IDEMPOTENCY_SHARDS,
  DEFAULT_LINKS_PER_PLATFORM,
  fnv1a,
  ledgerName,
  linkName,
  pickLink,
} from './names.js';

describe('fnv1a', () => {
  it('is the 32-bit FNV-1a of the published test vectors, unsigned', () => {
    expect(fnv1a('')).toBe(0x811c9dc5);
    expect(fnv1a('a')).toBe(0xe40c292c);
    expect(fnv1a('foobar')).toBe(0xbf9cf968);
  });
});

describe('object counts', () => {
  it('have the documented defaults', () => {
    expect(DEFAULT_LINKS_PER_PLATFORM).toBe(4);
    expect(DEFAULT_IDEMPOTENCY_SHARDS).toBe(16);
  });
});

describe('object names', () => {
  it('names a link object <platform>@<region>#<n>', () => {
    expect(linkName('p1', 'weur', 3)).toBe('p1@weur#3');
    expect(linkName('p1', 'apac', 0)).toBe('p1@apac#0');
  });

  it("picks a platform's link by the spread string's hash modulo the link count", () => {
    // fnv1a('a') = 3826002220: 1 modulo 3, 12 modulo 16; fnv1a('foobar') = 3214735720: 8 modulo 16.
    expect(pickLink('p1', 'weur', 'a', 3)).toBe('p1@weur#1');
    expect(pickLink('p1', 'weur', 'a', 16)).toBe('p1@weur#12');
    expect(pickLink('p1', 'oc', 'foobar', 16)).toBe('p1@oc#8');
    expect(pickLink('p1', 'enam', 'anything', 1)).toBe('p1@enam#0');
  });

  it("names a key's ledger <clientId>#<hash(key) mod shards>", () => {
    expect(ledgerName('client-a', 'a', 16)).toBe('client-a#12');
    expect(ledgerName('client-a', 'foobar', 16)).toBe('client-a#8');
    expect(ledgerName('client-a', 'a', 3)).toBe('client-a#1');
  });
});
