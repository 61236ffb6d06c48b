/**
 * v2 PF4 Symbols end to end: cached summaries, groups and sessions, the live configuration and its Type 1 / Type 2
 * updates, the active set, quick changes and manual ticks, each checked against the simulator's state. The quote feed
 * is off in this file, so every quote is one a test sent and "updated since the last flush" is exactly what a test did.
 * Each test works on its own symbol and puts back what it changed.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ManagerClient } from '../../support/sim/managerClient.js';
import { quietFeedStack } from './quietFeed.js';
import { eventually, type Client } from '../support.js';
import { allPages, call, fails, ok, refuses, refusesTamperedCursor } from './api.js';

const quiet = quietFeedStack();

let c: Client;
let sim: ManagerClient;
beforeAll(() => {
  ({ client: c, sim } = quiet);
});

type Rec = Record<string, any>;
interface Info {
  symbol: string;
  digits: number;
  type: number;
  point: number;
  spread: number;
  direction: string;
  bid: number;
  ask: number;
  high: number;
  low: number;
  lastTime: string | null;
}

const config = (symbol: string) => sim.ok<Rec>('CfgRequestSymbol', { symbol });

/** Waits until the gateway's cached summary of `symbol` shows `bid`. */
async function cachedInfo(symbol: string, bid: number): Promise<Info | null> {
  return eventually(async () => {
    const r = await call<Info>(c, 'v2.PF4.SymbolInfoGet', { query: { symbol } });
    return r.body.error === null && r.body.data!.bid === bid ? r.body.data : null;
  });
}

describe('v2.PF4.SymbolSendTick', () => {
  it('sends a manual tick the server quotes and the cache then shows (last tick and summary)', async () => {
    expect(await ok(c, 'v2.PF4.SymbolSendTick', { query: { symbol: 'EURUSD', bid: 1.07123, ask: 1.07135 } })).toBe(
      true,
    );
    const quote = await sim.ok<Rec>('TickInfoLast', { symbol: 'EURUSD' });
    expect(quote).toMatchObject({ bid: 1.07123, ask: 1.07135 });
    const info = await cachedInfo('EURUSD', 1.07123);
    expect(info).toMatchObject({ symbol: 'EURUSD', bid: 1.07123, ask: 1.07135 });
    const tick = await ok(c, 'v2.PF4.TickInfoLastSymbol', { params: { symbol: 'EURUSD' } });
    expect(tick).toMatchObject({ symbol: 'EURUSD', bid: 1.07123, ask: 1.07135 });
    expect(Date.parse(tick.time)).toBe(Date.parse(quote.time));
  });

  it('refuses a bid that is not positive, an ask below the bid, bad numbers and a long symbol, naming the field', async () => {
    await refuses(c, 'v2.PF4.SymbolSendTick', 'bid', { query: { symbol: 'EURUSD', bid: 0, ask: 1 } });
    await refuses(c, 'v2.PF4.SymbolSendTick', 'ask', { query: { symbol: 'EURUSD', bid: 1.2, ask: 1.1 } });
    await refuses(c, 'v2.PF4.SymbolSendTick', 'bid', { query: { symbol: 'EURUSD', bid: 'abc', ask: 1.1 } });
    await refuses(c, 'v2.PF4.SymbolSendTick', 'ask', { query: { symbol: 'EURUSD', bid: 1.1 } });
    await refuses(c, 'v2.PF4.SymbolSendTick', 'symbol', { query: { symbol: 'ABCDEFGHIJKLM', bid: 1.1, ask: 1.2 } });
    expect(await fails(c, 'v2.PF4.SymbolSendTick', { query: { symbol: 'NOSUCH', bid: 1.1, ask: 1.2 } })).toMatchObject({
      code: 'PF4Error',
      managerCode: 'InvalidData',
    });
    expect(await sim.ok<Rec>('TickInfoLast', { symbol: 'EURUSD' })).toMatchObject({ bid: 1.07123, ask: 1.07135 });
  });
});

