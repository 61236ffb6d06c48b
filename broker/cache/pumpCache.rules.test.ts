/**
 * The pumping cache's rules, one behaviour per test: the tables each family keeps and how their rows are keyed,
 * indexed and shaped; which change events and snapshot rows are ignored; how ticks and symbol changes move the PF4
 * symbol summaries and which symbols count as updated; how trades, news bodies and group securities are derived and
 * reconciled; and the readiness and disposal of the cache. Everything runs in process on hand-built events.
 */
import { describe, expect, it } from 'vitest';
import type { ManagerEvent } from '../../shared/protocol.js';
import { openapiComponents } from '../../shared/records/contract.js';
import { shapeRecord } from '../../shared/records/shape.js';
import { PumpCache, type Row } from './pumpCache.js';

type Op = 'add' | 'update' | 'delete';
const resync = (op: 'begin' | 'chunk' | 'end', record: unknown = {}): ManagerEvent => ({ event: 'resync', op, record });
const chunk = (kind: string, items: unknown[]) => resync('chunk', { kind, items });
const change = (event: string, op: Op, record: unknown) => ({ event, op, record }) as ManagerEvent;
const fieldsOf = (schema: string) => Object.keys((openapiComponents as Record<string, any>)[schema].properties);
const shape = (schema: string, value: unknown) => shapeRecord(schema)(value) as Row;
const rows = (cache: PumpCache, table: string) => cache.table(table)!.page(undefined, undefined).items;
const keys = (cache: PumpCache, table: string, field: string) => rows(cache, table).map((r) => r[field]);
/** Lets every pending promise callback run (one macrotask turn; no timer). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

function snapshot(cache: PumpCache, chunks: Array<[string, unknown[]]>): PumpCache {
  cache.apply(resync('begin'));
  for (const [kind, items] of chunks) cache.apply(chunk(kind, items));
  cache.apply(resync('end'));
  return cache;
}

const user = (login: number, name = `u${login}`) => ({ login, name, group: 'demo' });
const trade = (order: number, extra: Record<string, unknown> = {}) => ({
  order,
  login: 1,
  symbol: 'EURUSD',
  tradeRecordState: 'OpenNormal',
  ...extra,
});

const T = (hhmmss: string, date = '2026-03-10') => `${date}T${hhmmss}.000Z`;
/** A PF4 symbol summary; with these prices the spread in points is 10. */
const info = (symbol: unknown, extra: Record<string, unknown> = {}) => ({
  symbol,
  digits: 5,
  type: 0,
  point: 0.00001,
  spread: 10,
  direction: 'None',
  bid: 1.1,
  ask: 1.1001,
  high: 1.105,
  low: 1.095,
  lastTime: T('10:00:00'),
  ...extra,
});
const tick = (symbol: unknown, bid: unknown, ask: unknown, time?: unknown) =>
  change('ticks', 'update', { symbol, bid, ask, ...(time === undefined ? {} : { time }) });

/** A PF4 cache with EURUSD's summary (and symbol) from its first snapshot, the updated set already taken. */
function pf4Summaries(extraInfo: unknown[] = [], options: ConstructorParameters<typeof PumpCache>[1] = {}): PumpCache {
  const cache = snapshot(new PumpCache('PF4', options), [
    ['symbols', [{ symbol: 'EURUSD', digits: 5, type: 0, point: 0.00001 }]],
    ['symbolInfo', [info('EURUSD'), ...extraInfo]],
  ]);
  cache.takeUpdatedSymbols();
  return cache;
}

