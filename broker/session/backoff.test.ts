import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_BACKOFF } from './backoff.js';

describe('backoffDelay', () => {
  it('doubles the ceiling per attempt from the base, up to the cap', () => {
    const top = (attempt: number) => backoffDelay(attempt, { baseMs: 250, capMs: 10_000 }, () => 0.999999);
    expect(top(0)).toBe(249);
    expect(top(1)).toBe(499);
    expect(top(2)).toBe(999);
    expect(top(5)).toBe(7999);
    expect(top(6)).toBe(9999);
    expect(top(50)).toBe(9999);
    expect(top(10_000)).toBe(9999);
  });

  it('uses full jitter: anywhere from zero to the ceiling', () => {
    expect(backoffDelay(3, DEFAULT_BACKOFF, () => 0)).toBe(0);
    expect(backoffDelay(3, DEFAULT_BACKOFF, () => 0.5)).toBe(1000);
    const samples = Array.from({ length: 500 }, () => backoffDelay(4));
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...samples)).toBeLessThan(4000);
    // Spread, not lock step: many distinct values across the range.
    expect(new Set(samples).size).toBeGreaterThan(100);
  });

  it('treats a negative attempt as the first', () => {
    expect(backoffDelay(-3, { baseMs: 100, capMs: 1000 }, () => 0.999999)).toBe(99);
  });
});
