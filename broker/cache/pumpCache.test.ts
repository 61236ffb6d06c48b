import { openapiComponents } from '../../shared/records/contract.js';
import { describe, expect, it } from 'vitest';
import type { ManagerEvent } from '../../shared/protocol.js';
import { KeyedTable } from './keyedTable.js';
import { PumpCache } from './pumpCache.js';

const resync = (op: 'begin' | 'chunk' | 'end', record: unknown = {}): ManagerEvent => ({ event: 'resync', op, record });
const chunk = (kind: string, items: unknown[]) => resync('chunk', { kind, items });
const user = (login: number, name = `u${login}`) => ({ login, name, group: 'demo' });
const trade = (order: number, extra: Record<string, unknown> = {}) => ({ order, login: 1, symbol: 'EURUSD', ...extra });

function loaded(): PumpCache {
  const cache = new PumpCache('PF4');
  cache.apply(resync('begin'));
  cache.apply(chunk('users', [user(1), user(2)]));
  cache.apply(chunk('trades', [trade(10), trade(30), trade(20)]));
  cache.apply(chunk('ticks', [{ symbol: 'EURUSD', time: 't', bid: 1, ask: 2 }]));
  cache.apply(resync('end'));
  return cache;
}

describe('PumpCache resync', () => {
  it('is not ready, and readers wait, until the first snapshot ends', async () => {
    const cache = new PumpCache('PF4');
    let woke = false;
    const waiting = cache.whenReady().then(() => { woke = true; });
    cache.apply(resync('begin'));
    cache.apply(chunk('users', [user(1)]));
    await Promise.resolve();
    expect(cache.ready).toBe(false);
    expect(woke).toBe(false);
    cache.apply(resync('end'));
    await waiting;
    expect(cache.ready).toBe(true);
    expect(cache.get('users', 1)).toMatchObject(user(1));
  });

  it('serves the whole old snapshot until the new one ends, then swaps it in at once', () => {
    const cache = loaded();
    cache.apply(resync('begin'));
    cache.apply(chunk('users', [user(2, 'renamed'), user(3)]));
    // Mid-resync: still exactly the old snapshot, nothing of the new one.
    expect(cache.get('users', 1)).toMatchObject(user(1));
    expect(cache.get('users', 2)).toMatchObject(user(2));
    expect(cache.get('users', 3)).toBeUndefined();
    expect(cache.sizes().trades).toBe(3);
    cache.apply(resync('end'));
    expect(cache.get('users', 1)).toBeUndefined();
    expect(cache.get('users', 2)).toMatchObject(user(2, 'renamed'));
    expect(cache.get('users', 3)).toMatchObject(user(3));
    // Kinds absent from the new snapshot are empty, not left over from the old one.
    expect(cache.sizes().trades).toBe(0);
    expect(cache.resyncs).toBe(2);
  });

  it('discards a resync cut short by a dropped connection', () => {
    const cache = loaded();
    cache.apply(resync('begin'));
    cache.apply(chunk('users', [user(99)]));
    cache.abortResync();
    cache.apply(resync('end')); // a stray end without begin changes nothing
    expect(cache.get('users', 99)).toBeUndefined();
    expect(cache.get('users', 1)).toMatchObject(user(1));
  });

  it('ignores chunks without a begin and kinds it does not keep', () => {
    const cache = new PumpCache('PF4');
    cache.apply(chunk('users', [user(1)]));
    cache.apply(resync('begin'));
    cache.apply(chunk('news', [{ id: 1 }]));
    cache.apply(resync('end'));
    expect(cache.sizes().users).toBe(0);
  });
});

