/** The shared measuring of the benchmarks (bench/measure.ts): percentile ranks, the median, and the CPU pressure reading. */
import { describe, expect, it } from 'vitest';
import { cpuPressureUs, median, percentile, sortedOf } from './measure.js';

describe('bench measuring', () => {
  it('takes the sample at rank floor(n·p) of an ascending list, the last for p = 1, NaN for none', () => {
    const sorted = sortedOf([5, 1, 4, 2, 3, 10, 9, 8, 7, 6]);
    expect([...sorted]).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(percentile(sorted, 0)).toBe(1);
    expect(percentile(sorted, 0.5)).toBe(6);
    expect(percentile(sorted, 0.99)).toBe(10);
    expect(percentile(sorted, 1)).toBe(10);
    expect(percentile([7], 0.99)).toBe(7);
    expect(percentile([], 0.5)).toBeNaN();
  });

  it('takes the middle of an unsorted list, the upper one of an even count, without reordering it', () => {
    const values = [3, 1, 2];
    expect(median(values)).toBe(2);
    expect(values).toEqual([3, 1, 2]);
    expect(median([4, 1, 3, 2])).toBe(3);
  });

  it('reads the CPU pressure as a count of microseconds, or NaN where the kernel does not report it', () => {
    const us = cpuPressureUs();
    expect(Number.isNaN(us) || (Number.isInteger(us) && us >= 0)).toBe(true);
  });
});