describe('PF5 tables', () => {
  function pf5(): PumpCache {
    return snapshot(new PumpCache('PF5'), [
      [
        'users',
        [
          { login: 7, name: 'Ann', group: 'real', password: 'secret', stray: 1 },
          { login: 8, name: 'Bob' },
        ],
      ],
      [
        'positions',
        [
          { position: 103, login: 7, symbol: 'XAUUSD', stray: 1 },
          { position: 101, login: 7, symbol: 'EURUSD' },
          { position: 102, login: 8, symbol: 'EURUSD' },
        ],
      ],
      [
        'orders',
        [
          { order: 202, login: 8, symbol: 'EURUSD', stray: 1 },
          { order: 201, login: 7, symbol: 'EURUSD' },
        ],
      ],
      [
        'deals',
        [
          { deal: 303, login: 7, order: 201, stray: 1 },
          { deal: 301, login: 8 },
          { deal: 302, login: 8 },
        ],
      ],
      [
        'ticks',
        [
          { symbol: 'EURUSD', bid: 1.1, ask: 1.1002, stray: 'kept' },
          { symbol: 'GBPUSD', bid: 1.3, ask: 1.3002 },
        ],
      ],
      ['symbols', [{ symbol: 'EURUSD', digits: 5, stray: 1 }]],
      ['groups', [{ group: 'real\\pro', company: 'Desk', stray: 1 }]],
    ]);
  }

  it('keeps users by login, shaped as PF5User with the secrets blanked', () => {
    const cache = pf5();
    const ann = cache.get('users', 7)!;
    expect(Object.keys(ann)).toEqual(fieldsOf('PF5User'));
    expect(ann).toEqual(shape('PF5User', { login: 7, name: 'Ann', group: 'real' }));
    expect(ann).toMatchObject({ login: 7, name: 'Ann', group: 'real', company: null, leverage: 0 });
    expect(ann).not.toHaveProperty('stray');
    expect(JSON.stringify(ann)).not.toContain('secret');
    expect(keys(cache, 'users', 'login')).toEqual([7, 8]);
    cache.apply(change('users', 'update', { login: 8, name: 'Robert', extra: true }));
    expect(cache.get('users', 8)).toEqual(shape('PF5User', { login: 8, name: 'Robert' }));
    cache.apply(change('users', 'delete', { login: 7 }));
    expect(keys(cache, 'users', 'login')).toEqual([8]);
  });

  it('keeps positions, orders and deals by their ticket, shaped, and indexed by login', () => {
    const cache = pf5();
    for (const [table, field, schema] of [
      ['positions', 'position', 'PF5Position'],
      ['orders', 'order', 'PF5Order'],
      ['deals', 'deal', 'PF5Deal'],
    ] as const) {
      for (const row of rows(cache, table)) {
        expect(Object.keys(row)).toEqual(fieldsOf(schema));
        expect(row).not.toHaveProperty('stray');
      }
      expect(cache.get(table, rows(cache, table)[0][field] as number)).toStrictEqual(rows(cache, table)[0]);
    }
    expect(keys(cache, 'positions', 'position')).toEqual([101, 102, 103]);
    expect(cache.get('positions', 103)).toMatchObject({ position: 103, login: 7, symbol: 'XAUUSD', priceOpen: null });
    expect(
      cache
        .table('positions')!
        .lookup('login', 7)
        .map((r) => r.position),
    ).toEqual([101, 103]);
    expect(
      cache
        .table('positions')!
        .lookup('login', 8)
        .map((r) => r.position),
    ).toEqual([102]);
    expect(cache.get('orders', 202)).toMatchObject({ order: 202, login: 8, symbol: 'EURUSD', state: null });
    expect(
      cache
        .table('orders')!
        .lookup('login', 7)
        .map((r) => r.order),
    ).toEqual([201]);
    expect(
      cache
        .table('orders')!
        .lookup('login', 8)
        .map((r) => r.order),
    ).toEqual([202]);
    expect(cache.get('deals', 303)).toMatchObject({ deal: 303, login: 7, order: 201 });
    expect(
      cache
        .table('deals')!
        .lookup('login', 8)
        .map((r) => r.deal),
    ).toEqual([301, 302]);
    expect(
      cache
        .table('deals')!
        .lookup('login', 7)
        .map((r) => r.deal),
    ).toEqual([303]);

    // Change events follow the same keys and move rows between index buckets.
    cache.apply(change('positions', 'update', { position: 101, login: 8, symbol: 'EURUSD', stray: 2 }));
    cache.apply(change('orders', 'add', { order: 205, login: 7 }));
    cache.apply(change('deals', 'delete', { deal: 301 }));
    expect(cache.get('positions', 101)).toEqual(shape('PF5Position', { position: 101, login: 8, symbol: 'EURUSD' }));
    expect(
      cache
        .table('positions')!
        .lookup('login', 8)
        .map((r) => r.position),
    ).toEqual([101, 102]);
    expect(
      cache
        .table('positions')!
        .lookup('login', 7)
        .map((r) => r.position),
    ).toEqual([103]);
    expect(
      cache
        .table('orders')!
        .lookup('login', 7)
        .map((r) => r.order),
    ).toEqual([201, 205]);
    expect(
      cache
        .table('deals')!
        .lookup('login', 8)
        .map((r) => r.deal),
    ).toEqual([302]);
  });

  it('keeps ticks by symbol as they arrive, and symbols by symbol shaped as PF5Symbol', () => {
    const cache = pf5();
    expect(cache.get('ticks', 'EURUSD')).toEqual({ symbol: 'EURUSD', bid: 1.1, ask: 1.1002, stray: 'kept' });
    expect(keys(cache, 'ticks', 'symbol')).toEqual(['EURUSD', 'GBPUSD']);
    cache.apply(change('ticks', 'update', { symbol: 'GBPUSD', bid: 1.31, ask: 1.3102 }));
    expect(cache.get('ticks', 'GBPUSD')).toEqual({ symbol: 'GBPUSD', bid: 1.31, ask: 1.3102 });
    cache.apply(change('ticks', 'delete', { symbol: 'EURUSD' }));
    expect(keys(cache, 'ticks', 'symbol')).toEqual(['GBPUSD']);

    const eurusd = cache.get('symbols', 'EURUSD')!;
    expect(Object.keys(eurusd)).toEqual(fieldsOf('PF5Symbol'));
    expect(eurusd).toEqual(shape('PF5Symbol', { symbol: 'EURUSD', digits: 5 }));
    // PF5 has no symbol summaries: symbol changes only touch the symbols table.
    cache.apply(change('symbols', 'update', { symbol: 'USDJPY', digits: 3, stray: 1 }));
    expect(cache.get('symbols', 'USDJPY')).toEqual(shape('PF5Symbol', { symbol: 'USDJPY', digits: 3 }));
    expect(cache.get('symbols', 'USDJPY')).not.toHaveProperty('stray');
    cache.apply(change('symbols', 'delete', { symbol: 'EURUSD' }));
    expect(keys(cache, 'symbols', 'symbol')).toEqual(['USDJPY']);
    expect(cache.takeUpdatedSymbols()).toEqual([]);
  });

  it('keeps groups by name shaped as PF5ConGroup, without PF4 securities', () => {
    const cache = pf5();
    const pro = cache.get('groups', 'real\\pro')!;
    expect(Object.keys(pro)).toEqual(fieldsOf('PF5ConGroup'));
    expect(pro).toEqual(shape('PF5ConGroup', { group: 'real\\pro', company: 'Desk' }));
    cache.apply(change('groups', 'add', { group: 'demo', company: 'Demo desk', secGroups: [], stray: 1 }));
    expect(cache.get('groups', 'demo')).toEqual(shape('PF5ConGroup', { group: 'demo', company: 'Demo desk' }));
    cache.apply(change('groups', 'delete', { group: 'real\\pro' }));
    expect(keys(cache, 'groups', 'group')).toEqual(['demo']);
    expect(cache.table('groupSecurities')).toBeUndefined();
  });

  it('has only its own tables; PF4-only kinds in events and snapshots are ignored', () => {
    const cache = pf5();
    const before = cache.sizes();
    expect(Object.keys(before)).toEqual(['users', 'positions', 'orders', 'deals', 'ticks', 'symbols', 'groups']);
    cache.apply(change('trades', 'add', trade(1)));
    cache.apply(change('trades', 'delete', trade(1, { tradeRecordState: 'ClosedNormal' })));
    cache.apply(change('symbolInfo', 'update', info('EURUSD')));
    cache.apply(change('margin', 'update', { login: 7 }));
    cache.apply(change('mail', 'add', { subject: 'hello' }));
    cache.apply(resync('begin'));
    cache.apply(chunk('users', [{ login: 9 }]));
    cache.apply(chunk('trades', [trade(2), trade(3, { tradeRecordState: 'ClosedNormal' })]));
    cache.apply(chunk('symbolInfo', [info('EURUSD')]));
    cache.apply(resync('end'));
    expect(cache.sizes()).toEqual({ users: 1, positions: 0, orders: 0, deals: 0, ticks: 0, symbols: 0, groups: 0 });
    expect(cache.get('trades', 2)).toBeUndefined();
    expect(cache.get('closedTrades', 3)).toBeUndefined();
    expect(cache.get('symbolInfo', 'EURUSD')).toBeUndefined();
    expect(cache.takeUpdatedSymbols()).toEqual([]);
  });
});

