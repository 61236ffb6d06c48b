/**
 * PF5 reads of positions, orders, accounts, groups and last ticks: which records a login list, ticket list or symbol
 * list selects (each record once, tickets in the order asked, everything else in ticket order), the paged forms with
 * their `after` cursor and `hasMore`, the values sent (prices and profit from the current quote), and the errors that
 * name the bad argument.
 */
import { describe, expect, it } from 'vitest';
import * as records from '../../shared/records/contract.js';
import { PF5_RESULT as R } from '../../shared/resultCodes.js';
import { desk, GROUP_OF, T0 } from '../../test/support/sim/deskFixture.js';

const positionKeys = (list: Array<{ position: number }>) => list.map((p) => p.position);
const orderKeys = (list: Array<{ order: number }>) => list.map((o) => o.order);

/** Walks a paged command to the end; answers the pages' keys and hasMore flags. */
function walk(
  call: (args: Record<string, unknown>) => { items: Array<Record<string, number>>; hasMore: boolean },
  key: string,
  args: Record<string, unknown>,
) {
  const pages: Array<{ keys: number[]; hasMore: boolean }> = [];
  let after: number | undefined;
  for (let guard = 0; guard < 50; guard++) {
    const page = call({ ...args, ...(after === undefined ? {} : { after }) });
    pages.push({ keys: page.items.map((r) => r[key]), hasMore: page.hasMore });
    if (!page.hasMore) return pages;
    after = page.items[page.items.length - 1][key];
  }
  throw new Error('paging never ended');
}

describe('positions', () => {
  it('selects the open positions of the logins asked for, each once, in ticket order', () => {
    const { h, login, position } = desk();
    const found = h.call('PositionGetByLogins', { logins: [login.pro, login.retail, login.retail, 999_999] });
    expect(positionKeys(found)).toEqual([position.retailEur, position.proEur, position.retailXau]);
    expect(found.map((p: { login: number }) => p.login)).toEqual([login.retail, login.pro, login.retail]);
    for (const p of found) records.PF5Position.parse(p);
    expect(h.call('PositionGetByLogins', { logins: [999_999] })).toEqual([]);
    expect(h.call('PositionGetByLogins', { logins: [] })).toEqual([]);
  });

  it('selects by group mask and symbol list', () => {
    const { h, position } = desk();
    const bySymbols = (mask: string, symbol: string) => positionKeys(h.call('PositionGetBySymbol', { mask, symbol }));
    expect(bySymbols('*', 'EURUSD')).toEqual([position.retailEur, position.vipEur, position.proEur]);
    expect(bySymbols('*', 'EURUSD,XAUUSD')).toEqual([
      position.retailEur,
      position.vipEur,
      position.realXau,
      position.proEur,
      position.retailXau,
    ]);
    expect(bySymbols('*', ' GBPUSD , XAUUSD ')).toEqual([position.nettingGbp, position.realXau, position.retailXau]);
    expect(bySymbols('demo\\*,!demo\\vip', 'EURUSD,GBPUSD')).toEqual([position.retailEur, position.nettingGbp]);
    expect(bySymbols('real\\*', 'XAUUSD')).toEqual([position.realXau]);
    expect(bySymbols('*', 'EURUSD,')).toEqual([position.retailEur, position.vipEur, position.proEur]);
    expect(bySymbols('*', 'EUR')).toEqual([]);
    expect(bySymbols('*', 'NOPE')).toEqual([]);
    expect(h.fails('PositionGetBySymbol', { mask: '*', symbol: ' , ' })).toEqual({
      code: R.ErrParams,
      message: 'symbol must name at least one symbol',
    });
    expect(h.fails('PositionGetBySymbol', { mask: '*' })).toEqual({
      code: R.ErrParams,
      message: 'symbol must be a non-empty string',
    });
  });

  it('sends the current price and floating profit with every position', () => {
    const { h, position } = desk();
    h.world.feed.inject('EURUSD', 1.102, 1.1021, T0 + 3_600_000);
    const [bought, sold] = h.call('PositionGetByTickets', { tickets: [position.retailEur, position.proEur] });
    // One lot bought at the ask 1.1001 closes on the bid 1.102; one lot sold at the bid 1.1 closes on the ask 1.1021.
    expect(bought).toMatchObject({
      action: 'Buy',
      symbol: 'EURUSD',
      volume: 10_000,
      priceOpen: 1.1001,
      priceCurrent: 1.102,
      profit: 190,
    });
    expect(sold).toMatchObject({
      action: 'Sell',
      symbol: 'EURUSD',
      volume: 10_000,
      priceOpen: 1.1,
      priceCurrent: 1.1021,
      profit: -210,
    });
    const fromGroup = h.call('PositionRequestByGroup', { mask: 'real\\pro' });
    expect(fromGroup).toEqual([sold]);
    expect(h.call('PositionGetBySymbol', { mask: 'demo\\retail', symbol: 'EURUSD' })).toEqual([bought]);
    expect(h.call('PositionByGroup', { mask: 'real\\pro' }).items).toEqual([sold]);
  });

  it("pages a group's positions by ticket, counting only the group's in hasMore", () => {
    const { h, position } = desk();
    const pages = walk((args) => h.call('PositionByGroup', args), 'position', { mask: '*', limit: 2 });
    expect(pages).toEqual([
      { keys: [position.retailEur, position.nettingGbp], hasMore: true },
      { keys: [position.vipEur, position.realXau], hasMore: true },
      { keys: [position.proEur, position.retailXau], hasMore: false },
    ]);
    expect(walk((args) => h.call('PositionByGroup', args), 'position', { mask: 'real\\*', limit: 1 })).toEqual([
      { keys: [position.realXau], hasMore: true },
      { keys: [position.proEur], hasMore: false },
    ]);
    // Positions of other groups follow the vip one; they do not make a next page.
    expect(h.call('PositionByGroup', { mask: 'demo\\vip', limit: 1 })).toMatchObject({ hasMore: false });
    expect(positionKeys(h.call('PositionByGroup', { mask: 'demo\\retail', after: position.retailEur }).items)).toEqual([
      position.retailXau,
    ]);
    expect(h.call('PositionByGroup', { mask: '*', after: position.retailXau })).toEqual({ items: [], hasMore: false });
    expect(h.fails('PositionByGroup', { mask: '*', limit: 0 })).toEqual({
      code: R.ErrParams,
      message: 'limit must be between 1 and 1000000',
    });
    expect(h.fails('PositionByGroup', { mask: '*', after: -1 }).message).toMatch(/^after must be between 0 and /);
  });
});

