/**
 * The trade transactions on a small world driven by manual ticks and a fixed clock: opening and closing, money
 * moving between trades and balances, modifying pending orders, closes of all or part of a trade, manual activation and
 * balance and credit entries.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PF4_RESULT as R } from '../../../shared/resultCodes.js';
import * as records from '../../../shared/records/contract.js';
import { at, MINUTE, pf4Desk, pf4Trader, T0 } from '../../../test/support/sim/pf4TradingDesk.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('opening and closing', () => {
  it('opens a market buy at the ask, holds its margin and realises the profit into the balance on close', () => {
    const { h, login, open, tick } = pf4Trader();
    const trade = open({});
    records.PF4Trade.parse(trade);
    expect(trade).toMatchObject({
      tradeCommand: 'Buy',
      openPrice: 1.1001,
      volume: 100,
      tradeRecordState: 'OpenNormal',
    });
    const level = h.call('MarginLevelRequest', { login });
    records.PF4MarginLevel.parse(level);
    // 1 lot of EURUSD at 1:100 is 1000 EUR, valued at the EURUSD mid.
    expect(level).toMatchObject({ balance: 10_000, margin: 1100.05, levelType: 'Ok' });
    tick(1.1011, 1.1012);
    const closed = h.call('TradeTransaction', { tradeTransactionType: 'BrOrderClose', order: trade.order });
    expect(closed).toMatchObject({ tradeRecordState: 'ClosedNormal', closePrice: 1.1011, profit: 100 });
    expect(h.call('UserRecordRequest', { login }).balance).toBe(10_100);
    const history = h.call('TradesUserHistory', { login });
    expect(history.map((r: { tradeCommand: string }) => r.tradeCommand)).toEqual(['Balance', 'Buy']);
    expect(h.call('AdmBalanceCheck', { login })).toEqual({ login, diff: 0 });
    expect(h.events.some((e) => e.kind === 'trades' && e.op === 'delete' && e.record.order === trade.order)).toBe(true);
    expect(h.events.filter((e) => e.kind === 'margin' && e.record.login === login).length).toBeGreaterThan(1);
  });

  it('closes part of a trade: the closed part keeps the ticket, the rest gets a new one', () => {
    const { h, open } = pf4Trader();
    const trade = open({ volume: 300 });
    const part = h.call('TradeTransaction', { tradeTransactionType: 'BrOrderClose', order: trade.order, volume: 100 });
    expect(part).toMatchObject({ order: trade.order, volume: 100, tradeRecordState: 'ClosedPart' });
    const rest = h.call('TradeRecordRequest', { order: trade.order + 1 });
    expect(rest).toMatchObject({ volume: 200, comment: `from #${trade.order}`, tradeCommand: 'Buy' });
    expect(h.fails('TradeRecordRequest', { order: trade.order }).code).toBe(R.InvalidData);
  });
});

describe('modifying a pending order', () => {
  it('moves its price, checked against the market like a new order, and keeps it for a price of 0', () => {
    const { account, open, tx, txFails } = pf4Desk();
    const order = open(account(), { tradeCommand: 'BuyLimit', price: 1.099, sl: 1.098 });
    expect(tx('BrOrderModify', { order: order.order, price: 1.0985 })).toMatchObject({ openPrice: 1.0985, sl: 1.098 });
    expect(tx('BrOrderModify', { order: order.order, price: 0, tp: 1.1 })).toMatchObject({
      openPrice: 1.0985,
      tp: 1.1,
    });
    expect(txFails('BrOrderModify', { order: order.order, price: 1.1005 })).toEqual({
      code: R.TradeBadPrices,
      message: 'price 1.1005 is on the wrong side of the market for BuyLimit',
    });
  });

  it("keeps a market trade's open price whatever price the modification names", () => {
    const { account, open, tx } = pf4Desk();
    const trade = open(account());
    expect(tx('BrOrderModify', { order: trade.order, price: 1.05, sl: 1.09 })).toMatchObject({
      openPrice: 1.1001,
      sl: 1.09,
    });
  });

  it('sets an expiration at least 10 minutes ahead, and removes it with a time not after 1970', () => {
    const { account, open, tx, txFails, h } = pf4Desk();
    const order = open(account(), { tradeCommand: 'SellLimit', price: 1.102 });
    const denied = { code: R.TradeExpirationDenied, message: 'expiration must be at least 10 minutes ahead' };
    expect(txFails('BrOrderModify', { order: order.order, expiration: at(T0 + 10 * MINUTE - 1000) })).toEqual(denied);
    expect(txFails('BrOrderModify', { order: order.order, expiration: at(T0 + 5 * MINUTE) })).toEqual(denied);
    expect(tx('BrOrderModify', { order: order.order, expiration: at(T0 + 10 * MINUTE) }).expiration).toBe(
      at(T0 + 10 * MINUTE),
    );
    expect(tx('BrOrderModify', { order: order.order, expiration: at(T0 + 90 * 24 * 60 * MINUTE) }).expiration).toBe(
      at(T0 + 90 * 24 * 60 * MINUTE),
    );
    // A modification that names no expiration keeps it.
    expect(tx('BrOrderModify', { order: order.order, sl: 1.103 }).expiration).toBe(at(T0 + 90 * 24 * 60 * MINUTE));
    const cleared = tx('BrOrderModify', { order: order.order, expiration: '1970-01-01T00:00:00Z' });
    expect('expiration' in cleared).toBe(false);
    tx('BrOrderModify', { order: order.order, expiration: at(T0 + 20 * MINUTE) });
    const before1970 = tx('BrOrderModify', { order: order.order, expiration: '1969-12-31T23:59:59Z' });
    expect('expiration' in before1970).toBe(false);
    expect('expiration' in h.call('TradeRecordRequest', { order: order.order })).toBe(false);
  });

  it('gives a market trade no expiration', () => {
    const { account, open, tx } = pf4Desk();
    const trade = open(account());
    expect('expiration' in tx('BrOrderModify', { order: trade.order, expiration: at(T0 + 5 * MINUTE) })).toBe(false);
  });
});

describe('closing', () => {
  it('refuses to close a pending order', () => {
    const { account, open, txFails } = pf4Desk();
    const order = open(account(), { tradeCommand: 'BuyStop', price: 1.102 });
    expect(txFails('BrOrderClose', { order: order.order })).toEqual({
      code: R.TradeBadPrices,
      message: `order ${order.order} is pending: delete it instead`,
    });
  });

  it('closes between 1 and the whole volume: all of it closes normally, a part leaves a remainder', () => {
    const { h, account, open, tx, txFails, openOrders } = pf4Desk();
    const login = account();
    const trade = open(login);
    const bounds = { code: R.TradeBadVolume, message: 'volume must be between 1 and 100' };
    expect(txFails('BrOrderClose', { order: trade.order, volume: 101 })).toEqual(bounds);
    expect(txFails('BrOrderClose', { order: trade.order, volume: -5 })).toEqual(bounds);
    // The transaction reads a volume of 0 as the whole trade; the engine itself refuses 0 and fractions.
    expect(() => h.world.engine.close(trade.order, { volume: 0 })).toThrow('volume must be between 1 and 100');
    expect(() => h.world.engine.close(trade.order, { volume: 50.5 })).toThrow('volume must be between 1 and 100');
    expect(tx('BrOrderClose', { order: trade.order, volume: 1 })).toMatchObject({
      tradeRecordState: 'ClosedPart',
      volume: 1,
    });
    const [rest] = openOrders(login);
    expect(tx('BrOrderClose', { order: rest, volume: 99 })).toMatchObject({
      order: rest,
      tradeRecordState: 'ClosedNormal',
      volume: 99,
    });
    expect(openOrders(login)).toEqual([]);
  });
});

describe('activating a pending order', () => {
  it('activates at the market price on request and charges the commission', () => {
    const { account, open, tx, margin } = pf4Desk();
    const login = account(10_000, 'real\\standard');
    const order = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    expect(margin(login).margin).toBe(0);
    vi.setSystemTime(T0 + MINUTE);
    const active = tx('BrOrderActivate', { order: order.order });
    expect(active).toMatchObject({
      order: order.order,
      tradeCommand: 'Buy',
      openPrice: 1.1001,
      commission: -3.5,
      openTime: at(T0 + MINUTE),
      timeStamp: at(T0 + MINUTE),
    });
    expect('expiration' in active).toBe(false);
    expect(margin(login).margin).toBe(1100.05);
  });

  it('activates a sell order at the bid and holds nothing for a rollback', () => {
    const { h, account, open, tx } = pf4Desk();
    const order = open(account(), { tradeCommand: 'SellStop', price: 1.099 });
    expect(tx('BrOrderActivate', { order: order.order })).toMatchObject({ tradeCommand: 'Sell', openPrice: 1.1 });
    // A dealer's own activation is not an automatic one: there is nothing to roll back.
    expect(h.call('TradeClearRollback', { order: order.order })).toBe(false);
  });

  it('refuses to activate a market trade', () => {
    const { account, open, txFails } = pf4Desk();
    const trade = open(account());
    expect(txFails('BrOrderActivate', { order: trade.order })).toEqual({
      code: R.TradeBadPrices,
      message: `order ${trade.order} is not pending`,
    });
  });

  it('leaves the order pending when the account cannot hold the margin', () => {
    const { h, account, open, txFails } = pf4Desk();
    const login = account(500);
    const order = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    expect(txFails('BrOrderActivate', { order: order.order })).toEqual({
      code: R.TradeNoMoney,
      message: `not enough money to activate order ${order.order}`,
    });
    expect(h.call('TradeRecordRequest', { order: order.order })).toMatchObject({
      tradeCommand: 'BuyLimit',
      openPrice: 1.099,
    });
  });
});

describe('balance and credit entries', () => {
  it('refuses an amount of 0', () => {
    const { account, txFails } = pf4Desk();
    expect(txFails('BrBalance', { tradeCommand: 'Balance', orderBy: account(), price: 0 })).toEqual({
      code: R.InvalidData,
      message: 'price (the amount) must be a non-zero number',
    });
  });

  it('names the unknown account', () => {
    const { txFails } = pf4Desk();
    expect(txFails('BrBalance', { tradeCommand: 'Credit', orderBy: 42, price: 10 })).toEqual({
      code: R.InvalidData,
      message: 'orderBy: login 42 not found',
    });
  });

  it('writes a closed dealer entry without symbol, volume or prices', () => {
    const { account, deposit, history } = pf4Desk();
    const login = account(0);
    const entry = deposit(login, 250.5);
    expect(entry).toEqual({
      order: entry.order,
      login,
      symbol: '',
      digits: 0,
      tradeCommand: 'Balance',
      volume: 0,
      volumeLots: 0,
      openPrice: 0,
      sl: 0,
      tp: 0,
      openTime: at(T0),
      closeTime: at(T0),
      closePrice: 0,
      commission: 0,
      commissionAgent: 0,
      storage: 0,
      profit: 250.5,
      taxes: 0,
      magic: 0,
      comment: 'Deposit',
      tradeRecordReason: 'Dealer',
      timeStamp: at(T0),
      tradeRecordState: 'ClosedNormal',
      activationType: 'None',
      marginRate: 1,
    });
    expect(history(login)).toEqual([entry]);
  });

  it('withdraws up to the free margin and no further', () => {
    const { h, account, open, deposit, txFails, margin } = pf4Desk();
    const login = account(2000);
    open(login);
    // Equity 1990 (the trade is down the spread, 10 USD) less 1100.05 of margin.
    expect(margin(login).free).toBe(889.95);
    expect(txFails('BrBalance', { tradeCommand: 'Balance', orderBy: login, price: -889.96 })).toEqual({
      code: R.TradeNoMoney,
      message: 'free margin 889.95 does not cover 889.96',
    });
    deposit(login, -889.95);
    expect(h.call('UserRecordRequest', { login }).balance).toBe(1110.05);
    expect(margin(login).free).toBe(0);
  });

  it('takes a deposit into an account whose free margin is negative', () => {
    const { h, account, open, deposit, tick, margin } = pf4Desk();
    const login = account(1500);
    open(login);
    tick(1.093, 1.0931); // 710 points under the open price: equity 790 on 1100.05 of margin, a margin call, no stop-out
    expect(margin(login)).toMatchObject({ equity: 790, free: -310.05, levelType: 'MarginCall' });
    deposit(login, 100);
    expect(h.call('UserRecordRequest', { login }).balance).toBe(1600);
    expect(margin(login)).toMatchObject({ equity: 890, free: -210.05 });
  });

  it('takes credit back only as far as the account has it', () => {
    const { h, account, deposit, txFails } = pf4Desk();
    const login = account();
    deposit(login, 100, 'Credit');
    expect(txFails('BrBalance', { tradeCommand: 'Credit', orderBy: login, price: -150 })).toEqual({
      code: R.TradeNoMoney,
      message: 'credit 100 does not cover 150',
    });
    deposit(login, -40, 'Credit');
    deposit(login, -60, 'Credit');
    expect(h.call('UserRecordRequest', { login })).toMatchObject({ balance: 10_000, credit: 0 });
  });

  it('lets a withdrawal exceed the credit when the free margin covers it', () => {
    const { h, account, deposit } = pf4Desk();
    const login = account();
    deposit(login, 100, 'Credit');
    deposit(login, -150);
    expect(h.call('UserRecordRequest', { login })).toMatchObject({ balance: 9850, credit: 100 });
  });

  it('names entries Deposit, Withdrawal or Credit unless given a comment', () => {
    const { account, deposit, history } = pf4Desk();
    const login = account();
    deposit(login, -100);
    deposit(login, 50, 'Credit');
    deposit(login, 25, 'Balance', 'bonus');
    expect(history(login).map((r) => [r.tradeCommand, r.profit, r.comment])).toEqual([
      ['Balance', 10_000, 'Deposit'],
      ['Balance', -100, 'Withdrawal'],
      ['Credit', 50, 'Credit'],
      ['Balance', 25, 'bonus'],
    ]);
  });
});

describe('closing part of a trade', () => {
  it('splits commission, swaps and margin in proportion between the closed part and the remainder', () => {
    const { h, account, open, tx, tick, margin, since } = pf4Desk();
    const login = account(10_000, 'real\\standard');
    const trade = open(login, { volume: 300 });
    h.world.rollover(Date.UTC(2026, 5, 4));
    expect(h.call('TradeRecordRequest', { order: trade.order })).toMatchObject({ commission: -10.5, storage: -7.5 });
    expect(margin(login).margin).toBe(3300.15);
    tick(1.12, 1.1201); // the euro is dearer: a margin taken now would be larger
    vi.setSystemTime(T0 + MINUTE);
    const after = since();
    const part = tx('BrOrderClose', { order: trade.order, volume: 100 });
    const [rest] = h.call('TradesUserRequest', { login });
    expect(part).toMatchObject({
      order: trade.order,
      volume: 100,
      commission: -3.5,
      storage: -2.5,
      profit: 1990,
      closePrice: 1.12,
      comment: `to #${rest.order}`,
      tradeRecordState: 'ClosedPart',
      activationType: 'None',
      closeTime: at(T0 + MINUTE),
    });
    expect(rest).toMatchObject({
      volume: 200,
      commission: -7,
      storage: -5,
      comment: `from #${trade.order}`,
      timeStamp: at(T0 + MINUTE),
      openPrice: 1.1001,
      openTime: at(T0),
    });
    expect(h.call('UserRecordRequest', { login }).balance).toBe(10_000 + 1990 - 3.5 - 2.5);
    expect(
      after()
        .filter((e) => e.kind === 'trades')
        .map((e) => [e.op, e.record.order]),
    ).toEqual([
      ['delete', trade.order],
      ['add', rest.order],
    ]);
    // The remainder keeps two thirds of what the trade held.
    expect(margin(login).margin).toBe(2200.1);
  });
});