describe('keys', () => {
  it('takes number, bigint and string keys, in key order, and indexes by a bigint login', () => {
    const big = 2n ** 63n - 1n;
    const cache = snapshot(new PumpCache('PF5'), [
      [
        'positions',
        [
          { position: big, login: 5n },
          { position: 12, login: 5n },
          { position: 2n ** 53n + 1n, login: 6 },
        ],
      ],
      [
        'ticks',
        [
          { symbol: 'b', bid: 1 },
          { symbol: 'B', bid: 2 },
          { symbol: '#US30', bid: 3 },
        ],
      ],
    ]);
    // A packed row comes back from its text: an id within 2^53 − 1 as a number (shared/int64.ts), the one beyond exact.
    expect(cache.get('positions', big)).toMatchObject({ position: big, login: 5 });
    expect(cache.get('positions', 2n ** 53n + 1n)).toMatchObject({ login: 6 });
    expect(keys(cache, 'positions', 'position')).toEqual([12, 2n ** 53n + 1n, big]);
    expect(
      cache
        .table('positions')!
        .lookup('login', 5n)
        .map((r) => r.position),
    ).toEqual([12, big]);
    expect(keys(cache, 'ticks', 'symbol')).toEqual(['#US30', 'B', 'b']);
    cache.apply(change('positions', 'delete', { position: big }));
    expect(cache.get('positions', big)).toBeUndefined();
    expect(
      cache
        .table('positions')!
        .lookup('login', 5n)
        .map((r) => r.position),
    ).toEqual([12]);
  });

  it('ignores rows whose key is of any other type', () => {
    const odd = [true, false, null, { id: 1 }, ['EURUSD'], () => 'EURUSD', Symbol('EURUSD')];
    const cache = snapshot(new PumpCache('PF4'), [['symbols', odd.map((symbol) => ({ symbol, digits: 1 }))]]);
    expect(cache.sizes().symbols).toBe(0);
    for (const symbol of [...odd, undefined]) cache.apply(change('symbols', 'add', { symbol, digits: 2 }));
    cache.apply(change('symbols', 'add', { digits: 3 }));
    expect(cache.sizes().symbols).toBe(0);
    cache.apply(change('symbols', 'add', { symbol: 'EURUSD', digits: 4 }));
    expect(cache.sizes().symbols).toBe(1);
  });

  it('answers undefined for a table the family does not keep', () => {
    const pf5 = snapshot(new PumpCache('PF5'), [['users', [user(1)]]]);
    expect(pf5.get('closedTrades', 1)).toBeUndefined();
    expect(pf5.get('symbolInfo', 'EURUSD')).toBeUndefined();
    expect(pf5.get('users', 1)).toMatchObject({ login: 1 });
    const pf4 = snapshot(new PumpCache('PF4'), [['users', [user(1)]]]);
    expect(pf4.get('positions', 1)).toBeUndefined();
    expect(pf4.get('mail', 'x')).toBeUndefined();
  });
});

describe('malformed frames', () => {
  function pf4(): PumpCache {
    return snapshot(new PumpCache('PF4'), [
      ['users', [user(1)]],
      ['trades', [trade(10)]],
      ['symbolInfo', [info('EURUSD')]],
    ]);
  }

  it('ignores change events whose record is not an object, without touching any table', () => {
    const cache = pf4();
    cache.takeUpdatedSymbols();
    const before = cache.sizes();
    const bad = [null, undefined, 0, 42, '', 'users', true, [], [user(9)], [trade(11)]];
    for (const event of ['users', 'trades', 'groups', 'ticks', 'symbols', 'symbolInfo', 'margin', 'newsBodies']) {
      for (const op of ['add', 'update', 'delete'] as const) {
        for (const record of bad) expect(() => cache.apply(change(event, op, record))).not.toThrow();
      }
    }
    expect(cache.sizes()).toEqual(before);
    expect(keys(cache, 'users', 'login')).toEqual([1]);
    expect(cache.get('users', 0)).toBeUndefined();
    expect(cache.get('margins', 0)).toBeUndefined();
    expect(keys(cache, 'trades', 'order')).toEqual([10]);
    expect(cache.takeUpdatedSymbols()).toEqual([]);
  });

  it('ignores ops other than add, update and delete', () => {
    const cache = pf4();
    for (const op of ['begin', 'chunk', 'end', 'upsert', '', undefined]) {
      cache.apply({ event: 'users', op, record: user(5) } as unknown as ManagerEvent);
      cache.apply({ event: 'users', op, record: { login: 1 } } as unknown as ManagerEvent);
    }
    expect(keys(cache, 'users', 'login')).toEqual([1]);
    expect(cache.get('users', 1)).toMatchObject({ login: 1, name: 'u1' });
  });

  it('ignores events of kinds the cache does not keep', () => {
    const cache = pf4();
    const before = cache.sizes();
    for (const op of ['add', 'update', 'delete'] as const) {
      expect(() => cache.apply(change('mail', op, { login: 1, subject: 'x' }))).not.toThrow();
      expect(() => cache.apply(change('positions', op, { position: 1, login: 1 }))).not.toThrow();
    }
    expect(cache.sizes()).toEqual(before);
  });

  it('ignores chunks without an item list, and items that are not objects', () => {
    const cache = new PumpCache('PF4');
    cache.apply(resync('begin'));
    for (const record of [
      null,
      undefined,
      7,
      { kind: 'users' },
      { kind: 'users', items: null },
      { kind: 'users', items: { 0: user(4), length: 1 } },
      { kind: 'users', items: 5 },
    ]) {
      expect(() => cache.apply(resync('chunk', record))).not.toThrow();
    }
    cache.apply(chunk('users', [null, undefined, 'x', 7, true, [user(3)], user(1), user(2)]));
    cache.apply(chunk('trades', [null, 'x', [trade(12)], trade(10)]));
    cache.apply(resync('end'));
    expect(cache.ready).toBe(true);
    expect(keys(cache, 'users', 'login')).toEqual([1, 2]);
    expect(keys(cache, 'trades', 'order')).toEqual([10]);
    expect(cache.sizes().closedTrades).toBe(0);
  });
});

