/**
 * The input rules of the v2 PF4 price operations (shared/catalog/v2/pf4/prices.ts), as the edge applies them
 * (validateInputs): tick request flags, time windows, chart periods and modes, the bars of chart writes, and what each
 * entry declares (the tick request's defaults among them).
 */
import { describe, expect, it } from 'vitest';
import { type Operation } from '../../index.js';
import { prices } from './prices.js';
import { validateInputs } from '../../inputs.js';
import { accepted, callerOf, entryOf, json, none, refused, url } from '../../../../test/support/catalog/calls.js';

const op = (n: string): Operation => entryOf('v2.PF4.', n);
const call = callerOf('v2.PF4.');

/** What an entry declares besides its schemas, functions marked as such. */
const declared = (entry: Operation) =>
  JSON.parse(
    JSON.stringify(
      {
        tag: entry.tag,
        timeout: entry.timeout,
        read: entry.read,
        mutating: entry.mutating,
        destructive: entry.destructive,
        scope: entry.scope,
        paged: entry.paged,
        bodyLimitBytes: entry.bodyLimitBytes,
        controlCharacters: entry.controlCharacters,
        answer: entry.answer,
      },
      (_key, value) => (typeof value === 'function' ? 'function' : value),
    ),
  );

const sym = { symbol: 'EURUSD' };
const T0 = '2024-03-01T10:00:00Z';
const bar = { time: T0, open: 1.1, high: 1.2, low: 1.0, close: 1.15 };
const CHART_WRITES = ['ChartAdd', 'ChartUpdate', 'ChartDelete'];

