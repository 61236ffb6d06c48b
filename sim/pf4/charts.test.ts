/**
 * Price history on a PF4 world: ticks kept for tick requests, bars of every period built from them, manager writes
 * to the bars and the history correction that rebuilds longer periods from minute bars.
 */
import { describe, expect, it } from 'vitest';
import { PF4_RESULT as R } from '../../shared/resultCodes.js';
import * as records from '../../shared/records/contract.js';
import { pf4Harness } from '../../test/support/sim/worldHarness.js';

const T = (hms: string) => Date.parse(`2026-01-06T${hms}Z`); // a Tuesday

function withTicks() {
  const h = pf4Harness();
  const feed = h.world.feed;
  feed.inject('EURUSD', 1.1, 1.1001, T('10:00:10'));
  feed.inject('EURUSD', 1.1005, 1.1006, T('10:00:40'));
  feed.inject('EURUSD', 1.0998, 1.0999, T('10:00:50'));
  feed.inject('EURUSD', 1.1002, 1.1003, T('10:01:05'));
  feed.inject('EURUSD', 1.101, 1.1011, T('10:05:30'));
  return h;
}

const chart = (h: ReturnType<typeof pf4Harness>, period: string, extra: Record<string, unknown> = {}) =>
  h.call('ChartRequest', {
    symbol: 'EURUSD',
    period,
    start: '2026-01-01T00:00:00Z',
    end: '2026-02-01T00:00:00Z',
    mode: 'RangeIn',
    ...extra,
  });

describe('bars from ticks', () => {
  it('builds minute bars with open, high, low, close and tick volume', () => {
    const h = withTicks();
    const bars = chart(h, 'M1');
    for (const bar of bars) records.PF4ChartBar.parse(bar);
    expect(bars).toEqual([
      { time: '2026-01-06T10:00:00.000Z', open: 1.1, high: 1.1005, low: 1.0998, close: 1.0998, volume: 3 },
      { time: '2026-01-06T10:01:00.000Z', open: 1.1002, high: 1.1002, low: 1.1002, close: 1.1002, volume: 1 },
      { time: '2026-01-06T10:05:00.000Z', open: 1.101, high: 1.101, low: 1.101, close: 1.101, volume: 1 },
    ]);
  });

  it('aggregates the same ticks into every longer period, weeks starting on Sunday', () => {
    const h = withTicks();
    expect(chart(h, 'M5').map((b: { time: string; volume: number }) => [b.time, b.volume])).toEqual([
      ['2026-01-06T10:00:00.000Z', 4],
      ['2026-01-06T10:05:00.000Z', 1],
    ]);
    for (const [period, time] of [
      ['H1', '2026-01-06T10:00:00.000Z'],
      ['H4', '2026-01-06T08:00:00.000Z'],
      ['D1', '2026-01-06T00:00:00.000Z'],
      ['W1', '2026-01-04T00:00:00.000Z'],
      ['Mn1', '2026-01-01T00:00:00.000Z'],
    ]) {
      expect(chart(h, period), period).toEqual([
        { time, open: 1.1, high: 1.101, low: 1.0998, close: 1.101, volume: 5 },
      ]);
    }
  });

  it('selects bars by request mode: wholly inside the window by default', () => {
    const h = withTicks();
    const window = { start: '2026-01-06T10:00:30Z', end: '2026-01-06T10:06:00Z' };
    expect(chart(h, 'M1', { ...window, mode: undefined }).map((b: { time: string }) => b.time)).toEqual([
      '2026-01-06T10:01:00.000Z',
      '2026-01-06T10:05:00.000Z',
    ]);
    expect(chart(h, 'M1', { ...window, mode: 'RangeOut' }).length).toBe(3);
    expect(
      chart(h, 'M1', { start: '2026-01-06T10:01:00Z', end: '2026-01-06T10:01:00Z', mode: 'RangeLast' }).length,
    ).toBe(2);
    expect(h.fails('ChartRequest', { symbol: 'EURUSD', period: 'M2' }).code).toBe(R.InvalidData);
    expect(h.fails('ChartRequest', { symbol: 'NOPE', period: 'M1' }).code).toBe(R.InvalidData);
  });
});

