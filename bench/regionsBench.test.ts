/** The regions bench's one setting of shape, REGIONS_DELAYS (bench/regionsBench.ts): regions and delays, home first. */
import { describe, expect, it } from 'vitest';
import { parseDelays } from './regionsBench.js';

describe('parseDelays', () => {
  it('reads region=milliseconds entries in order, the first the home', () => {
    expect(parseDelays('weur=5,enam=40 apac=150, oc=170')).toEqual([
      { region: 'weur', delayMs: 5 },
      { region: 'enam', delayMs: 40 },
      { region: 'apac', delayMs: 150 },
      { region: 'oc', delayMs: 170 },
    ]);
  });

  it('refuses an entry that is not a region and a delay of 0 to 2000 ms, a region twice, or none', () => {
    expect(() => parseDelays('mars=5')).toThrow(
      'REGIONS_DELAYS: mars=5 is not region=milliseconds (a region, 0 to 2000 ms)',
    );
    expect(() => parseDelays('weur=-1')).toThrow('weur=-1 is not region=milliseconds');
    expect(() => parseDelays('weur=5000')).toThrow('weur=5000 is not region=milliseconds');
    expect(() => parseDelays('weur')).toThrow('weur is not region=milliseconds');
    expect(() => parseDelays('weur=5,weur=6')).toThrow('REGIONS_DELAYS: names a region twice');
    expect(() => parseDelays(' ')).toThrow('REGIONS_DELAYS: name at least the home region');
  });
});
