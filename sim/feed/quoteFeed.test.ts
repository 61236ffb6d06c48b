/**
 * The quote feed's rate follows the clock: a late timer emits the ticks it owes (up to the catch-up limit), a
 * backlog beyond that is dropped and counted, and a feeder restart leaves a gap. Fake timers drive the clock, so
 * the counts are exact.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildInstruments } from './instruments.js';
import { QuoteFeed, type Quote } from './quoteFeed.js';
import { Random } from '../world/random.js';

function feed(rate: number, seed = 3) {
  const ticks: Quote[] = [];
  const f = new QuoteFeed(
    buildInstruments(5, new Random(seed)),
    new Random(seed + 1),
    rate,
    (q) => ticks.push({ ...q }),
    Date.now(),
  );
  return { f, ticks };
}

describe('quote feed', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: Date.UTC(2026, 0, 5, 12) });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('emits the configured rate over a second, several ticks per firing at high rates', () => {
    const { f, ticks } = feed(1000);
    f.start();
    vi.advanceTimersByTime(1000);
    f.stop();
    expect(f.ticksEmitted).toBe(1000);
    expect(ticks).toHaveLength(1000);
    expect(f.ticksDropped).toBe(0);
  });

  it('emits what a late firing owes, and drops a backlog beyond the catch-up limit', () => {
    const { f } = feed(100);
    f.start();
    vi.advanceTimersByTime(100);
    expect(f.ticksEmitted).toBe(10);
    // The process is blocked for 100 ms: the next firing emits the owed ticks.
    vi.setSystemTime(Date.now() + 100);
    vi.advanceTimersByTime(10);
    expect(f.ticksEmitted).toBe(21);
    // Blocked for 2 s: only 250 ms worth is replayed, the rest counted as dropped.
    vi.setSystemTime(Date.now() + 2000);
    vi.advanceTimersByTime(10);
    expect(f.ticksEmitted).toBe(21 + 25);
    expect(f.ticksDropped).toBe(201 - 25);
    f.stop();
  });

  it('emits what it owes in slices of about 2 ms, so the server answers in between', async () => {
    vi.useRealTimers();
    const order: string[] = [];
    const busy = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until) {
        /* the server's work */
      }
    };
    // Every tick costs the server a millisecond; the first one asks for a command to be answered on the next turn.
    const f = new QuoteFeed(
      buildInstruments(5, new Random(3)),
      new Random(4),
      1000,
      () => {
        if (order.length === 0) setImmediate(() => order.push('command'));
        order.push('tick');
        busy(1);
      },
      Date.now(),
    );
    f.start();
    // The process is busy for 50 ms: the first firing owes at least 50 ticks.
    busy(50);
    const until = Date.now() + 10_000;
    while (f.ticksEmitted < 50 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    f.stop();
    expect(f.ticksEmitted).toBeGreaterThanOrEqual(50);
    // The command was answered after the first slice (two or three ticks), not after the whole backlog.
    expect(order.indexOf('command')).toBeGreaterThanOrEqual(1);
    expect(order.indexOf('command')).toBeLessThanOrEqual(3);
  });

  it('leaves a gap while paused and resumes at the same rate', () => {
    const { f } = feed(100);
    f.start();
    f.pause(500);
    vi.advanceTimersByTime(490);
    expect(f.ticksEmitted).toBe(0);
    // From the end of the pause (500 ms) to 1000 ms: the tick due at 500 and fifty more.
    vi.advanceTimersByTime(510);
    expect(f.ticksEmitted).toBe(51);
    expect(f.ticksDropped).toBe(0);
    f.stop();
  });

  it('walks the same way for the same seed, however the ticks are batched', () => {
    const a = feed(1000, 9);
    const b = feed(1000, 9);
    a.f.start();
    // One late firing emits all 200 owed ticks at once.
    vi.setSystemTime(Date.now() + 190);
    vi.advanceTimersByTime(10);
    a.f.stop();
    b.f.start();
    for (let i = 0; i < 20; i++) vi.advanceTimersByTime(10);
    b.f.stop();
    expect(b.ticks.map((q) => [q.symbol, q.bid, q.ask])).toEqual(a.ticks.map((q) => [q.symbol, q.bid, q.ask]));
    expect(a.ticks.length).toBe(200);
  });
});
