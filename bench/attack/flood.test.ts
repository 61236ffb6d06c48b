/** The distributed flood's addresses (bench/attack/flood.ts): one new address per request, through 198.18.0.0/15. */
import { describe, expect, it } from 'vitest';
import { floodAddress } from './flood.js';

describe('flood addresses', () => {
  it('count through 198.18.0.0/15 from its first address', () => {
    expect([0, 1, 255, 256, 65_535, 65_536, 131_071].map(floodAddress)).toStrictEqual([
      '198.18.0.0',
      '198.18.0.1',
      '198.18.0.255',
      '198.18.1.0',
      '198.18.255.255',
      '198.19.0.0',
      '198.19.255.255',
    ]);
  });

  it('stay within the range, starting over after its last address', () => {
    expect(floodAddress(131_072)).toBe('198.18.0.0');
    expect(floodAddress(131_072 + 65_536 + 257)).toBe('198.19.1.1');
  });
});