describe('v2.PF4.SymbolInfoGet', () => {
  it('answers the cached summary as the server computes it, NotFound for a symbol not loaded', async () => {
    await ok(c, 'v2.PF4.SymbolSendTick', { query: { symbol: 'EURUSD', bid: 1.07201, ask: 1.07215 } });
    const info = await cachedInfo('EURUSD', 1.07201);
    const server = await sim.ok<Info>('SymbolInfoRequest', { symbol: 'EURUSD' });
    expect(info).toMatchObject({
      symbol: 'EURUSD',
      bid: 1.07201,
      ask: 1.07215,
      digits: server.digits,
      point: server.point,
      spread: server.spread,
      type: server.type,
    });
    expect(Date.parse(info!.lastTime!)).toBe(Date.parse(server.lastTime!));
    expect(info!.spread).toBe(14);
    const missing = await fails(c, 'v2.PF4.SymbolInfoGet', { query: { symbol: 'NOSUCH' } });
    expect(missing).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    await refuses(c, 'v2.PF4.SymbolInfoGet', 'symbol', { query: {} });
    await refuses(c, 'v2.PF4.SymbolInfoGet', 'symbol', { query: { symbol: 'ABCDEFGHIJKLM' } });
  });
});

describe('v2.PF4.SymbolInfoUpdated', () => {
  it('answers the symbols updated since the last flush by name, pages over the taken set, and is empty when read again', async () => {
    await ok(c, 'v2.PF4.SymbolInfoUpdated'); // flush whatever changed before this test
    await ok(c, 'v2.PF4.SymbolSendTick', { query: { symbol: 'USDCHF', bid: 0.88101, ask: 0.88117 } });
    await ok(c, 'v2.PF4.SymbolSendTick', { query: { symbol: 'AUDUSD', bid: 0.65101, ask: 0.65115 } });
    await cachedInfo('USDCHF', 0.88101);
    await cachedInfo('AUDUSD', 0.65101);

    // The flush (no cursor) takes the set and answers its first page; the cursor continues over the same set.
    const first = await call<Info[]>(c, 'v2.PF4.SymbolInfoUpdated', { query: { limit: 1 } });
    expect(first.body.data!.map((i) => [i.symbol, i.bid, i.ask])).toEqual([['AUDUSD', 0.65101, 0.65115]]);
    expect(first.body.meta.paging).toMatchObject({ hasMore: true });
    // A tick between the pages belongs to the next flush, not to the pages of this one.
    await ok(c, 'v2.PF4.SymbolSendTick', { query: { symbol: 'AUDUSD', bid: 0.65201, ask: 0.65215 } });
    await cachedInfo('AUDUSD', 0.65201);
    const second = await call<Info[]>(c, 'v2.PF4.SymbolInfoUpdated', {
      query: { limit: 1, cursor: first.body.meta.paging!.nextCursor! },
    });
    expect(second.body.data!.map((i) => [i.symbol, i.bid, i.ask])).toEqual([['USDCHF', 0.88101, 0.88117]]);
    expect(second.body.meta.paging).toEqual({ hasMore: false, nextCursor: null });

    // The next flush has only what changed since the last one; then nothing.
    expect((await ok<Info[]>(c, 'v2.PF4.SymbolInfoUpdated')).map((i) => [i.symbol, i.bid])).toEqual([
      ['AUDUSD', 0.65201],
    ]);
    expect(await ok(c, 'v2.PF4.SymbolInfoUpdated')).toEqual([]);
    expect(await ok(c, 'v2.PF4.SymbolInfoUpdated', { query: { limit: 5 } })).toEqual([]);
  });

  it('walks every page of a flush in name order, refuses a cursor of an earlier flush and a tampered one', async () => {
    const names = ['AUDUSD', 'EURUSD', 'USDCHF'];
    const bids: Record<string, number> = { AUDUSD: 0.65301, EURUSD: 1.07301, USDCHF: 0.88301 };
    for (const name of [...names].reverse())
      await ok(c, 'v2.PF4.SymbolSendTick', { query: { symbol: name, bid: bids[name], ask: bids[name] + 0.0002 } });
    for (const name of names) await cachedInfo(name, bids[name]);
    const { items, pages } = await allPages<Info>(c, 'v2.PF4.SymbolInfoUpdated', 2);
    expect(items.map((i) => [i.symbol, i.bid])).toEqual(names.map((n) => [n, bids[n]]));
    expect(pages).toBe(2);

    await ok(c, 'v2.PF4.SymbolSendTick', { query: { symbol: 'EURUSD', bid: 1.07401, ask: 1.07415 } });
    await ok(c, 'v2.PF4.SymbolSendTick', { query: { symbol: 'USDCHF', bid: 0.88401, ask: 0.88415 } });
    await cachedInfo('USDCHF', 0.88401);
    await cachedInfo('EURUSD', 1.07401);
    const page = await call<Info[]>(c, 'v2.PF4.SymbolInfoUpdated', { query: { limit: 1 } });
    expect(page.body.data!.map((i) => i.symbol)).toEqual(['EURUSD']);
    await ok(c, 'v2.PF4.SymbolInfoUpdated'); // another flush: the first page's set is gone
    await refuses(c, 'v2.PF4.SymbolInfoUpdated', 'cursor', {
      query: { limit: 1, cursor: page.body.meta.paging!.nextCursor! },
    });
    await refusesTamperedCursor(c, 'v2.PF4.SymbolInfoUpdated');
    await refuses(c, 'v2.PF4.SymbolInfoUpdated', 'limit', { query: { limit: 0 } });
  });
});

