/**
 * v2 PF4 Prices end to end: last ticks, tick history, chart bars and their edits, history correction, each checked
 * against the simulator's state. The simulator's quote feed is off in this file, so every quote and bar is one a test
 * (or the world's start) put there and values can be compared exactly.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ManagerClient } from '../../support/sim/managerClient.js';
import { quietFeedStack } from './quietFeed.js';
import { eventually, type Client } from '../support.js';
import { fails, ok, refuses } from './api.js';

const quiet = quietFeedStack();

let c: Client;
let sim: ManagerClient;
beforeAll(() => {
  ({ client: c, sim } = quiet);
});

interface Tick {
  symbol: string;
  time: string;
  bid: number;
  ask: number;
}
interface Bar {
  time: string;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
}

const ordinal = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Waits until the gateway's cache shows the quote the simulator now has for `symbol`. */
async function cachedQuote(symbol: string, bid: number): Promise<Tick | null> {
  return eventually(async () => {
    const r = await ok<Tick[]>(c, 'v2.PF4.TickInfoLast');
    return r.find((t) => t.symbol === symbol && t.bid === bid) ?? null;
  });
}

describe('v2.PF4.TickInfoLast', () => {
  it('answers the last tick of every quoted symbol from the cache, by symbol name, as the server has them', async () => {
    await sim.ok('SymbolSendTick', { symbol: 'USDJPY', bid: 150.111, ask: 150.125 });
    expect(await cachedQuote('USDJPY', 150.111)).toMatchObject({ ask: 150.125 });
    const server = await sim.ok<Tick[]>('TickInfoLast');
    const list = await ok<Tick[]>(c, 'v2.PF4.TickInfoLast');
    expect(list.map((t) => t.symbol)).toEqual(server.map((t) => t.symbol).sort(ordinal));
    const bySymbol = new Map(server.map((t) => [t.symbol, t]));
    for (const t of list) {
      const s = bySymbol.get(t.symbol)!;
      expect(t.bid).toBe(s.bid);
      expect(t.ask).toBe(s.ask);
      expect(Date.parse(t.time)).toBe(Date.parse(s.time));
    }
    expect(list.find((t) => t.symbol === 'USDJPY')).toMatchObject({ bid: 150.111, ask: 150.125 });
  });
});

describe('v2.PF4.TickInfoLastSymbol', () => {
  it("answers one symbol's last quote, NotFound for a symbol without quotes, and refuses a name over 12 characters", async () => {
    await sim.ok('SymbolSendTick', { symbol: 'USDJPY', bid: 150.201, ask: 150.215 });
    const tick = await eventually(async () => {
      const t = await ok<Tick>(c, 'v2.PF4.TickInfoLastSymbol', { params: { symbol: 'USDJPY' } });
      return t.bid === 150.201 ? t : null;
    });
    expect(tick).toMatchObject({ symbol: 'USDJPY', bid: 150.201, ask: 150.215 });
    const server = await sim.ok<Tick>('TickInfoLast', { symbol: 'USDJPY' });
    expect(Date.parse(tick!.time)).toBe(Date.parse(server.time));
    const missing = await fails(c, 'v2.PF4.TickInfoLastSymbol', { params: { symbol: 'NOSUCH' } });
    expect(missing).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    await refuses(c, 'v2.PF4.TickInfoLastSymbol', 'symbol', { params: { symbol: 'ABCDEFGHIJKLM' } });
  });
});