describe('PF4 tables kept as they arrive or shaped', () => {
  it('shapes ticks as PF4TickInfo, from the snapshot and from events, and drops a deleted one', () => {
    const cache = snapshot(new PumpCache('PF4'), [
      ['ticks', [{ symbol: 'EURUSD', time: T('10:00:00'), bid: 1.1, ask: 1.2, stray: 1 }]],
    ]);
    expect(Object.keys(cache.get('ticks', 'EURUSD')!)).toEqual(['symbol', 'time', 'bid', 'ask']);
    expect(cache.get('ticks', 'EURUSD')).toEqual({ symbol: 'EURUSD', time: T('10:00:00'), bid: 1.1, ask: 1.2 });
    cache.apply(change('ticks', 'update', { symbol: 'GBPUSD', bid: 1.3, last: 1.31 }));
    expect(cache.get('ticks', 'GBPUSD')).toEqual(shape('PF4TickInfo', { symbol: 'GBPUSD', bid: 1.3 }));
    expect(cache.get('ticks', 'GBPUSD')).toMatchObject({ symbol: 'GBPUSD', bid: 1.3, ask: 0 });
    expect(cache.get('ticks', 'GBPUSD')).not.toHaveProperty('last');
    cache.apply(change('ticks', 'delete', { symbol: 'EURUSD' }));
    expect(cache.get('ticks', 'EURUSD')).toBeUndefined();
    expect(keys(cache, 'ticks', 'symbol')).toEqual(['GBPUSD']);
    cache.apply(change('ticks', 'delete', { symbol: 'GBPUSD', bid: 2, ask: 3 }));
    expect(cache.sizes().ticks).toBe(0);
  });

  it('keeps PF4 symbols by symbol exactly as they arrive', () => {
    const eurusd = { symbol: 'EURUSD', digits: 5, point: 0.00001, description: 'Euro', custom: [1, 2] };
    const cache = snapshot(new PumpCache('PF4'), [['symbols', [eurusd]]]);
    expect(cache.get('symbols', 'EURUSD')).toEqual(eurusd);
    cache.apply(change('symbols', 'add', { symbol: 'AUDUSD', stray: true }));
    expect(cache.get('symbols', 'AUDUSD')).toEqual({ symbol: 'AUDUSD', stray: true });
    expect(keys(cache, 'symbols', 'symbol')).toEqual(['AUDUSD', 'EURUSD']);
  });

  it('shapes online accounts as PF4Online', () => {
    const cache = snapshot(new PumpCache('PF4'), [['online', [{ login: 3, group: 'real', ip: '10.0.0.1' }]]]);
    expect(cache.get('online', 3)).toEqual({ login: 3, group: 'real' });
    cache.apply(change('online', 'add', { login: 4, since: 'now' }));
    expect(cache.get('online', 4)).toEqual({ login: 4, group: null });
  });

  it('shapes symbol summaries a symbolInfo event sends whole as PF4SymbolInfo', () => {
    const cache = pf4Summaries();
    cache.apply(change('symbolInfo', 'update', { symbol: 'CADJPY', bid: 110.5, stray: 1 }));
    expect(cache.get('symbolInfo', 'CADJPY')).toEqual({
      symbol: 'CADJPY',
      digits: 0,
      type: 0,
      point: 0,
      spread: 0,
      direction: 'None',
      bid: 110.5,
      ask: 0,
      high: 0,
      low: 0,
      lastTime: null,
    });
    expect(Object.keys(cache.get('symbolInfo', 'CADJPY')!)).toEqual(fieldsOf('PF4SymbolInfo'));
  });
});