describe('ticks', () => {
  it('answers ticks in a window, filtered by raw (manager) and normal (feed) flags', () => {
    const h = withTicks();
    h.world.feed.tickOne(T('10:02:00'));
    const all = h.call('TicksRequest', {
      symbol: 'EURUSD',
      start: '2026-01-06T10:00:00Z',
      end: '2026-01-06T10:01:00Z',
    });
    for (const tick of all) records.PF4TickRecord.parse(tick);
    expect(all.map((t: { bid: number }) => t.bid)).toEqual([1.1, 1.1005, 1.0998]);
    expect(all[0]).toEqual({ time: '2026-01-06T10:00:10.000Z', bid: 1.1, ask: 1.1001, dataFeed: 1, flags: 'Raw' });
    const normal = h.call('TicksRequest', {
      symbol: 'EURUSD',
      start: '2026-01-06T00:00:00Z',
      end: '2026-01-07T00:00:00Z',
      flags: 'Normal',
    });
    expect(normal.every((t: { flags: string }) => t.flags === 'Normal')).toBe(true);
  });

  it('keeps only the configured number of ticks per symbol', () => {
    const h = pf4Harness({ tickHistory: 3 });
    for (let i = 0; i < 5; i++) h.world.feed.inject('EURUSD', 1.1 + i / 1000, 1.1001 + i / 1000, T(`11:00:0${i}`));
    const kept = h.call('TicksRequest', {
      symbol: 'EURUSD',
      start: '2026-01-06T00:00:00Z',
      end: '2026-01-07T00:00:00Z',
    });
    expect(kept.map((t: { bid: number }) => t.bid)).toEqual([1.102, 1.103, 1.104]);
  });

  it('summarises a symbol with the day high and low', () => {
    const h = withTicks();
    const info = h.call('SymbolInfoRequest', { symbol: 'EURUSD' });
    records.PF4SymbolInfo.parse(info);
    expect(info).toMatchObject({ bid: 1.101, high: 1.101, low: 1.0998, direction: 'Up', spread: 10, digits: 5 });
  });
});

describe('chart writes and history correction', () => {
  const bar = (time: string, open: number, high: number, low: number, close: number) => ({
    time,
    open,
    high,
    low,
    close,
    volume: 1,
  });

  it('adds, updates matched bars only, and deletes by time', () => {
    const h = withTicks();
    const rates = [bar('2026-01-06T09:58:00Z', 1.09, 1.091, 1.089, 1.0905)];
    expect(h.call('ChartAdd', { symbol: 'EURUSD', period: 'M1', record: { rates } })).toBe(true);
    expect(chart(h, 'M1')[0]).toMatchObject({ time: '2026-01-06T09:58:00.000Z', close: 1.0905 });
    h.call('ChartUpdate', {
      symbol: 'EURUSD',
      period: 'M1',
      record: { rates: [bar('2026-01-06T09:58:00Z', 1, 2, 0.5, 1.5), bar('2026-01-06T09:00:00Z', 1, 1, 1, 1)] },
    });
    expect(chart(h, 'M1').length).toBe(4);
    expect(chart(h, 'M1')[0]).toMatchObject({ high: 2, close: 1.5 });
    h.call('ChartDelete', { symbol: 'EURUSD', period: 'M1', record: { rates: [{ time: '2026-01-06T09:58:00Z' }] } });
    expect(chart(h, 'M1').length).toBe(3);
    expect(
      h.fails('ChartAdd', {
        symbol: 'EURUSD',
        period: 'M5',
        record: { rates: [bar('2026-01-06T09:58:00Z', 1, 1, 1, 1)] },
      }).message,
    ).toContain('start of a M5 bar');
    expect(h.fails('ChartAdd', { symbol: 'EURUSD', period: 'M1', record: { rates: [] } }).code).toBe(R.InvalidData);
  });

  it('rebuilds longer periods from minute bars and counts the bars corrected', () => {
    const h = withTicks();
    expect(h.call('HistoryCorrect', { symbol: 'EURUSD' })).toBe(0);
    // A minute bar whose high is below its close, added behind the longer periods' back.
    h.call('ChartAdd', {
      symbol: 'EURUSD',
      period: 'M1',
      record: { rates: [bar('2026-01-06T10:02:00Z', 1.1, 1.1, 1.09, 1.2)] },
    });
    // Repaired: the minute bar, and the M5, M15, M30, H1, H4, D1, W1 and Mn1 bars holding it.
    expect(h.call('HistoryCorrect', { symbol: 'EURUSD' })).toBe(9);
    expect(chart(h, 'H1')[0]).toMatchObject({ high: 1.2, low: 1.09, volume: 6 });
    expect(h.fails('HistoryCorrect', { symbol: 'EURUSD' }, ['manager']).code).toBe(R.NotEnoughRights);
  });
});