describe('v2.PF4.TicksRequest', () => {
  it("answers the symbol's ticks in the window live, manual ticks flagged Raw, and filters by flags", async () => {
    const before = new Date(Date.now() - 1000).toISOString();
    await sim.ok('SymbolSendTick', { symbol: 'XAUUSD', bid: 2301.11, ask: 2301.41 });
    // The second tick at a later time than the first: the clock past the first one's answer.
    const first = Date.now();
    while (Date.now() <= first) await new Promise((r) => setImmediate(r));
    await sim.ok('SymbolSendTick', { symbol: 'XAUUSD', bid: 2302.22, ask: 2302.52 });
    const after = new Date(Date.now() + 1000).toISOString();

    const ticks = await ok<Array<{ time: string; bid: number; ask: number; dataFeed: number; flags: string }>>(
      c,
      'v2.PF4.TicksRequest',
      { params: { symbol: 'XAUUSD' }, query: { start: before, end: after } },
    );
    const server = await sim.ok<typeof ticks>('TicksRequest', { symbol: 'XAUUSD', start: before, end: after });
    expect(ticks).toEqual(server);
    expect(ticks.map((t) => [t.bid, t.ask, t.dataFeed, t.flags])).toEqual([
      [2301.11, 2301.41, 1, 'Raw'],
      [2302.22, 2302.52, 1, 'Raw'],
    ]);
    expect(Date.parse(ticks[0].time)).toBeLessThanOrEqual(Date.parse(ticks[1].time));

    // Flags: Raw keeps the manual ticks, Normal (the feed's, off here) has none; start defaults to the epoch.
    expect(
      await ok(c, 'v2.PF4.TicksRequest', {
        params: { symbol: 'XAUUSD' },
        query: { start: before, end: after, flags: 'Raw' },
      }),
    ).toEqual(ticks);
    expect(
      await ok(c, 'v2.PF4.TicksRequest', {
        params: { symbol: 'XAUUSD' },
        query: { start: before, end: after, flags: 'Normal' },
      }),
    ).toEqual([]);
    expect(
      await ok(c, 'v2.PF4.TicksRequest', { params: { symbol: 'XAUUSD' }, query: { end: after, flags: 'Raw, Normal' } }),
    ).toEqual(ticks);
    // A window after the ticks holds none; a date-time without an offset is UTC.
    expect(await ok(c, 'v2.PF4.TicksRequest', { params: { symbol: 'XAUUSD' }, query: { start: after } })).toEqual([]);
    expect(
      await ok(c, 'v2.PF4.TicksRequest', {
        params: { symbol: 'XAUUSD' },
        query: { start: before.replace('Z', ''), end: after.replace('Z', '') },
      }),
    ).toEqual(ticks);
  });

  it('refuses a bad date-time, an end before the start, unknown flags and a long symbol, naming the field', async () => {
    await refuses(c, 'v2.PF4.TicksRequest', 'start', { params: { symbol: 'XAUUSD' }, query: { start: 'yesterday' } });
    await refuses(c, 'v2.PF4.TicksRequest', 'end', {
      params: { symbol: 'XAUUSD' },
      query: { start: '2024-01-02T00:00:00Z', end: '2024-01-01T00:00:00Z' },
    });
    await refuses(c, 'v2.PF4.TicksRequest', 'flags', { params: { symbol: 'XAUUSD' }, query: { flags: 'Raw, Bogus' } });
    await refuses(c, 'v2.PF4.TicksRequest', 'symbol', { params: { symbol: 'ABCDEFGHIJKLM' } });
    expect(await fails(c, 'v2.PF4.TicksRequest', { params: { symbol: 'NOSUCH' } })).toMatchObject({
      managerCode: 'InvalidData',
    });
  });
});

// Chart edits work on EURJPY M5 bars of a past day no tick reaches; every bar is removed again at the end.
const CHART = { symbol: 'EURJPY' };
const T = (hhmm: string) => `2024-01-02T${hhmm}:00.000Z`;
const bar = (time: string, open: number, high: number, low: number, close: number, volume = 10): Bar => ({
  time,
  open,
  high,
  low,
  close,
  volume,
});
const DAY = { start: '2024-01-02T00:00:00Z', end: '2024-01-03T00:00:00Z' };

async function m5(query: Record<string, string> = DAY): Promise<Bar[]> {
  return ok<Bar[]>(c, 'v2.PF4.ChartRequest', { params: CHART, query: { period: 'M5', ...query } });
}