describe('pending orders', () => {
  it('selects by logins in ticket order, each once', () => {
    const { h, login, order } = desk();
    const found = h.call('OrderGetByLogins', { logins: [login.pro, login.netting, login.netting, 999_999] });
    expect(orderKeys(found)).toEqual([order.nettingEur, order.proXau]);
    for (const o of found) records.PF5Order.parse(o);
    expect(h.call('OrderGetByLogins', { logins: [] })).toEqual([]);
  });

  it('selects open orders by ticket in the order asked, skipping unknown and finished ones', () => {
    const { h, order, filled } = desk();
    for (const cmd of ['OrderGetByTickets', 'OrderRequestByTickets']) {
      const found = h.call(cmd, { tickets: [order.proXau, order.retailEur, order.proXau, filled[0], 1] });
      expect(orderKeys(found), cmd).toEqual([order.proXau, order.retailEur]);
      expect(found[0], cmd).toMatchObject({
        type: 'SellStop',
        symbol: 'XAUUSD',
        priceOrder: 1990,
        state: 'Placed',
        volumeInitial: 10_000,
        volumeCurrent: 10_000,
      });
      expect(h.call(cmd, { tickets: [] }), cmd).toEqual([]);
      expect(h.fails(cmd, { tickets: order.proXau }), cmd).toEqual({
        code: R.ErrParams,
        message: 'tickets must be an array of integers',
      });
      expect(h.fails(cmd, { tickets: [0] }).message, cmd).toMatch(/^tickets must contain integers between 1 and /);
      expect(h.fails(cmd, { tickets: [1.5] }).code, cmd).toBe(R.ErrParams);
    }
  });

  it('sends the price a pending order would fill at now: the ask for buys, the bid for sells', () => {
    const { h, order } = desk();
    h.world.feed.inject('EURUSD', 1.1003, 1.1004, T0 + 3_600_000);
    const [buy, sell] = h.call('OrderGetByTickets', { tickets: [order.retailEur, order.nettingEur] });
    expect(buy).toMatchObject({ type: 'BuyLimit', priceOrder: 1.09, priceCurrent: 1.1004 });
    expect(sell).toMatchObject({ type: 'SellLimit', priceOrder: 1.11, priceCurrent: 1.1003 });
  });

  it('selects by group mask and symbol list', () => {
    const { h, order } = desk();
    for (const cmd of ['OrderGetBySymbol', 'OrderRequestByGroupSymbol']) {
      const bySymbols = (mask: string, symbol: string) => orderKeys(h.call(cmd, { mask, symbol }));
      expect(bySymbols('*', 'EURUSD'), cmd).toEqual([order.retailEur, order.nettingEur, order.realEur]);
      expect(bySymbols('*', 'GBPUSD,XAUUSD'), cmd).toEqual([order.vipGbp, order.proXau]);
      expect(bySymbols('demo\\*,!demo\\netting', 'EURUSD,GBPUSD'), cmd).toEqual([order.retailEur, order.vipGbp]);
      expect(bySymbols('real\\*', 'EURUSD , XAUUSD,'), cmd).toEqual([order.realEur, order.proXau]);
      expect(bySymbols('*', 'USD'), cmd).toEqual([]);
      expect(h.fails(cmd, { mask: '*', symbol: ',' }), cmd).toEqual({
        code: R.ErrParams,
        message: 'symbol must name at least one symbol',
      });
    }
  });

  it("pages every open order and a group's open orders by ticket", () => {
    const { h, order } = desk();
    expect(walk((args) => h.call('OrdersRequest', args), 'order', { limit: 2 })).toEqual([
      { keys: [order.retailEur, order.nettingEur], hasMore: true },
      { keys: [order.vipGbp, order.realEur], hasMore: true },
      { keys: [order.proXau], hasMore: false },
    ]);
    const all = h.call('OrdersRequest', {});
    expect(all.hasMore).toBe(false);
    expect(orderKeys(all.items)).toEqual(Object.values(order));
    expect(all.items[0].priceCurrent).toBe(1.1001);
    expect(walk((args) => h.call('OrderByGroup', args), 'order', { mask: 'demo\\*', limit: 2 })).toEqual([
      { keys: [order.retailEur, order.nettingEur], hasMore: true },
      { keys: [order.vipGbp], hasMore: false },
    ]);
    expect(h.call('OrderByGroup', { mask: 'real\\retail', limit: 1 })).toMatchObject({ hasMore: false });
    expect(h.fails('OrdersRequest', { limit: 'ten' })).toEqual({
      code: R.ErrParams,
      message: 'limit must be an integer',
    });
  });
});

