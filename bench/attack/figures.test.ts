/**
 * The attack drill's arithmetic (bench/attack/figures.ts): latency summaries, ratios, answers counted by status,
 * counter spending across window turns, and the line printed per finding.
 */
import { describe, expect, it } from 'vitest';
import { counterSpent, countLabels, findingLine, ms, ratio, seconds, summarize } from './figures.js';

describe('latency summaries', () => {
  it("takes count, p50, p99 and max with the benches' percentile (rank floor(n·p))", () => {
    expect(summarize([5, 1, 9, 3])).toStrictEqual({ n: 4, p50: 5, p99: 9, max: 9 });
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(summarize(hundred)).toStrictEqual({ n: 100, p50: 51, p99: 100, max: 100 });
    expect(summarize([7])).toStrictEqual({ n: 1, p50: 7, p99: 7, max: 7 });
  });

  it('has no figures for no samples', () => {
    expect(summarize([])).toStrictEqual({ n: 0, p50: null, p99: null, max: null });
  });
});

describe('figures in words', () => {
  it('prints milliseconds with one decimal and ratios with two', () => {
    expect(ms(1.94)).toBe('1.9 ms');
    expect(ms(62.85)).toBe('62.9 ms');
    expect(ms(null)).toBe('—');
    expect(ratio(62.8, 1.9)).toBe('×33.05');
    expect(ratio(1, 0)).toBe('—');
    expect(ratio(null, 2)).toBe('—');
  });

  it('prints seconds with one decimal, and no time as never', () => {
    expect(seconds(4730)).toBe('4.7 s');
    expect(seconds(0)).toBe('0.0 s');
    expect(seconds(15_960)).toBe('16.0 s');
    expect(seconds(null)).toBe('never');
  });

  it('counts labels in order of first appearance', () => {
    expect(countLabels(['401', '429', '401', '401'])).toBe('401×3 429×1');
    expect(countLabels(Array.from({ length: 1200 }, () => '429'))).toBe('429×1,200');
    expect(countLabels([])).toBe('none');
  });

  it('prints one line per finding with its verdict', () => {
    expect(findingLine({ id: '2', title: '30 wrong secrets', figures: 'right secret elsewhere 200', held: true })).toBe(
      '2   HELD      30 wrong secrets: right secret elsewhere 200',
    );
    expect(findingLine({ id: '4b', title: 'silent sockets', figures: '0 of 200 closed', held: false })).toBe(
      '4b  NOT HELD  silent sockets: 0 of 200 closed',
    );
  });
});

describe('what a counter spent', () => {
  it('adds the drops within a window', () => {
    expect(
      counterSpent(
        [
          { left: 300, resetAt: 60_000 },
          { left: 285, resetAt: 60_000 },
          { left: 270, resetAt: 60_000 },
        ],
        300,
      ),
    ).toBe(30);
  });

  it('counts a later window from its limit', () => {
    const readings = [
      { left: 290, resetAt: 60_000 },
      { left: 280, resetAt: 60_000 },
      { left: 295, resetAt: 120_000 },
      { left: 295, resetAt: 120_000 },
    ];
    expect(counterSpent(readings, 300)).toBe(15);
  });

  it('spends nothing on one reading or on unchanged ones, and refuses readings out of order', () => {
    expect(counterSpent([{ left: 12, resetAt: 1 }], 30)).toBe(0);
    expect(
      counterSpent(
        [
          { left: 30, resetAt: 1 },
          { left: 30, resetAt: 1 },
        ],
        30,
      ),
    ).toBe(0);
    expect(() =>
      counterSpent(
        [
          { left: 30, resetAt: 2 },
          { left: 30, resetAt: 1 },
        ],
        30,
      ),
    ).toThrow('counterSpent: readings must be in the order they were taken');
  });
});