describe('v2.PF4.ChartAdd', () => {
  it('appends bars the chart then shows, replacing a bar of the same time', async () => {
    const bars = [
      bar(T('10:00'), 164.1, 164.5, 164.0, 164.2),
      bar(T('10:05'), 164.2, 164.6, 164.1, 164.3),
      bar(T('10:10'), 164.3, 164.7, 164.2, 164.4),
    ];
    expect(await ok(c, 'v2.PF4.ChartAdd', { params: CHART, query: { period: 'M5' }, body: { rates: bars } })).toBe(
      true,
    );
    expect(await m5()).toEqual(bars);
    const replaced = bar(T('10:10'), 164.3, 164.9, 164.25, 164.8, 12);
    expect(
      await ok(c, 'v2.PF4.ChartAdd', { params: CHART, query: { period: 'M5' }, body: { rates: [replaced] } }),
    ).toBe(true);
    expect(await m5()).toEqual([bars[0], bars[1], replaced]);
    expect(await sim.ok('ChartRequest', { symbol: 'EURJPY', period: 'M5', start: DAY.start, end: DAY.end })).toEqual([
      bars[0],
      bars[1],
      replaced,
    ]);
    // Another period is another chart.
    expect(await ok(c, 'v2.PF4.ChartRequest', { params: CHART, query: { period: 'M15', ...DAY } })).toEqual([]);
  });

  it('refuses an empty or missing rates list, a bar without time or prices, and a bad period, naming the field', async () => {
    await refuses(c, 'v2.PF4.ChartAdd', 'body.rates', { params: CHART, query: { period: 'M5' }, body: { rates: [] } });
    await refuses(c, 'v2.PF4.ChartAdd', 'body.rates', { params: CHART, query: { period: 'M5' }, body: {} });
    await refuses(c, 'v2.PF4.ChartAdd', 'body.rates.0.time', {
      params: CHART,
      query: { period: 'M5' },
      body: { rates: [{ open: 1, high: 1, low: 1, close: 1 }] },
    });
    await refuses(c, 'v2.PF4.ChartAdd', 'body.rates.0.close', {
      params: CHART,
      query: { period: 'M5' },
      body: { rates: [{ time: T('11:00'), open: 1, high: 1, low: 1 }] },
    });
    await refuses(c, 'v2.PF4.ChartAdd', 'period', {
      params: CHART,
      query: { period: 'M2' },
      body: { rates: [bar(T('11:00'), 1, 1, 1, 1)] },
    });
    await refuses(c, 'v2.PF4.ChartAdd', 'symbol', {
      params: { symbol: 'ABCDEFGHIJKLM' },
      query: { period: 'M5' },
      body: { rates: [bar(T('11:00'), 1, 1, 1, 1)] },
    });
    // A time that does not start a bar of the period is the server's refusal; nothing was written.
    const misaligned = await fails(c, 'v2.PF4.ChartAdd', {
      params: CHART,
      query: { period: 'M5' },
      body: { rates: [bar(T('11:03'), 1, 1, 1, 1)] },
    });
    expect(misaligned).toMatchObject({ code: 'PF4Error', managerCode: 'InvalidData' });
    expect((await m5()).map((b) => b.time)).toEqual([T('10:00'), T('10:05'), T('10:10')]);
  });
});

describe('v2.PF4.ChartRequest', () => {
  it('answers the bars of the window by mode, default RangeInExcludeOutOfRage (bars wholly inside)', async () => {
    const window = { start: '2024-01-02T10:05:00Z', end: '2024-01-02T10:10:00Z' };
    const byDefault = await m5(window);
    expect(byDefault.map((b) => b.time)).toEqual([T('10:05')]);
    expect(await m5({ ...window, mode: 'RangeInExcludeOutOfRage' })).toEqual(byDefault);
    expect((await m5({ ...window, mode: 'RangeIn' })).map((b) => b.time)).toEqual([T('10:05'), T('10:10')]);
    expect((await m5({ ...window, mode: 'RangeOut' })).map((b) => b.time)).toEqual([
      T('10:00'),
      T('10:05'),
      T('10:10'),
    ]);
    for (const mode of ['RangeIn', 'RangeOut', 'RangeLast', 'RangeInExcludeOutOfRage']) {
      expect(await m5({ ...window, mode })).toEqual(
        await sim.ok('ChartRequest', { symbol: 'EURJPY', period: 'M5', mode, ...window }),
      );
    }
  });

  it('refuses a bad period, mode or date-time and an end before the start, naming the field', async () => {
    await refuses(c, 'v2.PF4.ChartRequest', 'period', { params: CHART, query: { period: 'MN' } });
    await refuses(c, 'v2.PF4.ChartRequest', 'mode', { params: CHART, query: { mode: 'Everything' } });
    await refuses(c, 'v2.PF4.ChartRequest', 'start', { params: CHART, query: { start: '2024-13-40' } });
    await refuses(c, 'v2.PF4.ChartRequest', 'end', { params: CHART, query: { start: DAY.end, end: DAY.start } });
    expect(await fails(c, 'v2.PF4.ChartRequest', { params: { symbol: 'NOSUCH' } })).toMatchObject({
      managerCode: 'InvalidData',
    });
  });
});

describe('v2.PF4.ChartUpdate', () => {
  it('overwrites the bars matched by time and silently ignores the others', async () => {
    const before = await m5();
    const changed = bar(T('10:05'), 164.2, 164.65, 164.05, 164.35, 11);
    const unmatched = bar(T('12:00'), 1, 1, 1, 1);
    expect(
      await ok(c, 'v2.PF4.ChartUpdate', {
        params: CHART,
        query: { period: 'M5' },
        body: { rates: [changed, unmatched] },
      }),
    ).toBe(true);
    expect(await m5()).toEqual([before[0], changed, before[2]]);
    await refuses(c, 'v2.PF4.ChartUpdate', 'body.rates', {
      params: CHART,
      query: { period: 'M5' },
      body: { rates: null },
    });
    await refuses(c, 'v2.PF4.ChartUpdate', 'body.rates.0.open', {
      params: CHART,
      query: { period: 'M5' },
      body: { rates: [{ time: T('10:05') }] },
    });
  });
});