describe('v2 PF4 prices: the entries', () => {
  it('declares the price operations', () => {
    expect(Object.keys(prices).sort()).toStrictEqual([
      'ChartAdd',
      'ChartDelete',
      'ChartRequest',
      'ChartUpdate',
      'HistoryCorrect',
      'TickInfoLast',
      'TickInfoLastSymbol',
      'TicksRequest',
    ]);
  });

  it('answers last ticks from the cache and the histories live, with their time-out classes', () => {
    const read = {
      tag: 'Prices',
      timeout: 'read',
      read: 'cached',
      mutating: false,
      destructive: false,
      scope: 'webapi',
    };
    expect(declared(op('TickInfoLastSymbol'))).toStrictEqual({
      ...read,
      answer: { kind: 'cachedRecord', table: 'ticks', key: 'symbol', what: 'no quote for symbol' },
    });
    expect(declared(op('TickInfoLast'))).toStrictEqual({ ...read, answer: { kind: 'cachedList', table: 'ticks' } });
    const history = { ...read, timeout: 'history', read: 'live' };
    expect(declared(op('TicksRequest'))).toStrictEqual({
      ...history,
      answer: { kind: 'live', command: 'TicksRequest', args: 'function' },
    });
    expect(declared(op('ChartRequest'))).toStrictEqual({
      ...history,
      answer: { kind: 'live', command: 'ChartRequest' },
    });
  });

  it('declares the chart writes as changes and the history repair as maintenance', () => {
    const change = {
      tag: 'Prices',
      timeout: 'change',
      read: 'live',
      mutating: true,
      destructive: false,
      scope: 'webapi.write',
    };
    for (const name of CHART_WRITES)
      expect(declared(op(name)), name).toStrictEqual({ ...change, answer: { kind: 'live', command: name } });
    expect(declared(op('HistoryCorrect'))).toStrictEqual({
      ...change,
      timeout: 'maintenance',
      answer: { kind: 'live', command: 'HistoryCorrect' },
    });
    // The history repair answers the number of bars it corrected.
    expect(op('HistoryCorrect').response).toStrictEqual({ type: 'integer', format: 'int32' });
  });

  it('asks the server for ticks from the epoch and of every kind unless the call says otherwise', () => {
    const args = (op('TicksRequest').answer as { args: (a: Record<string, unknown>) => unknown }).args;
    expect(args({ symbol: 'EURUSD' })).toStrictEqual({
      symbol: 'EURUSD',
      start: '1970-01-01T00:00:00.000Z',
      end: undefined,
      flags: 'All',
    });
    expect(
      args({ symbol: 'GBPUSD', start: '2024-01-01T00:00:00.000Z', end: '2024-01-02T00:00:00.000Z', flags: 'Raw' }),
    ).toStrictEqual({
      symbol: 'GBPUSD',
      start: '2024-01-01T00:00:00.000Z',
      end: '2024-01-02T00:00:00.000Z',
      flags: 'Raw',
    });
  });

  it('gives every entry a summary: a sentence without gaps where a name was left out', () => {
    for (const entry of Object.values(prices)) {
      expect(entry.summary.length, entry.id).toBeGreaterThan(20);
      expect(entry.summary, entry.id).not.toMatch(/ {2}| \.$|\( /);
      expect(entry.summary.endsWith('.'), entry.id).toBe(true);
    }
  });
});

describe('v2 PF4 prices: the symbol in the path', () => {
  it('passes the symbol of every operation that names one, and refuses 13 characters', () => {
    const reads = ['TickInfoLastSymbol', 'TicksRequest', 'ChartRequest', 'HistoryCorrect'];
    const defaults: Record<string, Record<string, unknown>> = { ChartRequest: { mode: 'RangeInExcludeOutOfRage' } };
    for (const name of reads) {
      expect(call(name, { symbol: 'ABCDEFGHIJKL' }, '', none), name).toStrictEqual(
        accepted({ symbol: 'ABCDEFGHIJKL', ...defaults[name] }),
      );
      expect(call(name, { symbol: 'ABCDEFGHIJKLM' }, '', none), name).toStrictEqual(
        refused('symbol: symbol must be at most 12 characters'),
      );
    }
    for (const name of CHART_WRITES) {
      expect(call(name, sym, '', json({ rates: [bar] })), name).toStrictEqual(
        accepted({ ...sym, body: { rates: [bar] } }),
      );
      expect(call(name, { symbol: '' }, '', json({ rates: [bar] })), name).toStrictEqual(
        refused('symbol: symbol must not be empty'),
      );
    }
  });
});

describe('v2 PF4 prices: TicksRequest', () => {
  const ticks = (query: string) => call('TicksRequest', sym, query, none);

  it('takes one flag or several joined by commas, trimmed and without repeats', () => {
    expect(ticks('?flags=All')).toStrictEqual(accepted({ ...sym, flags: 'All' }));
    expect(ticks('?flags=Raw,%20Normal,Raw')).toStrictEqual(accepted({ ...sym, flags: 'Raw, Normal' }));
    expect(ticks('?flags=Normal,Raw')).toStrictEqual(accepted({ ...sym, flags: 'Normal, Raw' }));
  });

  it('refuses an unknown flag among known ones, and an empty value', () => {
    const message =
      'flags: flags must be Raw, Normal, All or several of them joined by ", ", or the number of their bits (Raw 1, Normal 2)';
    expect(ticks('?flags=Raw,Ticks')).toStrictEqual(refused(message));
    expect(ticks('?flags=4')).toStrictEqual(refused(message));
    expect(ticks('?flags=')).toStrictEqual(refused(message));
  });

  it('reads flags in any case and by their bits (0, no kind named, as the default All)', () => {
    expect(ticks('?flags=raw')).toStrictEqual(accepted({ ...sym, flags: 'Raw' }));
    expect(ticks('?flags=ALL')).toStrictEqual(accepted({ ...sym, flags: 'All' }));
    expect(ticks('?flags=2')).toStrictEqual(accepted({ ...sym, flags: 'Normal' }));
    expect(ticks('?flags=3')).toStrictEqual(accepted({ ...sym, flags: 'Raw, Normal' }));
    expect(ticks('?flags=0')).toStrictEqual(accepted({ ...sym, flags: 'All' }));
  });

  it('takes flags of 64 characters and refuses 65', () => {
    const at64 = `${'Raw,'.repeat(15)}Raw `;
    expect(at64).toHaveLength(64);
    expect(ticks(`?flags=${encodeURIComponent(at64)}`)).toStrictEqual(accepted({ ...sym, flags: 'Raw' }));
    expect(ticks(`?flags=${encodeURIComponent(`${at64} `)}`)).toStrictEqual(
      refused('flags: flags must be at most 64 characters'),
    );
  });

  it('reads start and end as UTC times and accepts an end equal to the start', () => {
    expect(ticks('?start=2024-01-02T00:00:00&end=2024-01-02T02:00:00%2B02:00')).toStrictEqual(
      accepted({ ...sym, start: '2024-01-02T00:00:00.000Z', end: '2024-01-02T00:00:00.000Z' }),
    );
  });

  it('accepts either end of the window alone', () => {
    expect(ticks('?start=2024-01-02T00:00:00Z')).toStrictEqual(accepted({ ...sym, start: '2024-01-02T00:00:00.000Z' }));
    expect(ticks('?end=2024-01-02T00:00:00Z')).toStrictEqual(accepted({ ...sym, end: '2024-01-02T00:00:00.000Z' }));
  });

  it('refuses an end before the start, naming end, and names start and end when they are not date-times', () => {
    expect(ticks('?start=2024-01-02T00:00:00.001Z&end=2024-01-02T00:00:00Z')).toStrictEqual(
      refused('end: end must not be before start'),
    );
    expect(ticks('?start=yesterday')).toStrictEqual(refused('start: start must be an ISO 8601 date-time'));
    expect(ticks('?end=now')).toStrictEqual(refused('end: end must be an ISO 8601 date-time'));
  });
});

describe('v2 PF4 prices: ChartRequest', () => {
  const chart = (query: string) => call('ChartRequest', sym, query, none);

  it('defaults the mode to RangeInExcludeOutOfRage and passes period, window and mode', () => {
    expect(chart('')).toStrictEqual(accepted({ ...sym, mode: 'RangeInExcludeOutOfRage' }));
    expect(chart('?period=Mn1&start=2024-01-01T00:00:00Z&end=2024-02-01T00:00:00Z&mode=RangeLast')).toStrictEqual(
      accepted({
        ...sym,
        period: 'Mn1',
        start: '2024-01-01T00:00:00.000Z',
        end: '2024-02-01T00:00:00.000Z',
        mode: 'RangeLast',
      }),
    );
  });

  it('reads period and mode in any case, answering the contract spelling', () => {
    expect(chart('?period=MN1&mode=rangelast')).toStrictEqual(accepted({ ...sym, period: 'Mn1', mode: 'RangeLast' }));
    expect(chart('?period=h1')).toStrictEqual(accepted({ ...sym, period: 'H1', mode: 'RangeInExcludeOutOfRage' }));
  });

  it('names the period and mode members when the value is none of them (a period has no number)', () => {
    expect(chart('?period=MN')).toStrictEqual(
      refused('period: period must be one of M1, M5, M15, M30, H1, H4, D1, W1, Mn1'),
    );
    expect(chart('?period=1')).toStrictEqual(
      refused('period: period must be one of M1, M5, M15, M30, H1, H4, D1, W1, Mn1'),
    );
    expect(chart('?mode=All')).toStrictEqual(
      refused('mode: mode must be one of RangeIn, RangeOut, RangeLast, RangeInExcludeOutOfRage'),
    );
  });

  it('names start and end when they are not date-times', () => {
    expect(chart('?start=yesterday')).toStrictEqual(refused('start: start must be an ISO 8601 date-time'));
    expect(chart('?end=now')).toStrictEqual(refused('end: end must be an ISO 8601 date-time'));
  });

  it('refuses an end before the start and accepts equal ones', () => {
    expect(chart('?start=2024-01-02T00:00:00Z&end=2024-01-01T23:59:59Z')).toStrictEqual(
      refused('end: end must not be before start'),
    );
    expect(chart('?start=2024-01-02T00:00:00Z&end=2024-01-02T00:00:00Z')).toStrictEqual(
      accepted({
        ...sym,
        start: '2024-01-02T00:00:00.000Z',
        end: '2024-01-02T00:00:00.000Z',
        mode: 'RangeInExcludeOutOfRage',
      }),
    );
  });
});

describe('v2 PF4 prices: chart writes (ChartAdd, ChartUpdate, ChartDelete)', () => {
  it('pass the period and the bars', () => {
    for (const name of CHART_WRITES) {
      expect(
        call(name, sym, '?period=H4', json({ rates: [bar, { ...bar, time: '2024-03-01T14:00:00Z' }] })),
        name,
      ).toStrictEqual(
        accepted({ ...sym, period: 'H4', body: { rates: [bar, { ...bar, time: '2024-03-01T14:00:00Z' }] } }),
      );
      expect(call(name, sym, '?period=H2', json({ rates: [bar] })), name).toStrictEqual(
        refused('period: period must be one of M1, M5, M15, M30, H1, H4, D1, W1, Mn1'),
      );
    }
  });

  it('refuse absent, null and empty rates', () => {
    for (const name of CHART_WRITES) {
      for (const body of [{}, { rates: null }, { rates: [] }]) {
        expect(call(name, sym, '', json(body)), `${name} ${JSON.stringify(body)}`).toStrictEqual(
          refused('body.rates: rates must list at least one bar'),
        );
      }
    }
  });

  it("require each bar's time, naming the bar", () => {
    for (const name of CHART_WRITES) {
      const { time: _time, ...untimed } = bar;
      expect(call(name, sym, '', json({ rates: [bar, untimed] })), name).toStrictEqual(
        refused('body.rates.1.time: time is required'),
      );
    }
  });

  it('require open, high, low and close to add or update bars, each named', () => {
    for (const name of ['ChartAdd', 'ChartUpdate']) {
      expect(call(name, sym, '', json({ rates: [{ time: T0, open: 1 }] })), name).toStrictEqual(
        refused(
          'body.rates.0.high: high is required; body.rates.0.low: low is required; body.rates.0.close: close is required',
        ),
      );
      expect(call(name, sym, '', json({ rates: [bar, { time: T0, high: 1, low: 1, close: 1 }] })), name).toStrictEqual(
        refused('body.rates.1.open: open is required'),
      );
      expect(call(name, sym, '', json({ rates: [{}] })), name).toStrictEqual(
        refused(
          'body.rates.0.time: time is required; body.rates.0.open: open is required; body.rates.0.high: high is required; ' +
            'body.rates.0.low: low is required; body.rates.0.close: close is required',
        ),
      );
    }
  });

  it('delete bars by their time alone', () => {
    expect(call('ChartDelete', sym, '', json({ rates: [{ time: T0 }] }))).toStrictEqual(
      accepted({ ...sym, body: { rates: [{ time: T0 }] } }),
    );
    expect(call('ChartDelete', sym, '', json({ rates: [{ open: 1 }] }))).toStrictEqual(
      refused('body.rates.0.time: time is required'),
    );
  });

  it('take 100000 bars and refuse 100001', () => {
    const bars = Array.from({ length: 100_001 }, () => ({ time: T0 }));
    const most = validateInputs(op('ChartDelete'), sym, url(), json({ rates: bars.slice(1) }));
    expect(most.ok && (most.args.body as { rates: unknown[] }).rates.length).toBe(100_000);
    expect(call('ChartDelete', sym, '', json({ rates: bars }))).toStrictEqual(
      refused('body.rates: rates must list at most 100000 bars'),
    );
  });
});