describe('v2.PF4.SymbolsGroupsGet', () => {
  it('answers the 32 security groups (name, description) as the server has them, in slot order', async () => {
    const groups = await ok<Rec[]>(c, 'v2.PF4.SymbolsGroupsGet');
    const server = await sim.ok<Rec[]>('CfgRequestSymbolGroup');
    expect(groups).toHaveLength(32);
    expect(groups).toEqual(server.map((g) => ({ name: g.name ?? null, description: g.description ?? null })));
    expect(groups.slice(0, 5).map((g) => g.name)).toEqual(['Forex', 'Metals', 'Indices', 'Energies', 'Crypto']);
  });
});

describe('v2.PF4.CfgRequestSymbol', () => {
  it("answers the live configuration of every configured symbol, in the server's order", async () => {
    const list = await ok<Rec[]>(c, 'v2.PF4.CfgRequestSymbol');
    const server = await sim.ok<Rec[]>('CfgRequestSymbol');
    expect(list.map((s) => s.symbol)).toEqual(server.map((s) => s.symbol));
    expect(list).toHaveLength(12);
    for (const [i, s] of server.entries()) expect(list[i]).toMatchObject(s);
  });
});

describe('v2.PF4.CfgRequestSymbolSymbol', () => {
  it("answers one symbol's live configuration with every contract field, NotFound when unknown", async () => {
    const one = await ok<Rec>(c, 'v2.PF4.CfgRequestSymbolSymbol', { params: { symbol: 'XAUUSD' } });
    expect(one).toMatchObject(await config('XAUUSD'));
    expect(one).toHaveProperty('swapVariationMargin');
    expect(one).toHaveProperty('valueDate');
    const missing = await fails(c, 'v2.PF4.CfgRequestSymbolSymbol', { params: { symbol: 'NOSUCH' } });
    expect(missing).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    await refuses(c, 'v2.PF4.CfgRequestSymbolSymbol', 'symbol', { params: { symbol: 'ABCDEFGHIJKLM' } });
  });
});