describe('PF4 symbol summaries moved by ticks', () => {
  it('has a direction against a previous tick of the same instant and one exactly a day older', () => {
    const cache = pf4Summaries();
    cache.apply(tick('EURUSD', 1.1004, 1.1006, T('10:00:00')));
    expect(cache.get('symbolInfo', 'EURUSD')).toEqual(
      info('EURUSD', { bid: 1.1004, ask: 1.1006, spread: 20, direction: 'Up' }),
    );
    cache.apply(tick('EURUSD', 1.1, 1.1001, T('10:00:00', '2026-03-11')));
    // Exactly one day later: still compared, but a new day restarts the high and low.
    expect(cache.get('symbolInfo', 'EURUSD')).toEqual(
      info('EURUSD', {
        bid: 1.1,
        ask: 1.1001,
        direction: 'Down',
        high: 1.1,
        low: 1.1,
        lastTime: T('10:00:00', '2026-03-11'),
      }),
    );
    cache.apply(tick('EURUSD', 1.2, 1.2001, T('10:00:00', '2026-03-12')));
    expect(cache.get('symbolInfo', 'EURUSD')).toMatchObject({ direction: 'Up', high: 1.2, low: 1.2 });
  });

  it('has no direction against a tick more than a day older, nor against one dated after it', () => {
    const cache = pf4Summaries();
    cache.apply(tick('EURUSD', 1.2, 1.2001, '2026-03-11T10:00:00.001Z'));
    expect(cache.get('symbolInfo', 'EURUSD')).toMatchObject({ direction: 'None', high: 1.2, low: 1.2 });
    // Dated before the previous tick (same day): no direction; the day's high and low still follow the bid.
    cache.apply(tick('EURUSD', 1.3, 1.3001, T('09:00:00', '2026-03-11')));
    expect(cache.get('symbolInfo', 'EURUSD')).toEqual(
      info('EURUSD', {
        bid: 1.3,
        ask: 1.3001,
        direction: 'None',
        high: 1.3,
        low: 1.2,
        lastTime: T('09:00:00', '2026-03-11'),
      }),
    );
    cache.apply(tick('EURUSD', 1.1, 1.1001, T('08:59:59', '2026-03-11')));
    expect(cache.get('symbolInfo', 'EURUSD')).toMatchObject({ direction: 'None', high: 1.3, low: 1.1 });
  });

  it('has no direction, and restarts high and low, after a summary without a usable time', () => {
    const cache = pf4Summaries([
      info('XAUUSD', { lastTime: null, point: 0.01, bid: 2000, ask: 2000.3, high: 2010, low: 1990 }),
      info('USDJPY', { lastTime: 'yesterday', point: 0.001, bid: 150, ask: 150.02, high: 151, low: 149 }),
    ]);
    cache.apply(tick('XAUUSD', 2001, 2001.5, T('10:00:01')));
    expect(cache.get('symbolInfo', 'XAUUSD')).toMatchObject({ direction: 'None', high: 2001, low: 2001, spread: 50 });
    cache.apply(tick('USDJPY', 149.5, 149.53, T('10:00:01')));
    expect(cache.get('symbolInfo', 'USDJPY')).toMatchObject({ direction: 'None', high: 149.5, low: 149.5, spread: 30 });
  });

  it('dates a tick whose time is not a string by the clock', () => {
    const now = Date.parse(T('12:00:00'));
    const cache = pf4Summaries([], { clock: () => now });
    cache.apply(tick('EURUSD', 1.2, 1.2001, 2026));
    expect(cache.get('symbolInfo', 'EURUSD')).toMatchObject({
      lastTime: T('12:00:00'),
      direction: 'Up',
      high: 1.2,
      low: 1.095,
    });
    cache.apply(tick('EURUSD', 1.1, 1.1001, Date.parse(T('13:00:00', '2026-01-01'))));
    expect(cache.get('symbolInfo', 'EURUSD')).toMatchObject({ lastTime: T('12:00:00'), direction: 'Down', low: 1.095 });
  });

  it('computes the spread in points only from a positive finite point, else keeps the previous spread', () => {
    const at = (symbol: string, point: unknown) => info(symbol, { point, spread: 7 });
    const cache = pf4Summaries([
      at('ZERO', 0),
      at('NEG', -0.01),
      at('TEXT', '0.01'),
      at('INF', Infinity),
      info('NONE', { spread: 7, point: undefined }),
      at('GOOD', 0.01),
    ]);
    for (const symbol of ['ZERO', 'NEG', 'TEXT', 'INF', 'NONE', 'GOOD'])
      cache.apply(tick(symbol, 1.1, 1.13, T('10:00:01')));
    for (const symbol of ['ZERO', 'NEG', 'TEXT', 'INF', 'NONE']) {
      expect(cache.get('symbolInfo', symbol)).toMatchObject({ spread: 7, bid: 1.1, ask: 1.13 });
    }
    expect(cache.get('symbolInfo', 'GOOD')).toMatchObject({ spread: 3, bid: 1.1, ask: 1.13 });
  });

  it('ignores ticks without finite prices, and ticks whose symbol is not a string', () => {
    const cache = pf4Summaries([info(5, { digits: 2 })]);
    const eurusd = cache.get('symbolInfo', 'EURUSD');
    const five = cache.get('symbolInfo', 5);
    cache.apply(tick('EURUSD', NaN, 1.1001, T('10:00:01')));
    cache.apply(tick('EURUSD', 1.1, Infinity, T('10:00:02')));
    cache.apply(tick('EURUSD', '1.2', '1.2001', T('10:00:03')));
    cache.apply(tick('EURUSD', 1.2, undefined, T('10:00:04')));
    cache.apply(tick(5, 1.2, 1.2001, T('10:00:05')));
    expect(cache.get('symbolInfo', 'EURUSD')).toBe(eurusd);
    expect(cache.get('symbolInfo', 5)).toBe(five);
    expect(cache.takeUpdatedSymbols()).toEqual([]);
    // The ticks table still keeps the last tick it was sent.
    expect(cache.get('ticks', 'EURUSD')).toEqual({ symbol: 'EURUSD', time: T('10:00:04'), bid: 1.2, ask: 0 });
    expect(cache.get('ticks', 5)).toMatchObject({ symbol: 5, bid: 1.2 });
  });
});