describe('accounts', () => {
  it('selects accounts by login in the order asked, each once, skipping unknown ones', () => {
    const { h, login } = desk();
    const found = h.call('UserGetByLogins', {
      logins: [login.pro, login.retail, login.pro, 999_999, login.retail, login.vip],
    });
    expect(found.map((u: { login: number }) => u.login)).toEqual([login.pro, login.retail, login.vip]);
    expect(found.map((u: { group: string }) => u.group)).toEqual([GROUP_OF.pro, GROUP_OF.retail, GROUP_OF.vip]);
    for (const u of found) records.PF5User.parse(u);
    expect(found[0]).toEqual(h.call('UserGet', { login: login.pro }));
    expect(h.call('UserGetByLogins', { logins: [login.vip, login.vip, login.vip] })).toEqual([
      h.call('UserGet', { login: login.vip }),
    ]);
    expect(h.call('UserGetByLogins', { logins: [] })).toEqual([]);
    expect(h.fails('UserGetByLogins', { logins: login.vip })).toEqual({
      code: R.ErrParams,
      message: 'logins must be an array of integers',
    });
  });

  it('answers an account by login from UserGet as from UserRequest', () => {
    const { h, login } = desk();
    const user = h.call('UserGet', { login: login.vip });
    records.PF5User.parse(user);
    expect(user).toMatchObject({
      login: login.vip,
      group: GROUP_OF.vip,
      firstName: 'vip',
      leverage: 100,
      balance: 100_000,
    });
    expect(user).toEqual(h.call('UserRequest', { login: login.vip }));
    expect(h.fails('UserGet', { login: 999_999 })).toEqual({ code: R.ErrNotfound, message: 'login 999999 not found' });
    expect(h.fails('UserGet', { login: 0 }).message).toMatch(/^login must be between 1 and /);
    expect(h.fails('UserGet', {})).toEqual({ code: R.ErrParams, message: 'login must be an integer' });
  });
});