describe('v2.PF4.ChartDelete', () => {
  it('deletes bars by time only (prices absent or 0) and leaves the others', async () => {
    const before = await m5();
    expect(
      await ok(c, 'v2.PF4.ChartDelete', {
        params: CHART,
        query: { period: 'M5' },
        body: { rates: [{ time: T('10:00') }] },
      }),
    ).toBe(true);
    expect(await m5()).toEqual(before.slice(1));
    expect(
      await ok(c, 'v2.PF4.ChartDelete', {
        params: CHART,
        query: { period: 'M5' },
        body: { rates: [bar(T('10:05'), 0, 0, 0, 0, 0), bar(T('10:10'), 0, 0, 0, 0, 0)] },
      }),
    ).toBe(true);
    expect(await m5()).toEqual([]);
    expect(await sim.ok('ChartRequest', { symbol: 'EURJPY', period: 'M5', ...DAY })).toEqual([]);
    await refuses(c, 'v2.PF4.ChartDelete', 'body.rates', {
      params: CHART,
      query: { period: 'M5' },
      body: { rates: [] },
    });
    await refuses(c, 'v2.PF4.ChartDelete', 'body.rates.0.time', {
      params: CHART,
      query: { period: 'M5' },
      body: { rates: [{}] },
    });
  });
});

describe('v2.PF4.HistoryCorrect', () => {
  const PERIODS = ['M1', 'M5', 'M15', 'M30', 'H1', 'H4', 'D1', 'W1', 'Mn1'];
  const AROUND = { start: '2023-12-01T00:00:00Z', end: '2024-02-01T00:00:00Z', mode: 'RangeIn' };

  it('widens malformed minute bars, rebuilds the longer periods and answers the count; a second run corrects 0', async () => {
    // A minute bar whose high is below its close and low above its open, on a past day of a symbol nothing quotes.
    const broken = bar('2024-01-03T09:31:00.000Z', 28.1, 28.2, 28.15, 28.4, 5);
    expect(
      await ok(c, 'v2.PF4.ChartAdd', {
        params: { symbol: 'XAGUSD' },
        query: { period: 'M1' },
        body: { rates: [broken] },
      }),
    ).toBe(true);
    try {
      const corrected = await ok<number>(c, 'v2.PF4.HistoryCorrect', { params: { symbol: 'XAGUSD' } });
      expect(Number.isInteger(corrected)).toBe(true);
      // The minute bar is widened, and each of the 8 longer periods gets the bar built from it.
      expect(corrected).toBeGreaterThanOrEqual(1 + 8);
      const [minute] = await ok<Bar[]>(c, 'v2.PF4.ChartRequest', {
        params: { symbol: 'XAGUSD' },
        query: { period: 'M1', ...AROUND },
      });
      expect(minute).toMatchObject({ time: broken.time, open: 28.1, high: 28.4, low: 28.1, close: 28.4 });
      const [hour] = await ok<Bar[]>(c, 'v2.PF4.ChartRequest', {
        params: { symbol: 'XAGUSD' },
        query: { period: 'H1', ...AROUND },
      });
      expect(hour).toMatchObject({
        time: '2024-01-03T09:00:00.000Z',
        open: 28.1,
        high: 28.4,
        low: 28.1,
        close: 28.4,
        volume: 5,
      });
      expect(await ok<number>(c, 'v2.PF4.HistoryCorrect', { params: { symbol: 'XAGUSD' } })).toBe(0);
    } finally {
      for (const period of PERIODS) {
        const bars = await sim.ok<Bar[]>('ChartRequest', { symbol: 'XAGUSD', period, ...AROUND });
        if (bars.length)
          await sim.ok('ChartDelete', {
            symbol: 'XAGUSD',
            period,
            record: { rates: bars.map((b) => ({ time: b.time })) },
          });
      }
    }
    expect(await sim.ok('ChartRequest', { symbol: 'XAGUSD', period: 'D1', ...AROUND })).toEqual([]);
  });

  it("refuses a long symbol naming it, and an unknown symbol is the server's refusal", async () => {
    await refuses(c, 'v2.PF4.HistoryCorrect', 'symbol', { params: { symbol: 'ABCDEFGHIJKLM' } });
    expect(await fails(c, 'v2.PF4.HistoryCorrect', { params: { symbol: 'NOSUCH' } })).toMatchObject({
      code: 'PF4Error',
      managerCode: 'InvalidData',
    });
  });
});