describe('PF4 symbol changes and the summaries', () => {
  it('merges only finite digits, type and point into the summary', () => {
    const cache = pf4Summaries();
    cache.apply(change('symbols', 'update', { symbol: 'EURUSD', digits: 4, description: 'x' }));
    expect(cache.get('symbolInfo', 'EURUSD')).toEqual(info('EURUSD', { digits: 4 }));
    expect(cache.takeUpdatedSymbols()).toEqual(['EURUSD']);
    cache.apply(change('symbols', 'update', { symbol: 'EURUSD', digits: Infinity, type: '3', point: NaN, spread: 50 }));
    expect(cache.get('symbolInfo', 'EURUSD')).toEqual(info('EURUSD', { digits: 4 }));
    expect(cache.takeUpdatedSymbols()).toEqual([]);
    cache.apply(change('symbols', 'update', { symbol: 'EURUSD', type: 2, point: 0.0001 }));
    expect(cache.get('symbolInfo', 'EURUSD')).toEqual(info('EURUSD', { digits: 4, type: 2, point: 0.0001 }));
    expect(cache.takeUpdatedSymbols()).toEqual(['EURUSD']);
  });

  it('leaves a summary whose symbol is not a string alone on symbol changes', () => {
    const cache = pf4Summaries([info(5, { digits: 2 })]);
    const five = cache.get('symbolInfo', 5);
    cache.apply(change('symbols', 'update', { symbol: 5, digits: 3 }));
    expect(cache.get('symbolInfo', 5)).toBe(five);
    expect(cache.get('symbols', 5)).toEqual({ symbol: 5, digits: 3 });
    cache.apply(change('symbols', 'delete', { symbol: 5 }));
    expect(cache.get('symbolInfo', 5)).toBe(five);
    expect(cache.get('symbols', 5)).toBeUndefined();
    cache.apply(change('symbols', 'delete', { digits: 1 }));
    expect(cache.sizes()).toMatchObject({ symbolInfo: 2, symbols: 1 });
    expect(cache.takeUpdatedSymbols()).toEqual([]);
  });
});

describe('updated symbols', () => {
  it('marks symbolInfo events, unmarks deletes, and ignores every other kind', () => {
    const cache = pf4Summaries();
    cache.apply(change('symbolInfo', 'update', info('NZDUSD')));
    cache.apply(change('symbolInfo', 'update', info('AUDUSD')));
    cache.apply(change('symbolInfo', 'delete', { symbol: 'NZDUSD' }));
    cache.apply(change('users', 'add', user(5)));
    cache.apply(change('symbolSessions', 'update', { symbol: 'GBPUSD', days: [] }));
    cache.apply(change('online', 'add', { login: 5, symbol: 'USDCHF' }));
    cache.apply(change('symbolInfo', 'update', { digits: 1 }));
    expect(cache.get('symbolInfo', 'NZDUSD')).toBeUndefined();
    expect(cache.takeUpdatedSymbols()).toEqual(['AUDUSD']);
    cache.apply(change('symbolInfo', 'delete', { symbol: 'AUDUSD' }));
    expect(cache.takeUpdatedSymbols()).toEqual([]);
  });

  it('sorts the names by code unit (ordinal)', () => {
    const names = ['b', 'XAUUSD', 'EURUSD', 'B', '#US30', 'a', 'Ä', 'EURUSD.m', 'AUDCAD'];
    const sorted = ['#US30', 'AUDCAD', 'B', 'EURUSD', 'EURUSD.m', 'XAUUSD', 'a', 'b', 'Ä'];
    for (const order of [names, [...names].reverse(), [...sorted].reverse(), sorted]) {
      const cache = pf4Summaries();
      for (const symbol of order) cache.apply(change('symbolInfo', 'update', info(symbol)));
      expect(cache.takeUpdatedSymbols()).toEqual(sorted);
    }
  });

  it('does not count a symbol whose summary is not keyed by a string after a resync', () => {
    const cache = snapshot(new PumpCache('PF4'), [['symbolInfo', [info(5), info(7n), info('EURUSD')]]]);
    expect(cache.takeUpdatedSymbols()).toEqual(['EURUSD']);
    expect(cache.get('symbolInfo', 5)).toMatchObject({ symbol: 5 });
  });
});

describe('changes during a resync', () => {
  function resyncing(): PumpCache {
    const cache = pf4Summaries();
    cache.apply(resync('begin'));
    return cache;
  }

  it('go to the snapshot being built, not to the live tables', () => {
    const cache = resyncing();
    cache.apply(chunk('symbols', [{ symbol: 'EURUSD', digits: 5, type: 0, point: 0.00001 }]));
    cache.apply(chunk('symbolInfo', [info('EURUSD')]));
    cache.apply(change('users', 'add', user(3)));
    cache.apply(tick('EURUSD', 1.2, 1.2001, T('10:00:01')));
    cache.apply(change('symbolInfo', 'update', info('AUDUSD')));
    expect(cache.get('users', 3)).toBeUndefined();
    expect(cache.get('symbolInfo', 'EURUSD')).toEqual(info('EURUSD'));
    expect(cache.get('symbolInfo', 'AUDUSD')).toBeUndefined();
    expect(cache.takeUpdatedSymbols()).toEqual([]);
    cache.apply(resync('end'));
    expect(cache.get('users', 3)).toMatchObject(user(3));
    expect(cache.get('symbolInfo', 'EURUSD')).toMatchObject({ bid: 1.2, direction: 'Up' });
    expect(cache.takeUpdatedSymbols()).toEqual(['AUDUSD', 'EURUSD']);
  });

  it('count a summary as updated only if the snapshot ends with it changed (symbolInfo event)', () => {
    const cache = resyncing();
    cache.apply(chunk('symbolInfo', [info('EURUSD')]));
    cache.apply(change('symbolInfo', 'update', info('EURUSD')));
    cache.apply(resync('end'));
    expect(cache.takeUpdatedSymbols()).toEqual([]);
  });

  it('count a summary as updated only if the snapshot ends with it changed (tick)', () => {
    const cache = resyncing();
    cache.apply(chunk('symbolInfo', [info('EURUSD')]));
    // A tick that repeats the last one leaves the summary exactly as it was.
    cache.apply(tick('EURUSD', 1.1, 1.1001, T('10:00:00')));
    expect(cache.takeUpdatedSymbols()).toEqual([]);
    cache.apply(resync('end'));
    expect(cache.get('symbolInfo', 'EURUSD')).toEqual(info('EURUSD'));
    expect(cache.takeUpdatedSymbols()).toEqual([]);
  });

  it('count a summary as updated only if the snapshot ends with it changed (symbol change)', () => {
    const cache = resyncing();
    cache.apply(chunk('symbolInfo', [info('EURUSD', { digits: 4 })]));
    cache.apply(change('symbols', 'update', { symbol: 'EURUSD', digits: 5, type: 0, point: 0.00001 }));
    expect(cache.get('symbols', 'EURUSD')).toEqual({ symbol: 'EURUSD', digits: 5, type: 0, point: 0.00001 });
    expect(cache.takeUpdatedSymbols()).toEqual([]);
    cache.apply(resync('end'));
    expect(cache.get('symbolInfo', 'EURUSD')).toEqual(info('EURUSD'));
    expect(cache.takeUpdatedSymbols()).toEqual([]);
  });
});

