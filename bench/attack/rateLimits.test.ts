/** Rate-limit windows as the attack drill reads them (bench/attack/rateLimits.ts): aligned to the clock. */
import { describe, expect, it } from 'vitest';
import { windowEnd, windowsBeganBy } from './rateLimits.js';

describe('rate-limit windows', () => {
  it('end at the next multiple of the window, a window that starts now included', () => {
    expect(windowEnd(125_000, 60_000)).toBe(180_000);
    expect(windowEnd(120_000, 60_000)).toBe(180_000);
    expect(windowEnd(179_999, 60_000)).toBe(180_000);
    expect(windowEnd(5, 10)).toBe(10);
  });

  it('count a reading only when its window began by the time asked', () => {
    const readings = [
      { left: 29, resetAt: 180_000 },
      { left: 30, resetAt: 180_000 },
    ];
    expect(windowsBeganBy(readings, 120_000, 60_000)).toBe(true);
    expect(windowsBeganBy(readings, 150_000, 60_000)).toBe(true);
    expect(windowsBeganBy(readings, 119_999, 60_000)).toBe(false);
    expect(windowsBeganBy([...readings, { left: 30, resetAt: 240_000 }], 150_000, 60_000)).toBe(false);
    expect(windowsBeganBy([], 0, 60_000)).toBe(true);
  });
});