describe('groups', () => {
  it('answers one group by its full name, cached or requested, with later changes', () => {
    const { h } = desk();
    for (const cmd of ['GroupGet', 'GroupRequest']) {
      const netting = h.call(cmd, { group: 'demo\\netting' });
      records.PF5ConGroup.parse(netting);
      expect(netting, cmd).toMatchObject({
        group: 'demo\\netting',
        marginMode: 'Retail',
        demoLeverage: 100,
        currency: 'USD',
      });
      expect(h.call(cmd, { group: 'real\\pro' }), cmd).toMatchObject({
        group: 'real\\pro',
        marginMode: 'RetailHedged',
        demoLeverage: 30,
      });
      expect(h.fails(cmd, { group: 'demo' }), cmd).toEqual({ code: R.ErrNotfound, message: 'group demo not found' });
      expect(h.fails(cmd, { group: 'demo\\*' }), cmd).toEqual({
        code: R.ErrNotfound,
        message: 'group demo\\* not found',
      });
      expect(h.fails(cmd, {}), cmd).toEqual({ code: R.ErrParams, message: 'group must be a non-empty string' });
      expect(h.fails(cmd, { group: 'g'.repeat(65) }), cmd).toEqual({
        code: R.ErrParams,
        message: 'group must be at most 64 characters',
      });
    }
    h.call('GroupRecord', { group: 'demo\\netting', patch: { marginCall: 70 } });
    expect(h.call('GroupGet', { group: 'demo\\netting' }).marginCall).toBe(70);
    expect(h.call('GroupRequest', { group: 'demo\\netting' }).marginCall).toBe(70);
    expect(h.call('GroupRequestArray', { mask: 'demo\\netting' })).toEqual([
      h.call('GroupGet', { group: 'demo\\netting' }),
    ]);
  });
});

describe('last ticks', () => {
  it('answers the last quote of one symbol, or of every symbol', () => {
    const { h } = desk();
    expect(h.call('TickLast', { symbol: 'EURUSD' })).toEqual({
      symbol: 'EURUSD',
      time: new Date(T0).toISOString(),
      bid: 1.1,
      ask: 1.1001,
    });
    h.world.feed.inject('EURUSD', 1.1011, 1.1013, T0 + 5_000);
    expect(h.call('TickLast', { symbol: 'EURUSD' })).toEqual({
      symbol: 'EURUSD',
      time: new Date(T0 + 5_000).toISOString(),
      bid: 1.1011,
      ask: 1.1013,
    });
    const all = h.call('TickLast', {});
    const symbols = h.call('SymbolsRequest', {}).map((s: { symbol: string }) => s.symbol);
    expect(all.map((t: { symbol: string }) => t.symbol).sort()).toEqual([...symbols].sort());
    for (const tick of all) {
      expect(tick).toEqual(h.call('TickLast', { symbol: tick.symbol }));
      expect(tick.ask).toBeGreaterThan(tick.bid);
    }
    expect(all.find((t: { symbol: string }) => t.symbol === 'GBPUSD')).toMatchObject({ bid: 1.25, ask: 1.2502 });
    expect(h.fails('TickLast', { symbol: 'NOPE' })).toEqual({ code: R.ErrNotfound, message: 'symbol NOPE not found' });
    expect(h.fails('TickLast', { symbol: 'S'.repeat(33) })).toEqual({
      code: R.ErrParams,
      message: 'symbol must be at most 32 characters',
    });
  });
});