describe('PF4 trades', () => {
  const closed = (order: number, state = 'ClosedNormal') =>
    trade(order, { tradeRecordState: state, closeTime: '2026-01-05T10:00:00Z', closePrice: 1.1 });

  it('splits snapshot rows between open and closed trades, shaped as PF4Trade', () => {
    const cache = new PumpCache('PF4');
    cache.apply(resync('begin'));
    cache.apply(
      chunk('trades', [
        trade(10, { stray: 1 }),
        closed(11),
        closed(12, 'Deleted'),
        trade(13, { tradeRecordState: undefined }),
        closed(14, 'ClosedPart'),
      ]),
    );
    // Closed trades live outside the snapshot: they show at once.
    expect(keys(cache, 'closedTrades', 'order')).toEqual([11, 12, 14]);
    cache.apply(resync('end'));
    expect(keys(cache, 'trades', 'order')).toEqual([10, 13]);
    expect(keys(cache, 'closedTrades', 'order')).toEqual([11, 12, 14]);
    for (const row of [...rows(cache, 'trades'), ...rows(cache, 'closedTrades')]) {
      expect(Object.keys(row)).toEqual(fieldsOf('PF4Trade'));
    }
    expect(cache.get('trades', 10)).toEqual(shape('PF4Trade', trade(10)));
    expect(cache.get('closedTrades', 12)).toEqual(shape('PF4Trade', closed(12, 'Deleted')));
    expect(cache.get('closedTrades', 11)).toMatchObject({
      order: 11,
      closePrice: 1.1,
      closeTime: '2026-01-05T10:00:00Z',
    });
    expect(
      cache
        .table('trades')!
        .lookup('login', 1)
        .map((r) => r.order),
    ).toEqual([10, 13]);
  });

  it('moves a closing trade from open to closed, and a reopened one back', () => {
    const cache = snapshot(new PumpCache('PF4'), [['trades', [trade(10), trade(20)]]]);
    cache.apply(change('trades', 'update', closed(10)));
    expect(keys(cache, 'trades', 'order')).toEqual([20]);
    expect(cache.get('closedTrades', 10)).toEqual(shape('PF4Trade', closed(10)));
    cache.apply(change('trades', 'add', trade(10, { stray: 1 })));
    expect(cache.get('trades', 10)).toEqual(shape('PF4Trade', trade(10)));
    expect(cache.get('closedTrades', 10)).toBeUndefined();
    cache.apply(change('trades', 'delete', { order: 20 }));
    expect(cache.sizes()).toMatchObject({ trades: 1, closedTrades: 0 });
  });

  it('drops, at the end of a resync, only the closed trades the new snapshot has open', () => {
    const cache = snapshot(new PumpCache('PF4'), [['trades', [trade(10), trade(20), trade(30)]]]);
    for (const order of [10, 20, 30]) cache.apply(change('trades', 'delete', closed(order)));
    snapshot(cache, [['trades', [trade(20), trade(40)]]]);
    expect(keys(cache, 'trades', 'order')).toEqual([20, 40]);
    expect(keys(cache, 'closedTrades', 'order')).toEqual([10, 30]);
    expect(cache.get('closedTrades', 10)).toMatchObject({ tradeRecordState: 'ClosedNormal' });
  });

  it('keeps, at the end of a resync, only the news bodies whose topic is still listed', () => {
    const topic = (key: number) => ({ key, time: '2026-01-01T00:00:00Z', topic: `t${key}` });
    const cache = snapshot(new PumpCache('PF4'), [['news', [topic(1), topic(2), topic(3)]]]);
    for (const key of [1, 2, 3]) cache.apply(change('newsBodies', 'update', { key, body: `body ${key}` }));
    snapshot(cache, [['news', [topic(1), topic(3), topic(4)]]]);
    expect(rows(cache, 'newsBodies')).toEqual([
      { key: 1, body: 'body 1' },
      { key: 3, body: 'body 3' },
    ]);
  });
});

