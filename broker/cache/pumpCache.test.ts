import { openapiComponents } from '../../shared/records/contract.js';
import { describe, expect, it } from 'vitest';
import type { ManagerEvent } from '../../shared/protocol.js';
import { KeyedTable } from './keyedTable.js';
import { PumpCache } from './pumpCache.js';
import { shapeRecord } from '../../shared/records/shape.js';

const shape = (schema: string, value: unknown) => shapeRecord(schema)(value) as Record<string, unknown>;

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
    const waiting = cache.whenReady().then(() => {
      woke = true;
    });
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

  it('empties every table on reset (a cold standby logged out) and waits for the next snapshot again', async () => {
    const cache = loaded();
    cache.apply({ event: 'trades', op: 'update', record: trade(20, { tradeRecordState: 'Closed' }) });
    expect(cache.sizes()).toMatchObject({ users: 2, trades: 2 });
    cache.reset();
    expect(cache.ready).toBe(false);
    expect(Object.values(cache.sizes()).every((n) => n === 0)).toBe(true);
    let woke = false;
    const waiting = cache.whenReady().then(() => {
      woke = true;
    });
    await Promise.resolve();
    expect(woke).toBe(false);
    cache.apply(resync('begin'));
    cache.apply(chunk('users', [user(3)]));
    cache.apply(resync('end'));
    await waiting;
    expect(cache.get('users', 3)).toMatchObject(user(3));
    expect(cache.get('users', 1)).toBeUndefined();
  });

  it('ignores chunks without a begin and kinds it does not keep', () => {
    const cache = new PumpCache('PF4');
    cache.apply(chunk('users', [user(1)]));
    cache.apply(resync('begin'));
    cache.apply(chunk('mail', [{ subject: 'x' }]));
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
    expect(row).toMatchObject({
      order: 41,
      closeTime: '1970-01-01T00:00:00Z',
      expiration: '1970-01-01T00:00:00Z',
      comment: null,
    });
    expect(row).not.toHaveProperty('bogus');
  });

  it('indexes trades by login and symbol, following adds, moves and deletes', () => {
    const cache = loaded();
    const trades = cache.table('trades')!;
    cache.apply({
      event: 'trades',
      op: 'add',
      record: trade(60, { login: 9, symbol: 'XAUUSD', tradeRecordState: 'OpenNormal' }),
    });
    cache.apply({
      event: 'trades',
      op: 'add',
      record: trade(55, { login: 9, symbol: 'EURUSD', tradeRecordState: 'OpenNormal' }),
    });
    expect(trades.lookup('login', 9).map((t) => t.order)).toEqual([55, 60]);
    cache.apply({
      event: 'trades',
      op: 'update',
      record: trade(60, { login: 8, symbol: 'XAUUSD', tradeRecordState: 'OpenNormal' }),
    });
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

const sec = (lotMax: number) => ({ show: 1, trade: 1, lotMin: 1, lotMax, lotStep: 1, dealingMode: 'Auto' });
const override = (symbol: string) => ({ symbol, swapLong: -1, swapShort: -0.5, marginDivider: 2 });
const empty = { symbol: '', swapLong: 0, swapShort: 0, marginDivider: 0 };
/** A group as a PF4 server pushes it: the record with its nested arrays, credentials and template paths. */
const groupRecord = (group: string, extra: Record<string, unknown> = {}) => ({
  group,
  company: 'Desk',
  secMarginsTotal: 2,
  marginCall: 100,
  secGroups: Array.from({ length: 32 }, (_, i) => sec(1000 + i)),
  secMargins: [override('EURUSD'), override('XAUUSD'), ...Array.from({ length: 126 }, () => empty)],
  smtpServer: 'mail.example.com',
  smtpLogin: 'reports',
  smtpPassword: 'secret',
  templates: '/templates/desk',
  ...extra,
});

describe('PF4 groups and their securities', () => {
  it('keeps groups as GroupsGet answers them and their securities apart, from the resync and from events', () => {
    const cache = new PumpCache('PF4');
    cache.apply(resync('begin'));
    cache.apply(chunk('groups', [groupRecord('real\\vip'), groupRecord('demo\\forex', { secMarginsTotal: 0 })]));
    cache.apply(resync('end'));
    const vip = cache.get('groups', 'real\\vip')!;
    expect(Object.keys(vip)).toEqual(Object.keys((openapiComponents as any).PF4Group.properties));
    expect(vip).toMatchObject({ group: 'real\\vip', company: 'Desk', secMarginsTotal: 2 });
    expect(JSON.stringify(vip)).not.toMatch(/"secGroups"|"secMargins"|smtp|secret|templates/);

    const securities = cache.get('groupSecurities', 'real\\vip')!;
    expect(Object.keys(securities)).toEqual(['group', 'secGroups', 'secMargins']);
    expect(securities.secGroups).toHaveLength(32);
    // Each entry as the contract has it: every PF4GroupSec field, the missing ones empty.
    expect((securities.secGroups as any[])[5]).toEqual({ ...shape('PF4GroupSec', {}), ...sec(1005) });
    // Only the overrides in use: the first secMarginsTotal of the fixed array.
    expect(securities.secMargins).toEqual([override('EURUSD'), override('XAUUSD')]);
    expect(cache.get('groupSecurities', 'demo\\forex')).toMatchObject({ secMargins: [] });

    // An update brings new securities and a new count of overrides in use.
    cache.apply({
      event: 'groups',
      op: 'update',
      record: groupRecord('demo\\forex', {
        secMarginsTotal: 1,
        secGroups: Array.from({ length: 32 }, () => sec(7)),
      }),
    });
    expect(cache.get('groupSecurities', 'demo\\forex')).toMatchObject({ secMargins: [override('EURUSD')] });
    expect((cache.get('groupSecurities', 'demo\\forex')!.secGroups as any[]).every((s) => s.lotMax === 7)).toBe(true);
    // A group record without the arrays keeps the securities it had.
    cache.apply({ event: 'groups', op: 'update', record: { group: 'demo\\forex', company: 'Other' } });
    expect(cache.get('groups', 'demo\\forex')).toMatchObject({ company: 'Other' });
    expect(cache.get('groupSecurities', 'demo\\forex')).toMatchObject({ secMargins: [override('EURUSD')] });
    cache.apply({ event: 'groups', op: 'add', record: groupRecord('real\\new', { secMarginsTotal: 1 }) });
    expect(cache.get('groupSecurities', 'real\\new')).toMatchObject({ secMargins: [override('EURUSD')] });
    cache.apply({ event: 'groups', op: 'delete', record: { group: 'real\\new' } });
    expect(cache.get('groups', 'real\\new')).toBeUndefined();
    expect(cache.get('groupSecurities', 'real\\new')).toBeUndefined();
  });

  it('swaps group securities with the rest of a resync, and applies group events that arrive during it', () => {
    const cache = new PumpCache('PF4');
    cache.apply(resync('begin'));
    cache.apply(chunk('groups', [groupRecord('a'), groupRecord('b')]));
    cache.apply(resync('end'));
    cache.apply(resync('begin'));
    cache.apply(chunk('groups', [groupRecord('a', { secMarginsTotal: 1 })]));
    cache.apply({ event: 'groups', op: 'update', record: groupRecord('c') });
    expect(cache.get('groupSecurities', 'a')!.secMargins).toHaveLength(2);
    expect(cache.get('groupSecurities', 'c')).toBeUndefined();
    cache.apply(resync('end'));
    expect(cache.get('groupSecurities', 'a')!.secMargins).toHaveLength(1);
    expect(cache.get('groupSecurities', 'b')).toBeUndefined();
    expect(cache.get('groupSecurities', 'c')!.secMargins).toHaveLength(2);
  });
});

const level = (login: number, extra: Record<string, unknown> = {}) => ({
  login,
  group: 'demo',
  leverage: 100,
  balance: 1000,
  equity: 1000,
  volume: 10,
  margin: 50,
  free: 950,
  level: 2000,
  controllingType: 'Percent',
  levelType: 'Ok',
  ...extra,
});

describe('PF4 margins, online accounts, news and symbol groups', () => {
  function withSnapshot(): PumpCache {
    const cache = new PumpCache('PF4');
    cache.apply(resync('begin'));
    cache.apply(chunk('margin', [level(1), level(2)]));
    cache.apply(
      chunk('online', [
        { login: 1, group: 'demo' },
        { login: 3, group: 'real' },
      ]),
    );
    cache.apply(
      chunk('news', [
        { key: 1, time: '2026-01-01T00:00:00Z', topic: 'a' },
        { key: 2, time: '2026-01-01T01:00:00Z', topic: 'b' },
      ]),
    );
    cache.apply(
      chunk(
        'symbolGroups',
        Array.from({ length: 32 }, (_, pos) => ({ pos, name: pos < 3 ? `G${pos}` : '', description: null })),
      ),
    );
    cache.apply(resync('end'));
    return cache;
  }

  it('keeps one margin level per login from the resync kind margin, updates it and drops it on delete', () => {
    const cache = withSnapshot();
    expect(cache.sizes().margins).toBe(2);
    expect(Object.keys(cache.get('margins', 1)!)).toEqual(
      Object.keys((openapiComponents as any).PF4MarginLevel.properties),
    );
    expect(cache.get('margins', 1)).toMatchObject(level(1));
    cache.apply({ event: 'margin', op: 'update', record: level(1, { equity: 900, levelType: 'MarginCall' }) });
    cache.apply({ event: 'margin', op: 'update', record: level(5) });
    cache.apply({ event: 'margin', op: 'delete', record: { login: 2 } });
    expect(cache.get('margins', 1)).toMatchObject({ equity: 900, levelType: 'MarginCall' });
    expect(cache.get('margins', 5)).toMatchObject(level(5));
    expect(cache.get('margins', 2)).toBeUndefined();
    expect(
      cache
        .table('margins')!
        .page(undefined, undefined)
        .items.map((r) => r.login),
    ).toEqual([1, 5]);
  });

  it('follows the online list', () => {
    const cache = withSnapshot();
    cache.apply({ event: 'online', op: 'add', record: { login: 4, group: 'demo' } });
    cache.apply({ event: 'online', op: 'update', record: { login: 1, group: 'real' } });
    cache.apply({ event: 'online', op: 'delete', record: { login: 3 } });
    expect(cache.table('online')!.page(undefined, undefined).items).toEqual([
      { login: 1, group: 'real' },
      { login: 4, group: 'demo' },
    ]);
  });

  it('keeps news headers in key order, addressable by position', () => {
    const cache = withSnapshot();
    cache.apply({
      event: 'news',
      op: 'add',
      record: { key: 3, time: '2026-01-02T00:00:00Z', topic: 'c', body: 'not a header field' },
    });
    const news = cache.table('news')!;
    expect(news.size).toBe(3);
    expect(news.at(0)).toMatchObject({ key: 1, topic: 'a' });
    expect(news.at(2)).toEqual({ ...shape('PF4NewsTopic', {}), key: 3, time: '2026-01-02T00:00:00Z', topic: 'c' });
    expect(news.at(3)).toBeUndefined();
    expect(news.at(-1)).toBeUndefined();
  });

  it('keeps the 32 symbol group slots by position, each {pos, name, description}', () => {
    const cache = withSnapshot();
    const slots = cache.table('symbolGroups')!;
    expect(slots.size).toBe(32);
    expect(slots.get(1)).toEqual({ pos: 1, name: 'G1', description: null });
    cache.apply({
      event: 'symbolGroups',
      op: 'update',
      record: { pos: 4, name: 'Exotics', description: 'Exotic pairs' },
    });
    cache.apply({ event: 'symbolGroups', op: 'update', record: { pos: 5, name: 'Bonds', stray: 1 } });
    expect(slots.get(4)).toEqual({ pos: 4, name: 'Exotics', description: 'Exotic pairs' });
    expect(slots.get(5)).toEqual({ pos: 5, name: 'Bonds', description: null });
    expect(slots.page(undefined, undefined).items.map((r) => r.pos)).toEqual(Array.from({ length: 32 }, (_, i) => i));
  });

  it('replaces margins, online accounts, news and symbol groups with the next resync, events during it included', () => {
    const cache = withSnapshot();
    cache.apply(resync('begin'));
    cache.apply(chunk('margin', [level(2, { balance: 5 })]));
    cache.apply({ event: 'margin', op: 'update', record: level(9) });
    cache.apply({ event: 'online', op: 'add', record: { login: 8, group: 'demo' } });
    expect(cache.get('margins', 1)).toBeDefined();
    expect(cache.get('margins', 9)).toBeUndefined();
    cache.apply(resync('end'));
    expect(
      cache
        .table('margins')!
        .page(undefined, undefined)
        .items.map((r) => [r.login, r.balance]),
    ).toEqual([
      [2, 5],
      [9, 1000],
    ]);
    expect(cache.sizes()).toMatchObject({ online: 1, news: 0, symbolGroups: 0 });
  });
});

describe('bounded tables', () => {
  it('keeps the newest rows by arrival, a re-put counting as new', () => {
    const table = new KeyedTable<{ order: number; v?: number }>((r) => r.order, 3);
    for (const order of [5, 1, 9]) table.put({ order });
    expect(table.page(undefined, undefined).items.map((r) => r.order)).toEqual([1, 5, 9]);
    table.put({ order: 5, v: 2 }); // now the newest
    table.put({ order: 7 }); // drops 1, the oldest
    expect(table.get(1)).toBeUndefined();
    table.put({ order: 3 }); // drops 9
    expect(table.page(undefined, undefined).items.map((r) => r.order)).toEqual([3, 5, 7]);
    expect(table.size).toBe(3);
    expect(table.at(1)).toEqual({ order: 5, v: 2 });
  });
});

describe('PF4 recently closed trades', () => {
  const closedTrade = (order: number, state = 'ClosedNormal') =>
    trade(order, {
      tradeRecordState: state,
      closeTime: '2026-01-05T10:00:00Z',
      closePrice: 1.1,
      profit: 12.5,
    });

  it('keeps the final record a trades delete carries, and a closing update, apart from the open trades', () => {
    const cache = loaded();
    cache.apply({ event: 'trades', op: 'delete', record: closedTrade(10) });
    cache.apply({ event: 'trades', op: 'update', record: closedTrade(20, 'ClosedPart') });
    cache.apply({ event: 'trades', op: 'delete', record: closedTrade(30, 'Deleted') });
    expect(cache.sizes()).toMatchObject({ trades: 0, closedTrades: 3 });
    const row = cache.get('closedTrades', 10)!;
    expect(Object.keys(row)).toEqual(Object.keys((openapiComponents as any).PF4Trade.properties));
    expect(row).toMatchObject({
      order: 10,
      tradeRecordState: 'ClosedNormal',
      closeTime: '2026-01-05T10:00:00Z',
      closePrice: 1.1,
    });
    expect(cache.get('closedTrades', 20)).toMatchObject({ tradeRecordState: 'ClosedPart' });
    expect(cache.get('closedTrades', 30)).toMatchObject({ tradeRecordState: 'Deleted' });
    // The closed trades are not in the open trades' indexes.
    expect(cache.table('trades')!.lookup('login', 1)).toEqual([]);
  });

  it('learns nothing from a delete that carries the key alone, and forgets a close that was rolled back', () => {
    const cache = loaded();
    cache.apply({ event: 'trades', op: 'delete', record: { order: 10 } });
    expect(cache.get('trades', 10)).toBeUndefined();
    expect(cache.get('closedTrades', 10)).toBeUndefined();
    cache.apply({ event: 'trades', op: 'delete', record: closedTrade(20) });
    cache.apply({
      event: 'trades',
      op: 'add',
      record: trade(20, { tradeRecordState: 'OpenNormal', activationType: 'SLRollback' }),
    });
    expect(cache.get('closedTrades', 20)).toBeUndefined();
    expect(cache.get('trades', 20)).toMatchObject({ activationType: 'SLRollback' });
  });

  it('keeps the newest closedTradesLimit closed trades by arrival', () => {
    const cache = new PumpCache('PF4', { closedTradesLimit: 3 });
    for (const order of [7, 3, 9, 1]) cache.apply({ event: 'trades', op: 'delete', record: closedTrade(order) });
    expect(
      cache
        .table('closedTrades')!
        .page(undefined, undefined)
        .items.map((r) => r.order),
    ).toEqual([1, 3, 9]);
    cache.apply({ event: 'trades', op: 'delete', record: closedTrade(3, 'Deleted') }); // arrives again: the newest
    cache.apply({ event: 'trades', op: 'delete', record: closedTrade(5) }); // drops 9, the oldest now
    expect(
      cache
        .table('closedTrades')!
        .page(undefined, undefined)
        .items.map((r) => r.order),
    ).toEqual([1, 3, 5]);
    expect(cache.get('closedTrades', 3)).toMatchObject({ tradeRecordState: 'Deleted' });
    expect(new PumpCache('PF4').table('closedTrades')!.capacity).toBe(10_000);
  });

  it('lives across resyncs: closes during one show at once, and a trade the new snapshot has open leaves', () => {
    const cache = loaded();
    cache.apply({ event: 'trades', op: 'delete', record: closedTrade(10) });
    cache.apply({ event: 'trades', op: 'delete', record: closedTrade(20) });
    cache.apply(resync('begin'));
    cache.apply({ event: 'trades', op: 'delete', record: closedTrade(30) });
    expect(cache.get('closedTrades', 30)).toBeDefined();
    // The open trades are still the old snapshot's until the end.
    expect(cache.get('trades', 30)).toBeDefined();
    cache.apply(chunk('trades', [trade(20, { tradeRecordState: 'OpenNormal' }), trade(40)]));
    cache.apply(resync('end'));
    expect(
      cache
        .table('closedTrades')!
        .page(undefined, undefined)
        .items.map((r) => r.order),
    ).toEqual([10, 30]);
    expect(cache.get('trades', 20)).toBeDefined();
  });
});

describe('PF4 news bodies', () => {
  const topic = (key: number) => ({ key, time: '2026-01-01T00:00:00Z', topic: `t${key}` });

  it('keeps the body a newsBodies update brings, outside the snapshot, while its topic is listed', () => {
    const cache = new PumpCache('PF4');
    cache.apply(resync('begin'));
    cache.apply(chunk('news', [topic(1), topic(2)]));
    cache.apply(resync('end'));
    expect(cache.get('newsBodies', 1)).toBeUndefined();
    cache.apply({ event: 'newsBodies', op: 'update', record: { key: 1, body: 'Full text', stray: true } });
    cache.apply({ event: 'newsBodies', op: 'update', record: { key: 2, body: null } });
    expect(cache.get('newsBodies', 1)).toEqual({ key: 1, body: 'Full text' });
    expect(cache.get('newsBodies', 2)).toEqual({ key: 2, body: '' });
    // A resync keeps the bodies of the topics it still lists; one arriving during it shows at once.
    cache.apply(resync('begin'));
    cache.apply(chunk('news', [topic(1), topic(3)]));
    cache.apply({ event: 'newsBodies', op: 'update', record: { key: 3, body: 'Third' } });
    expect(cache.get('newsBodies', 3)).toEqual({ key: 3, body: 'Third' });
    cache.apply(resync('end'));
    expect(cache.table('newsBodies')!.page(undefined, undefined).items).toEqual([
      { key: 1, body: 'Full text' },
      { key: 3, body: 'Third' },
    ]);
  });
});

describe('PF4 symbol sessions', () => {
  const day = (dayOfWeek: number) => ({
    dayOfWeek,
    quoteOvernight: 0,
    tradeOvernight: 0,
    quote: [{ openHour: 0, openMinute: 0, closeHour: 24, closeMinute: 0 }],
    trade: [{ openHour: 1, openMinute: 30, closeHour: 22, closeMinute: 0 }],
  });
  const week = () => Array.from({ length: 7 }, (_, d) => day(d));

  it("keeps every configured symbol's 7 days as the contract has them, and drops a deleted symbol's", () => {
    const cache = new PumpCache('PF4');
    cache.apply(resync('begin'));
    cache.apply(
      chunk('symbolSessions', [
        { symbol: 'EURUSD', days: week() },
        { symbol: 'XAUUSD', days: [{ dayOfWeek: 0, stray: 1 }] },
      ]),
    );
    cache.apply(resync('end'));
    expect(cache.get('symbolSessions', 'EURUSD')).toEqual({ symbol: 'EURUSD', days: week() });
    expect(cache.get('symbolSessions', 'XAUUSD')).toEqual({
      symbol: 'XAUUSD',
      days: [{ ...shape('PF4SymbolDaySessions', {}), dayOfWeek: 0 }],
    });
    cache.apply({ event: 'symbolSessions', op: 'update', record: { symbol: 'XAUUSD', days: week() } });
    cache.apply({ event: 'symbolSessions', op: 'delete', record: { symbol: 'EURUSD' } });
    expect(cache.get('symbolSessions', 'EURUSD')).toBeUndefined();
    expect(cache.get('symbolSessions', 'XAUUSD')!.days as unknown[]).toHaveLength(7);
    // The symbols events (the active set) leave the sessions alone.
    cache.apply({ event: 'symbols', op: 'delete', record: { symbol: 'XAUUSD' } });
    expect(cache.get('symbolSessions', 'XAUUSD')).toBeDefined();
  });
});

describe('PF4 symbol summaries', () => {
  const T = (hhmmss: string, date = '2026-03-10') => `${date}T${hhmmss}.000Z`;
  const info = (symbol: string, extra: Record<string, unknown> = {}) => ({
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
  const tick = (symbol: string, bid: number, ask: number, time?: string) =>
    ({ event: 'ticks', op: 'update', record: { symbol, bid, ask, ...(time ? { time } : {}) } }) as ManagerEvent;

  function seeded(options: ConstructorParameters<typeof PumpCache>[1] = {}): PumpCache {
    const cache = new PumpCache('PF4', options);
    cache.apply(resync('begin'));
    cache.apply(
      chunk('symbols', [
        { symbol: 'EURUSD', digits: 5, type: 0, point: 0.00001 },
        { symbol: 'XAUUSD', digits: 2, type: 4, point: 0.01 },
      ]),
    );
    cache.apply(
      chunk('symbolInfo', [
        info('EURUSD'),
        info('XAUUSD', { digits: 2, type: 4, point: 0.01, bid: 2000, ask: 2000.3, high: 2010, low: 1990, spread: 30 }),
      ]),
    );
    cache.apply(resync('end'));
    return cache;
  }

  it('seeds each summary from the resync as the contract has it', () => {
    const cache = seeded();
    const row = cache.get('symbolInfo', 'EURUSD')!;
    expect(Object.keys(row)).toEqual(Object.keys((openapiComponents as any).PF4SymbolInfo.properties));
    expect(row).toEqual(info('EURUSD'));
  });

  it("moves prices, spread, time and direction with each tick, and the day's high and low with the bid", () => {
    const cache = seeded();
    cache.apply(tick('EURUSD', 1.1004, 1.1006, T('10:00:01')));
    expect(cache.get('symbolInfo', 'EURUSD')).toEqual(
      info('EURUSD', {
        bid: 1.1004,
        ask: 1.1006,
        spread: 20,
        direction: 'Up',
        lastTime: T('10:00:01'),
      }),
    );
    cache.apply(tick('EURUSD', 1.094, 1.0941, T('10:00:02')));
    expect(cache.get('symbolInfo', 'EURUSD')).toMatchObject({ direction: 'Down', low: 1.094, high: 1.105, spread: 10 });
    cache.apply(tick('EURUSD', 1.094, 1.0942, T('10:00:03')));
    expect(cache.get('symbolInfo', 'EURUSD')).toMatchObject({ direction: 'None', spread: 20 });
    cache.apply(tick('EURUSD', 1.2, 1.2001, T('10:00:04')));
    expect(cache.get('symbolInfo', 'EURUSD')).toMatchObject({ direction: 'Up', high: 1.2, low: 1.094 });
    // The ticks table keeps the last tick as before.
    expect(cache.get('ticks', 'EURUSD')).toMatchObject({ bid: 1.2, time: T('10:00:04') });
    // A tick of a symbol without a summary changes nothing else.
    cache.apply(tick('GBPUSD', 1.3, 1.3001, T('10:00:05')));
    expect(cache.get('symbolInfo', 'GBPUSD')).toBeUndefined();
  });

  it('restarts the high and low with the first tick of a new UTC day; no direction against a tick over a day old', () => {
    const cache = seeded();
    cache.apply(tick('EURUSD', 1.2, 1.2001, T('23:59:59')));
    expect(cache.get('symbolInfo', 'EURUSD')).toMatchObject({ high: 1.2, low: 1.095 });
    cache.apply(tick('EURUSD', 1.15, 1.1501, T('00:00:00', '2026-03-11')));
    expect(cache.get('symbolInfo', 'EURUSD')).toMatchObject({
      high: 1.15,
      low: 1.15,
      direction: 'Down',
      lastTime: T('00:00:00', '2026-03-11'),
    });
    cache.apply(tick('EURUSD', 1.16, 1.1601, T('08:00:00', '2026-03-11')));
    expect(cache.get('symbolInfo', 'EURUSD')).toMatchObject({ high: 1.16, low: 1.15, direction: 'Up' });
    cache.apply(tick('EURUSD', 1.17, 1.1701, T('08:00:01', '2026-03-12')));
    expect(cache.get('symbolInfo', 'EURUSD')).toMatchObject({ high: 1.17, low: 1.17, direction: 'None' });
  });

  it('dates a tick without a usable time by the injected clock, midnight included', () => {
    let now = Date.parse(T('23:59:58'));
    const cache = seeded({ clock: () => now });
    cache.apply(tick('EURUSD', 1.11, 1.1101));
    expect(cache.get('symbolInfo', 'EURUSD')).toMatchObject({
      high: 1.11,
      low: 1.095,
      lastTime: T('23:59:58'),
      direction: 'Up',
    });
    now = Date.parse(T('00:00:01', '2026-03-11'));
    cache.apply(tick('EURUSD', 1.105, 1.1051, 'not a time'));
    expect(cache.get('symbolInfo', 'EURUSD')).toMatchObject({
      high: 1.105,
      low: 1.105,
      lastTime: T('00:00:01', '2026-03-11'),
      direction: 'Down',
    });
    expect(cache.lastResyncAt).toBe(T('23:59:58'));
  });

  it("takes digits, type and point from symbol changes; spread and prices stay the quotes'", () => {
    const cache = seeded();
    cache.apply({
      event: 'symbols',
      op: 'update',
      record: { symbol: 'XAUUSD', digits: 3, type: 5, point: 0.01, spread: 99 },
    });
    expect(cache.get('symbolInfo', 'XAUUSD')).toMatchObject({ digits: 3, type: 5, spread: 30, bid: 2000 });
  });

  it('leaves with its symbol and comes back whole', () => {
    const cache = seeded();
    cache.apply({ event: 'symbols', op: 'delete', record: { symbol: 'XAUUSD' } });
    expect(cache.get('symbolInfo', 'XAUUSD')).toBeUndefined();
    cache.apply(tick('XAUUSD', 2001, 2001.3, T('10:00:09')));
    expect(cache.get('symbolInfo', 'XAUUSD')).toBeUndefined();
    cache.apply({ event: 'symbols', op: 'add', record: { symbol: 'XAUUSD', digits: 2, type: 4, point: 0.01 } });
    cache.apply({
      event: 'symbolInfo',
      op: 'update',
      record: info('XAUUSD', { point: 0.01, bid: 2001, ask: 2001.3, high: 2010, low: 1990 }),
    });
    expect(cache.get('symbolInfo', 'XAUUSD')).toMatchObject({ bid: 2001, high: 2010 });
  });

  it('answers the symbols updated since the previous take, sorted, and starts a new set', () => {
    const cache = seeded();
    // The first snapshot brought every summary.
    expect(cache.takeUpdatedSymbols()).toEqual(['EURUSD', 'XAUUSD']);
    expect(cache.takeUpdatedSymbols()).toEqual([]);
    cache.apply(tick('XAUUSD', 2001, 2001.3, T('10:00:01')));
    cache.apply(tick('EURUSD', 1.1001, 1.1002, T('10:00:01')));
    cache.apply(tick('XAUUSD', 2002, 2002.3, T('10:00:02')));
    cache.apply(tick('GBPUSD', 1.3, 1.3001, T('10:00:02')));
    expect(cache.takeUpdatedSymbols()).toEqual(['EURUSD', 'XAUUSD']);
    // A symbol change that leaves the summary as it was is no update; one that changes it is.
    cache.apply({
      event: 'symbols',
      op: 'update',
      record: { symbol: 'EURUSD', digits: 5, type: 0, point: 0.00001, description: 'x' },
    });
    expect(cache.takeUpdatedSymbols()).toEqual([]);
    cache.apply({ event: 'symbols', op: 'update', record: { symbol: 'EURUSD', digits: 4, type: 0, point: 0.00001 } });
    cache.apply({ event: 'symbolInfo', op: 'update', record: info('AUDUSD') });
    cache.apply(tick('XAUUSD', 2003, 2003.3, T('10:00:03')));
    cache.apply({ event: 'symbols', op: 'delete', record: { symbol: 'XAUUSD' } });
    expect(cache.takeUpdatedSymbols()).toEqual(['AUDUSD', 'EURUSD']);
  });

  it('swaps summaries with the resync: changed and new ones count as updated, events during it are applied to the new snapshot', () => {
    const cache = seeded();
    cache.takeUpdatedSymbols();
    cache.apply(tick('XAUUSD', 2001, 2001.3, T('10:00:01')));
    cache.apply(resync('begin'));
    cache.apply(
      chunk('symbolInfo', [
        info('EURUSD'),
        info('USDJPY', { point: 0.001, bid: 150, ask: 150.02, high: 151, low: 149 }),
      ]),
    );
    cache.apply(tick('USDJPY', 150.5, 150.52, T('10:00:02')));
    // Until the end the old snapshot answers; nothing of the new one counts yet.
    expect(cache.get('symbolInfo', 'USDJPY')).toBeUndefined();
    expect(cache.get('symbolInfo', 'XAUUSD')).toMatchObject({ bid: 2001 });
    cache.apply(resync('end'));
    expect(cache.get('symbolInfo', 'XAUUSD')).toBeUndefined();
    expect(cache.get('symbolInfo', 'USDJPY')).toMatchObject({ bid: 150.5, high: 151, direction: 'Up', spread: 20 });
    // EURUSD came back unchanged; XAUUSD left before anyone took it.
    expect(cache.takeUpdatedSymbols()).toEqual(['USDJPY']);
  });
});
