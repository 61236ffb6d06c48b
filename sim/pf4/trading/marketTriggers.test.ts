/**
 * What the quote feed does to the trades: pending activation, stop losses and take profits at their trigger prices,
 * stop-out, and expiry on the sweep.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PF4_RESULT as R } from '../../../shared/resultCodes.js';
import { at, MINUTE, pf4Desk, pf4Trader, T0 } from '../../../test/support/sim/pf4TradingDesk.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the quote feed drives the trades', () => {
  it('activates a pending order when the market reaches it', () => {
    const { h, open, tick } = pf4Trader();
    const order = open({ tradeCommand: 'BuyLimit', price: 1.099 });
    expect(order.tradeCommand).toBe('BuyLimit');
    tick(1.0991, 1.0992);
    expect(h.call('TradeRecordRequest', { order: order.order }).tradeCommand).toBe('BuyLimit');
    tick(1.0988, 1.0989);
    const active = h.call('TradeRecordRequest', { order: order.order });
    expect(active).toMatchObject({ tradeCommand: 'Buy', openPrice: 1.0989 });
    expect(
      h.events.some(
        (e) =>
          e.kind === 'trades' && e.op === 'update' && e.record.order === order.order && e.record.tradeCommand === 'Buy',
      ),
    ).toBe(true);
  });

  it('takes profit on the bid for buys and on the ask for sells', () => {
    const { h, login, open, tick } = pf4Trader();
    const buy = open({ tp: 1.1011 });
    const sell = open({ tradeCommand: 'Sell', tp: 1.0995 });
    tick(1.1011, 1.1012);
    expect(h.call('TradesUserHistory', { login }).find((r: { order: number }) => r.order === buy.order)).toMatchObject({
      activationType: 'TP',
      closePrice: 1.1011,
    });
    expect(h.call('TradeRecordRequest', { order: sell.order }).order).toBe(sell.order);
    tick(1.0994, 1.0995);
    expect(h.call('TradesUserHistory', { login }).find((r: { order: number }) => r.order === sell.order)).toMatchObject(
      { activationType: 'TP', closePrice: 1.0995 },
    );
  });

  it("triggers a buy's stops on the bid and a sell's on the ask, whatever the other side of the quote shows", () => {
    const { h, login, open, tick } = pf4Trader();
    const buySl = open({ sl: 1.099 });
    const buyTp = open({ tp: 1.101 });
    const sellSl = open({ tradeCommand: 'Sell', sl: 1.1005 });
    const sellTp = open({ tradeCommand: 'Sell', tp: 1.0995 });
    const openOrders = () => h.call('TradesUserRequest', { login }).map((r: { order: number }) => r.order);
    const closed = (order: number) =>
      h.call('TradesUserHistory', { login }).find((r: { order: number }) => r.order === order);
    // Each tick below puts one stop strictly between the bid and the ask.
    tick(1.1003, 1.1008); // the sell's stop loss 1.1005: the ask has reached it, the bid has not
    expect(closed(sellSl.order)).toMatchObject({ activationType: 'SL', closePrice: 1.1008 });
    expect(openOrders()).toEqual([buySl.order, buyTp.order, sellTp.order]);
    tick(1.1008, 1.1012); // the buy's take profit 1.101: the ask is past it, the bid is not
    expect(openOrders()).toEqual([buySl.order, buyTp.order, sellTp.order]);
    tick(1.0993, 1.0998); // the sell's take profit 1.0995: the bid is past it, the ask is not
    expect(openOrders()).toEqual([buySl.order, buyTp.order, sellTp.order]);
    tick(1.0988, 1.0992); // the buy's stop loss 1.099 (bid under it) and the sell's take profit (ask under it)
    expect(closed(buySl.order)).toMatchObject({ activationType: 'SL', closePrice: 1.0988 });
    expect(closed(sellTp.order)).toMatchObject({ activationType: 'TP', closePrice: 1.0992 });
    expect(openOrders()).toEqual([buyTp.order]);
  });

  it('stops an account out by closing its most losing trade first, and only as many as the level needs', () => {
    const { h, login, open, tick } = pf4Trader(3000);
    const losing = open({ volume: 100 });
    const winning = open({ tradeCommand: 'Sell', volume: 50 });
    // Down 500 points: the buy loses 5010, the sell gains 2495; equity 485 on 1650.08 of margin is 29% < 50%.
    tick(1.05, 1.0501);
    const history = h.call('TradesUserHistory', { login });
    expect(history.filter((r: { activationType: string }) => r.activationType === 'Stopout')).toEqual([
      expect.objectContaining({ order: losing.order, tradeCommand: 'Buy', profit: -5010 }),
    ]);
    // Closing the loser alone brings the level back above the stop-out level, so the winner stays open.
    expect(h.call('TradesUserRequest', { login }).map((r: { order: number }) => r.order)).toEqual([winning.order]);
    expect(h.call('MarginLevelRequest', { login })).toMatchObject({ balance: -2010, equity: 485, level: 88.18 });
  });

  it('stops an account out when its margin level falls to the stop-out level', () => {
    const { h, login, open, tick } = pf4Trader(2000);
    const trade = open({ volume: 150 });
    expect(h.call('MarginLevelRequest', { login }).level).toBeGreaterThan(100);
    // Margin is 1650.08; equity 2000 - 1.5 lots * 100000 * 0.0095 = 575 puts the level at 35% < 50%.
    tick(1.0906, 1.0907);
    const closed = h.call('TradesUserHistory', { login }).at(-1);
    expect(closed).toMatchObject({ order: trade.order, activationType: 'Stopout' });
    expect(h.call('MarginLevelRequest', { login })).toMatchObject({ margin: 0, levelType: 'Ok' });
    expect(h.call('UserRecordRequest', { login }).balance).toBe(2000 + closed.profit);
  });

  it('expires pending orders whose expiration has passed', () => {
    const { h, open } = pf4Trader();
    const expiration = new Date(Date.now() + 11 * 60_000).toISOString();
    const order = open({ tradeCommand: 'SellLimit', price: 1.105, expiration });
    h.world.engine.sweep(Date.now() + 12 * 60_000);
    expect(h.fails('TradeRecordRequest', { order: order.order }).code).toBe(R.InvalidData);
  });
});

describe('the quote feed at the trigger prices', () => {
  it('cancels an order the market reaches when the account cannot hold the margin', () => {
    const { h, account, open, tick, history, openOrders, journal } = pf4Desk();
    const login = account(500);
    const order = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    tick(1.0988, 1.0989);
    expect(openOrders(login)).toEqual([]);
    expect(history(login).at(-1)).toMatchObject({
      order: order.order,
      tradeCommand: 'BuyLimit',
      tradeRecordState: 'Deleted',
    });
    expect(journal()).toContain(`'${login}': pending #${order.order} cancelled [no money]`);
    expect(h.call('UserRecordRequest', { login }).balance).toBe(500);
  });

  it('activates limit and stop orders when the side they buy or sell at reaches their price', () => {
    const { account, open, tick, h } = pf4Desk();
    const login = account();
    const buyLimit = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    const buyStop = open(login, { tradeCommand: 'BuyStop', price: 1.102 });
    const sellLimit = open(login, { tradeCommand: 'SellLimit', price: 1.1025 });
    const sellStop = open(login, { tradeCommand: 'SellStop', price: 1.0985 });
    const state = () =>
      [buyLimit, buyStop, sellLimit, sellStop].map((o) => {
        const row = h.call('TradeRecordRequest', { order: o.order });
        return `${row.tradeCommand} ${row.openPrice}`;
      });
    tick(1.0986, 1.0991); // the bid is past the buy limit and near the sell stop: neither counts
    expect(state()).toEqual(['BuyLimit 1.099', 'BuyStop 1.102', 'SellLimit 1.1025', 'SellStop 1.0985']);
    tick(1.0985, 1.099);
    expect(state()).toEqual(['Buy 1.099', 'BuyStop 1.102', 'SellLimit 1.1025', 'Sell 1.0985']);
    tick(1.1015, 1.102);
    expect(state()).toEqual(['Buy 1.099', 'Buy 1.102', 'SellLimit 1.1025', 'Sell 1.0985']);
    tick(1.102, 1.1025); // the ask reaches the sell limit, the bid does not
    expect(state()).toEqual(['Buy 1.099', 'Buy 1.102', 'SellLimit 1.1025', 'Sell 1.0985']);
    tick(1.1025, 1.103);
    expect(state()).toEqual(['Buy 1.099', 'Buy 1.102', 'Sell 1.1025', 'Sell 1.0985']);
  });

  it('closes at a stop loss or take profit the closing price has just reached', () => {
    const { account, open, tick, history } = pf4Desk();
    const login = account();
    const buySl = open(login, { sl: 1.099 });
    const buyTp = open(login, { tp: 1.102 });
    const sellSl = open(login, { tradeCommand: 'Sell', sl: 1.1025 });
    const sellTp = open(login, { tradeCommand: 'Sell', tp: 1.0985 });
    const closes = () =>
      history(login)
        .slice(1)
        .map((r) => [r.order, r.activationType, r.closePrice]);
    tick(1.099, 1.0991);
    expect(closes()).toEqual([[buySl.order, 'SL', 1.099]]);
    tick(1.102, 1.1021);
    expect(closes()).toEqual([
      [buySl.order, 'SL', 1.099],
      [buyTp.order, 'TP', 1.102],
    ]);
    tick(1.1024, 1.1025);
    expect(closes().at(-1)).toEqual([sellSl.order, 'SL', 1.1025]);
    tick(1.0984, 1.0985);
    expect(closes().at(-1)).toEqual([sellTp.order, 'TP', 1.0985]);
  });

  it('calls a close with both stops reached a stop loss', () => {
    const { h, account, open, tick, history } = pf4Desk();
    const login = account();
    const trade = open(login);
    // An administrator's edit is not checked against the market: both stops lie beyond the price.
    h.call('AdmTradeRecordModify', { ticket: trade.order, record: { sl: 1.2, tp: 1.0 } });
    tick(1.1, 1.1001);
    expect(history(login).at(-1)).toMatchObject({ order: trade.order, activationType: 'SL', closePrice: 1.1 });
  });

  it('triggers a stop loss set by a modification on the next tick', () => {
    const { account, open, tx, tick, history, journal } = pf4Desk();
    const login = account();
    const trade = open(login);
    tx('BrOrderModify', { order: trade.order, sl: 1.099 });
    tick(1.0989, 1.099);
    expect(history(login).at(-1)).toMatchObject({
      order: trade.order,
      activationType: 'SL',
      closePrice: 1.0989,
      profit: -120,
    });
    expect(journal()).toContain(`'${login}': close #${trade.order} buy 1.00 EURUSD at 1.1001 at 1.0989 [sl]`);
  });

  it('activates an order with an expiration into a trade without one', () => {
    const { account, open, tx } = pf4Desk();
    const order = open(account(), { tradeCommand: 'BuyLimit', price: 1.099, expiration: at(T0 + 60 * MINUTE) });
    expect(order.expiration).toBe(at(T0 + 60 * MINUTE));
    expect('expiration' in tx('BrOrderActivate', { order: order.order })).toBe(false);
  });
});

describe('expiry', () => {
  it('deletes a pending order on the sweep at its expiration, not before, and journals it', () => {
    const { h, account, open, history, openOrders, journal } = pf4Desk();
    const login = account();
    const trade = open(login);
    const order = open(login, { tradeCommand: 'SellLimit', price: 1.105, expiration: at(T0 + 11 * MINUTE) });
    h.world.engine.sweep(T0 + 11 * MINUTE - 1);
    expect(openOrders(login)).toEqual([trade.order, order.order]);
    h.world.engine.sweep(T0 + 11 * MINUTE);
    expect(openOrders(login)).toEqual([trade.order]);
    expect(history(login).at(-1)).toMatchObject({
      order: order.order,
      tradeRecordState: 'Deleted',
      closeTime: at(T0 + 11 * MINUTE),
    });
    expect(journal()).toContain(`'${login}': pending #${order.order} expired`);
  });
});

describe('stop-out', () => {
  it('counts the balance a close realised when it checks the trades left open', () => {
    const { account, open, tick, tx, openOrders, history } = pf4Desk();
    const login = account(3000);
    const closed = open(login);
    const kept = open(login);
    tick(1.0951, 1.0952); // each trade 500 down
    tx('BrOrderClose', { order: closed.order }); // the balance is 2500 now
    // 2000 down: equity 500 on 1100.05 of margin is 45.5 %.
    tick(1.0801, 1.0802);
    expect(openOrders(login)).toEqual([]);
    expect(history(login).find((r) => r.order === kept.order)).toMatchObject({
      activationType: 'Stopout',
      profit: -2000,
    });
  });

  it('closes the older of two equally losing trades first and journals the level', () => {
    const { h, account, open, tick, openOrders, history, journal } = pf4Desk();
    const login = account(3000);
    const first = open(login);
    const second = open(login);
    // 100 points under the open price: equity 1000 on 2200.1 of margin is 45.45 %; one close doubles the level.
    tick(1.0901, 1.0902);
    expect(
      history(login)
        .filter((r) => r.activationType === 'Stopout')
        .map((r) => r.order),
    ).toEqual([first.order]);
    expect(openOrders(login)).toEqual([second.order]);
    expect(journal()).toContain(`'${login}': stop out at level 45.45%`);
    // The engine's lines are journalled as trade lines; the account's creation is not one.
    expect(
      h.world
        .journalEntries()
        .filter((line) => line.message.startsWith(`'${login}': `))
        .map((line) => [line.code, line.message]),
    ).toEqual([
      ['Standard', `'${login}': account created in real\\vip`],
      ['Trades', `'${login}': balance 3000 (#${first.order - 1})`],
      ['Trades', `'${login}': #${first.order} buy 1.00 EURUSD at 1.1001 opened`],
      ['Trades', `'${login}': #${second.order} buy 1.00 EURUSD at 1.1001 opened`],
      ['Trades', `'${login}': stop out at level 45.45%`],
      ['Trades', `'${login}': close #${first.order} buy 1.00 EURUSD at 1.1001 at 1.0901 [stopout]`],
    ]);
  });
});