describe('PF4 group securities', () => {
  const sec = (lotMax: number) => ({ show: 1, trade: 1, lotMin: 1, lotMax, lotStep: 1 });
  const margin = (symbol: string) => ({ symbol, swapLong: -1, swapShort: -0.5, marginDivider: 2 });
  const secGroups = (lotMax: number) => Array.from({ length: 32 }, () => sec(lotMax));
  const securities = (cache: PumpCache, group: unknown) => cache.get('groupSecurities', group as string);

  it('starts a group without security arrays with empty ones', () => {
    const cache = snapshot(new PumpCache('PF4'), [['groups', [{ group: 'a', company: 'A' }]]]);
    expect(securities(cache, 'a')).toEqual({ group: 'a', secGroups: [], secMargins: [] });
    cache.apply(change('groups', 'add', { group: 'b', secMarginsTotal: 3 }));
    expect(securities(cache, 'b')).toEqual({ group: 'b', secGroups: [], secMargins: [] });
  });

  it('keeps each array a change omits, and shapes the margins it brings, up to their total', () => {
    const cache = snapshot(new PumpCache('PF4'), [
      [
        'groups',
        [
          {
            group: 'a',
            secGroups: secGroups(5),
            secMarginsTotal: 2,
            secMargins: [margin('EURUSD'), { symbol: 'XAUUSD', stray: 1 }, margin('unused')],
          },
        ],
      ],
    ]);
    const shapedSecGroups = secGroups(5).map((s) => shape('PF4GroupSec', s));
    expect(securities(cache, 'a')).toEqual({
      group: 'a',
      secGroups: shapedSecGroups,
      secMargins: [margin('EURUSD'), { symbol: 'XAUUSD', swapLong: 0, swapShort: 0, marginDivider: 0 }],
    });

    cache.apply(change('groups', 'update', { group: 'a', company: 'Renamed desk', secMarginsTotal: 1 }));
    expect(cache.get('groups', 'a')).toMatchObject({ company: 'Renamed desk', secMarginsTotal: 1 });
    expect(securities(cache, 'a')).toEqual({
      group: 'a',
      secGroups: shapedSecGroups,
      secMargins: [margin('EURUSD'), { symbol: 'XAUUSD', swapLong: 0, swapShort: 0, marginDivider: 0 }],
    });

    cache.apply(change('groups', 'update', { group: 'a', secMargins: [margin('GBPUSD'), margin('USDJPY')] }));
    expect(securities(cache, 'a')).toEqual({
      group: 'a',
      secGroups: shapedSecGroups,
      secMargins: [margin('GBPUSD'), margin('USDJPY')],
    });

    cache.apply(
      change('groups', 'update', {
        group: 'a',
        secGroups: secGroups(9),
        secMargins: [margin('X')],
        secMarginsTotal: -1,
      }),
    );
    expect(securities(cache, 'a')).toEqual({
      group: 'a',
      secGroups: secGroups(9).map((s) => shape('PF4GroupSec', s)),
      secMargins: [],
    });

    cache.apply(change('groups', 'update', { group: 'a', secMargins: 'none', secGroups: null, secMarginsTotal: 0 }));
    expect(securities(cache, 'a')).toMatchObject({ secMargins: [] });
    expect((securities(cache, 'a')!.secGroups as Row[]).map((s) => s.lotMax)).toEqual(Array(32).fill(9));
  });

  it('keeps a group whose name is not a string, without securities', () => {
    const cache = snapshot(new PumpCache('PF4'), [
      ['groups', [{ group: 7, company: 'Seven', secGroups: secGroups(1) }]],
    ]);
    expect(cache.get('groups', 7)).toMatchObject({ group: 7, company: 'Seven' });
    expect(securities(cache, 7)).toBeUndefined();
    cache.apply(change('groups', 'add', { group: 8, secMargins: [margin('EURUSD')], secMarginsTotal: 1 }));
    expect(cache.get('groups', 8)).toMatchObject({ group: 8 });
    expect(cache.sizes()).toMatchObject({ groups: 2, groupSecurities: 0 });
  });

  it('removes a deleted group with its securities; a renamed group moves them', () => {
    const cache = snapshot(new PumpCache('PF4'), [
      [
        'groups',
        [
          { group: 'old', secGroups: secGroups(3) },
          { group: 'other', secGroups: secGroups(4) },
        ],
      ],
    ]);
    cache.apply(change('groups', 'delete', { group: 'old' }));
    cache.apply(change('groups', 'add', { group: 'new', secGroups: secGroups(3) }));
    expect(keys(cache, 'groups', 'group')).toEqual(['new', 'other']);
    expect(keys(cache, 'groupSecurities', 'group')).toEqual(['new', 'other']);
    expect(securities(cache, 'old')).toBeUndefined();
    expect((securities(cache, 'new')!.secGroups as Row[])[0]).toMatchObject({ lotMax: 3 });
    expect((securities(cache, 'other')!.secGroups as Row[])[0]).toMatchObject({ lotMax: 4 });
  });
});

describe('readiness and disposal', () => {
  it('resolves whenReady at once once ready, also after later resyncs', async () => {
    const cache = snapshot(new PumpCache('PF4'), [['users', [user(1)]]]);
    let woken = 0;
    void cache.whenReady().then(() => {
      woken++;
    });
    await settle();
    expect(woken).toBe(1);
    snapshot(cache, [['users', [user(2)]]]);
    void cache.whenReady().then(() => {
      woken++;
    });
    await settle();
    expect(woken).toBe(2);
    expect(cache.resyncs).toBe(2);
  });

  it('wakes each reader once when the first resync ends, not again on later ones', async () => {
    const cache = new PumpCache('PF4');
    let woken = 0;
    for (let i = 0; i < 3; i++)
      void cache.whenReady().then(() => {
        woken++;
      });
    await settle();
    expect(woken).toBe(0);
    snapshot(cache, [['users', [user(1)]]]);
    await settle();
    expect(woken).toBe(3);
    snapshot(cache, []);
    expect(() => cache.dispose()).not.toThrow();
    await settle();
    expect(woken).toBe(3);
  });

  it('dispose wakes waiting readers and drops a resync that was streaming', async () => {
    const cache = new PumpCache('PF4');
    let woken = 0;
    void cache.whenReady().then(() => {
      woken++;
    });
    cache.apply(resync('begin'));
    cache.apply(chunk('users', [user(1)]));
    cache.dispose();
    await settle();
    expect(woken).toBe(1);
    cache.apply(resync('end'));
    expect(cache.ready).toBe(false);
    expect(cache.resyncs).toBe(0);
    expect(cache.get('users', 1)).toBeUndefined();
    // Disposing again, or a resync after it, finds no stale waiters.
    expect(() => cache.dispose()).not.toThrow();
    expect(() => snapshot(cache, [['users', [user(2)]]])).not.toThrow();
    expect(cache.ready).toBe(true);
    expect(woken).toBe(1);
  });
});