describe('v2.PF4.SymbolSessionsGet', () => {
  it('answers the 7 weekday session entries from the cache, as the server has them; NotFound when unknown', async () => {
    const days = await ok<Rec[]>(c, 'v2.PF4.SymbolSessionsGet', { params: { symbol: 'GBPUSD' } });
    expect(days.map((d) => d.dayOfWeek)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(days).toEqual(await sim.ok<Rec[]>('SymbolSessionsGet', { symbol: 'GBPUSD' }));
    const missing = await fails(c, 'v2.PF4.SymbolSessionsGet', { params: { symbol: 'NOSUCH' } });
    expect(missing).toMatchObject({ code: 'NotFound', managerCode: 'InvalidData' });
    await refuses(c, 'v2.PF4.SymbolSessionsGet', 'symbol', { params: { symbol: 'ABCDEFGHIJKLM' } });
  });
});

/** The fields CfgUpdateSymbol must keep as the server has them. */
const PRESERVED = [
  'symbol',
  'count',
  'countOriginal',
  'point',
  'multiply',
  'bidTickValue',
  'askTickValue',
  'filterCounter',
];

describe('v2.PF4.CfgUpdateSymbol', () => {
  it('replaces the configuration from the DTO over the current record; sessions and server-derived fields are kept', async () => {
    const before = await config('NZDUSD');
    const shapedBefore = await ok<Rec>(c, 'v2.PF4.CfgRequestSymbolSymbol', { params: { symbol: 'NZDUSD' } });
    const sessions = await sim.ok('SymbolSessionsGet', { symbol: 'NZDUSD' });
    try {
      const answer = await ok<Rec>(c, 'v2.PF4.CfgUpdateSymbol', {
        params: { symbol: 'NZDUSD' },
        body: { description: 'Kiwi vs US Dollar', stopsLevel: 25 },
      });
      expect(answer).toMatchObject({ symbol: 'NZDUSD', description: 'Kiwi vs US Dollar', stopsLevel: 25 });
      const after = await config('NZDUSD');
      expect(after).toMatchObject({ description: 'Kiwi vs US Dollar', stopsLevel: 25 });
      // Everything else is as it was: the DTO's other fields (read, overlaid, written back) and the preserved ones.
      expect({ ...after, description: before.description, stopsLevel: before.stopsLevel }).toEqual(before);
      for (const field of PRESERVED) expect(answer[field], field).toEqual(shapedBefore[field]);
      expect(answer).toEqual({ ...shapedBefore, description: 'Kiwi vs US Dollar', stopsLevel: 25 });
      expect(await sim.ok('SymbolSessionsGet', { symbol: 'NZDUSD' })).toEqual(sessions);
    } finally {
      await ok(c, 'v2.PF4.CfgUpdateSymbol', {
        params: { symbol: 'NZDUSD' },
        body: { description: before.description, stopsLevel: before.stopsLevel },
      });
    }
    expect(await config('NZDUSD')).toEqual(before);
  });

  it('refuses server-derived and unknown fields and ill-typed values, naming the field; unknown symbol is NotFound', async () => {
    await refuses(c, 'v2.PF4.CfgUpdateSymbol', 'point', { params: { symbol: 'NZDUSD' }, body: { point: 1 } });
    await refuses(c, 'v2.PF4.CfgUpdateSymbol', 'body.digits', {
      params: { symbol: 'NZDUSD' },
      body: { digits: 'five' },
    });
    await refuses(c, 'v2.PF4.CfgUpdateSymbol', 'body.tradeMode', {
      params: { symbol: 'NZDUSD' },
      body: { tradeMode: 'Sometimes' },
    });
    await refuses(c, 'v2.PF4.CfgUpdateSymbol', 'symbol', { params: { symbol: 'ABCDEFGHIJKLM' }, body: {} });
    expect(
      await fails(c, 'v2.PF4.CfgUpdateSymbol', { params: { symbol: 'NOSUCH' }, body: { stopsLevel: 5 } }),
    ).toMatchObject({ code: 'NotFound' });
  });
});

describe('v2.PF4.SymbolConfig', () => {
  it('merges a patch over the live configuration and writes it back, leaving the other fields', async () => {
    const before = await config('GBPUSD');
    try {
      const answer = await ok<Rec>(c, 'v2.PF4.SymbolConfig', {
        params: { symbol: 'GBPUSD' },
        body: { spreadBalance: 3, swapLong: -4.75 },
      });
      expect(answer).toMatchObject({
        symbol: 'GBPUSD',
        spreadBalance: 3,
        swapLong: -4.75,
        description: before.description,
      });
      const after = await config('GBPUSD');
      expect({ ...after, spreadBalance: before.spreadBalance, swapLong: before.swapLong }).toEqual(before);
      // A null member empties a text field.
      expect(
        await ok<Rec>(c, 'v2.PF4.SymbolConfig', { params: { symbol: 'GBPUSD' }, body: { source: 'feed-a' } }),
      ).toMatchObject({ source: 'feed-a' });
      expect(
        await ok<Rec>(c, 'v2.PF4.SymbolConfig', { params: { symbol: 'GBPUSD' }, body: { source: null } }),
      ).toMatchObject({ source: '' });
    } finally {
      await ok(c, 'v2.PF4.SymbolConfig', {
        params: { symbol: 'GBPUSD' },
        body: { spreadBalance: before.spreadBalance, swapLong: before.swapLong, source: before.source },
      });
    }
    expect(await config('GBPUSD')).toEqual(before);
  });

  it('refuses an empty patch, unknown and server-derived members and ill-typed values, naming the field', async () => {
    await refuses(c, 'v2.PF4.SymbolConfig', 'merge patch', { params: { symbol: 'GBPUSD' }, body: {} });
    await refuses(c, 'v2.PF4.SymbolConfig', 'multiply', { params: { symbol: 'GBPUSD' }, body: { multiply: 10 } });
    await refuses(c, 'v2.PF4.SymbolConfig', 'body.spread', { params: { symbol: 'GBPUSD' }, body: { spread: 'wide' } });
    expect(await fails(c, 'v2.PF4.SymbolConfig', { params: { symbol: 'NOSUCH' }, body: { spread: 5 } })).toMatchObject({
      code: 'NotFound',
    });
  });
});

describe('v2.PF4.SymbolHide', () => {
  it('takes a symbol out of the active set: not loaded in the cache, no ticks accepted, still configured', async () => {
    expect(
      await eventually(
        async () => (await call(c, 'v2.PF4.SymbolInfoGet', { query: { symbol: 'EURGBP' } })).body.error === null,
      ),
    ).toBe(true);
    try {
      expect(await ok(c, 'v2.PF4.SymbolHide', { params: { symbol: 'EURGBP' } })).toBe(true);
      expect((await sim.ok<Rec[]>('SymbolsRequest')).map((s) => s.symbol)).not.toContain('EURGBP');
      const gone = await eventually(
        async () =>
          (await call(c, 'v2.PF4.SymbolInfoGet', { query: { symbol: 'EURGBP' } })).body.error?.code === 'NotFound',
      );
      expect(gone).toBe(true);
      expect(
        await fails(c, 'v2.PF4.SymbolSendTick', { query: { symbol: 'EURGBP', bid: 0.85, ask: 0.8502 } }),
      ).toMatchObject({ code: 'PF4Error' });
      expect((await ok<Rec[]>(c, 'v2.PF4.CfgRequestSymbol')).map((s) => s.symbol)).toContain('EURGBP');
      // Hiding a hidden symbol changes nothing.
      expect(await ok(c, 'v2.PF4.SymbolHide', { params: { symbol: 'EURGBP' } })).toBe(true);
    } finally {
      await sim.ok('SymbolAdd', { symbol: 'EURGBP' });
    }
    await refuses(c, 'v2.PF4.SymbolHide', 'symbol', { params: { symbol: 'ABCDEFGHIJKLM' } });
    expect(await fails(c, 'v2.PF4.SymbolHide', { params: { symbol: 'NOSUCH' } })).toMatchObject({
      managerCode: 'InvalidData',
    });
  });
});

describe('v2.PF4.SymbolAdd', () => {
  it('puts a hidden symbol back in the active set: loaded again and quoting', async () => {
    await sim.ok('SymbolHide', { symbol: 'EURGBP' });
    await eventually(
      async () => (await call(c, 'v2.PF4.SymbolInfoGet', { query: { symbol: 'EURGBP' } })).body.error !== null,
    );
    expect(await ok(c, 'v2.PF4.SymbolAdd', { params: { symbol: 'EURGBP' } })).toBe(true);
    expect((await sim.ok<Rec[]>('SymbolsRequest')).map((s) => s.symbol)).toContain('EURGBP');
    expect(await ok(c, 'v2.PF4.SymbolSendTick', { query: { symbol: 'EURGBP', bid: 0.85123, ask: 0.85139 } })).toBe(
      true,
    );
    expect(await cachedInfo('EURGBP', 0.85123)).toMatchObject({ symbol: 'EURGBP', ask: 0.85139 });
    // Adding an active symbol changes nothing.
    expect(await ok(c, 'v2.PF4.SymbolAdd', { params: { symbol: 'EURGBP' } })).toBe(true);
    await refuses(c, 'v2.PF4.SymbolAdd', 'symbol', { params: { symbol: 'ABCDEFGHIJKLM' } });
    expect(await fails(c, 'v2.PF4.SymbolAdd', { params: { symbol: 'NOSUCH' } })).toMatchObject({
      managerCode: 'InvalidData',
    });
  });
});

describe('v2.PF4.SymbolsRefresh', () => {
  it('has the server hand over every active symbol afresh', async () => {
    const from = new Date().toISOString();
    expect(await ok(c, 'v2.PF4.SymbolsRefresh')).toBe(true);
    const active = await sim.ok<Rec[]>('SymbolsRequest');
    const lines = await sim.ok<Rec[]>('JournalRequest', { from, filter: 'symbols refreshed' });
    expect(lines.map((l) => l.message)).toEqual([`symbols refreshed: ${active.length}`]);
    // The catalog the gateway then answers is the server's.
    expect((await ok<Rec[]>(c, 'v2.PF4.CfgRequestSymbol')).map((s) => s.symbol)).toEqual(
      (await sim.ok<Rec[]>('CfgRequestSymbol')).map((s) => s.symbol),
    );
  });
});

describe('v2.PF4.SymbolChange', () => {
  it('sets the given quick-change fields (spread, stops level, colour, smoothing, execution mode) and nothing else', async () => {
    const before = await config('USDCAD');
    try {
      const body = { symbol: 'USDCAD', spread: 30, stopsLevel: 15, color: 255, smoothing: 2, exeMode: 'Market' };
      expect(await ok(c, 'v2.PF4.SymbolChange', { body })).toBe(true);
      const after = await config('USDCAD');
      expect(after).toMatchObject({
        spread: 30,
        stopsLevel: 15,
        backgroundColor: 255,
        filterSmoothing: 2,
        symbolExecMode: 'Market',
      });
      expect({
        ...after,
        spread: before.spread,
        stopsLevel: before.stopsLevel,
        backgroundColor: before.backgroundColor,
        filterSmoothing: before.filterSmoothing,
        symbolExecMode: before.symbolExecMode,
      }).toEqual(before);
      const live = await ok<Rec>(c, 'v2.PF4.CfgRequestSymbolSymbol', { params: { symbol: 'USDCAD' } });
      expect(live).toMatchObject({ spread: 30, stopsLevel: 15, symbolExecMode: 'Market' });
    } finally {
      await sim.ok('CfgUpdateSymbol', {
        symbol: 'USDCAD',
        record: {
          spread: before.spread,
          stopsLevel: before.stopsLevel,
          backgroundColor: before.backgroundColor ?? 0,
          filterSmoothing: before.filterSmoothing ?? 0,
          symbolExecMode: before.symbolExecMode,
        },
      });
    }
    const restored = await config('USDCAD');
    expect({ ...restored, backgroundColor: before.backgroundColor, filterSmoothing: before.filterSmoothing }).toEqual(
      before,
    );
  });

  it('refuses a missing or long symbol, negative spread or stops level and unknown fields, naming the field', async () => {
    await refuses(c, 'v2.PF4.SymbolChange', 'body.symbol', { body: { spread: 10 } });
    await refuses(c, 'v2.PF4.SymbolChange', 'body.symbol', { body: { symbol: 'ABCDEFGHIJKLM', spread: 10 } });
    await refuses(c, 'v2.PF4.SymbolChange', 'body.spread', { body: { symbol: 'USDCAD', spread: -1 } });
    await refuses(c, 'v2.PF4.SymbolChange', 'body.stopsLevel', { body: { symbol: 'USDCAD', stopsLevel: -2 } });
    await refuses(c, 'v2.PF4.SymbolChange', 'body.exeMode', { body: { symbol: 'USDCAD', exeMode: 'Whenever' } });
    await refuses(c, 'v2.PF4.SymbolChange', 'width', { body: { symbol: 'USDCAD', width: 3 } });
    expect(await fails(c, 'v2.PF4.SymbolChange', { body: { symbol: 'NOSUCH', spread: 3 } })).toMatchObject({
      code: 'PF4Error',
      managerCode: 'InvalidData',
    });
  });
});