describe('PumpCache change events', () => {
  it('adds, updates and deletes users', () => {
    const cache = loaded();
    cache.apply({ event: 'users', op: 'add', record: user(5) });
    cache.apply({ event: 'users', op: 'update', record: user(1, 'changed') });
    cache.apply({ event: 'users', op: 'delete', record: { login: 2 } });
    expect(cache.get('users', 5)).toMatchObject(user(5));
    expect(cache.get('users', 1)).toMatchObject({ name: 'changed' });
    expect(cache.get('users', 2)).toBeUndefined();
  });

  it('keeps open trades only: a closing update or a delete removes the trade', () => {
    const cache = loaded();
    cache.apply({ event: 'trades', op: 'update', record: trade(10, { tradeRecordState: 'ClosedNormal' }) });
    cache.apply({ event: 'trades', op: 'delete', record: { order: 20 } });
    cache.apply({ event: 'trades', op: 'add', record: trade(40, { tradeRecordState: 'OpenNormal' }) });
    expect(cache.get('trades', 10)).toBeUndefined();
    expect(cache.get('trades', 20)).toBeUndefined();
    expect(cache.get('trades', 40)).toBeDefined();
  });

  it('keeps the last tick per symbol', () => {
    const cache = loaded();
    cache.apply({ event: 'ticks', op: 'update', record: { symbol: 'EURUSD', time: 't2', bid: 1.5, ask: 1.6 } });
    cache.apply({ event: 'ticks', op: 'update', record: { symbol: 'GBPUSD', time: 't2', bid: 1.2, ask: 1.3 } });
    expect(cache.get('ticks', 'EURUSD')).toMatchObject({ bid: 1.5 });
    expect(cache.sizes().ticks).toBe(2);
  });

  it('strips secrets from user records whatever the server sends', () => {
    const cache = loaded();
    cache.apply({ event: 'users', op: 'add', record: { ...user(7), password: 'x', passwordInvestor: 'y' } });
    expect(cache.get('users', 7)).toMatchObject(user(7));
    expect(JSON.stringify(cache.get('users', 7))).not.toMatch(/password|"x"|"y"/);
  });

  it('keeps rows as the contract has them: every field present, missing ones empty, unknown ones dropped', () => {
    const cache = loaded();
    cache.apply({ event: 'trades', op: 'add', record: { ...trade(41, { tradeRecordState: 'OpenNormal' }), bogus: 1 } });
    const row = cache.get('trades', 41)!;
    expect(Object.keys(row)).toEqual(Object.keys((openapiComponents as any).PF4Trade.properties));
    expect(row).toMatchObject({ order: 41, closeTime: '1970-01-01T00:00:00Z', expiration: '1970-01-01T00:00:00Z', comment: null });
    expect(row).not.toHaveProperty('bogus');
  });

  it("indexes trades by login and symbol, following adds, moves and deletes", () => {
    const cache = loaded();
    const trades = cache.table('trades')!;
    cache.apply({ event: 'trades', op: 'add', record: trade(60, { login: 9, symbol: 'XAUUSD', tradeRecordState: 'OpenNormal' }) });
    cache.apply({ event: 'trades', op: 'add', record: trade(55, { login: 9, symbol: 'EURUSD', tradeRecordState: 'OpenNormal' }) });
    expect(trades.lookup('login', 9).map((t) => t.order)).toEqual([55, 60]);
    cache.apply({ event: 'trades', op: 'update', record: trade(60, { login: 8, symbol: 'XAUUSD', tradeRecordState: 'OpenNormal' }) });
    expect(trades.lookup('login', 9).map((t) => t.order)).toEqual([55]);
    expect(trades.lookup('login', 8).map((t) => t.order)).toEqual([60]);
    cache.apply({ event: 'trades', op: 'delete', record: { order: 55 } });
    expect(trades.lookup('login', 9)).toEqual([]);
    expect(trades.lookup('symbol', 'XAUUSD').map((t) => t.order)).toEqual([60]);
  });

  it('holds the PF5 kinds by their own keys', () => {
    const cache = new PumpCache('PF5');
    cache.apply(resync('begin'));
    cache.apply(chunk('positions', [{ position: 3, login: 1 }]));
    cache.apply(chunk('deals', [{ deal: 8, login: 1 }]));
    cache.apply(resync('end'));
    cache.apply({ event: 'orders', op: 'add', record: { order: 4, login: 1 } });
    cache.apply({ event: 'positions', op: 'delete', record: { position: 3 } });
    expect(cache.sizes()).toMatchObject({ positions: 0, deals: 1, orders: 1, users: 0 });
  });
});

describe('sorted paging', () => {
  it('stays in key order after inserts and deletes without re-sorting per read', () => {
    const cache = loaded();
    const trades = cache.table('trades')!;
    expect(trades.page(undefined, undefined).items.map((t) => t.order)).toEqual([10, 20, 30]);
    cache.apply({ event: 'trades', op: 'add', record: trade(25) });
    cache.apply({ event: 'trades', op: 'add', record: trade(50) });
    cache.apply({ event: 'trades', op: 'add', record: trade(5) });
    cache.apply({ event: 'trades', op: 'delete', record: { order: 20 } });
    cache.apply({ event: 'trades', op: 'update', record: trade(30, { volume: 2 }) });
    expect(trades.page(undefined, undefined).items.map((t) => t.order)).toEqual([5, 10, 25, 30, 50]);
    const second = trades.page(10, 2);
    expect(second.items.map((t) => t.order)).toEqual([25, 30]);
    expect(second).toMatchObject({ hasMore: true, lastKey: 30 });
    // A cursor key that was deleted meanwhile still continues after it.
    expect(trades.page(20, 10).items.map((t) => t.order)).toEqual([25, 30, 50]);
  });

  it('keeps a large table in order across appends and pages after each', () => {
    const table = new KeyedTable<{ order: number }>((r) => r.order);
    for (let i = 200_000; i > 0; i--) table.put({ order: i * 2 });
    table.page(undefined, 1); // builds the ordered keys once
    for (let i = 0; i < 2000; i++) {
      table.put({ order: 400_001 + i * 2 }); // appended in order
      expect(table.page(i * 100, 1).items[0].order).toBe(i * 100 + 2);
    }
    expect(table.page(399_998, 3).items.map((t) => t.order)).toEqual([400_000, 400_001, 400_003]);
  });
});
