/**
 * The PF4 trading engine on a small seeded world driven by manual ticks: transaction checks and their result codes,
 * money moving between trades and balances, triggers from the quote feed, stop-out, swaps, the rollback buffer and
 * the balance check.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PF4_RESULT as R } from '../../shared/resultCodes.js';
import * as records from '../../shared/records/contract.js';
import { pf4Harness } from '../../test/support/sim/worldHarness.js';

/** A fresh account in real\vip (no commission) with `deposit` on it, EURUSD at 1.10000/1.10010. */
function setUp(deposit = 10_000, overrides: Record<string, unknown> = {}) {
  const h = pf4Harness(overrides);
  h.call('SymbolSendTick', { symbol: 'EURUSD', bid: 1.1, ask: 1.1001 });
  const { login } = h.call('UserRecordNew', { record: { group: 'real\\vip', name: 'Test Trader', leverage: 100 } });
  if (deposit > 0) h.call('TradeTransaction', { tradeTransactionType: 'BrBalance', tradeCommand: 'Balance', orderBy: login, price: deposit });
  const open = (fields: Record<string, unknown>) => h.call('TradeTransaction', {
    tradeTransactionType: 'BrOrderOpen', orderBy: login, symbol: 'EURUSD', tradeCommand: 'Buy', volume: 100, ...fields });
  const openFails = (fields: Record<string, unknown>) => h.fails('TradeTransaction', {
    tradeTransactionType: 'BrOrderOpen', orderBy: login, symbol: 'EURUSD', tradeCommand: 'Buy', volume: 100, ...fields });
  return { h, login: login as number, open, openFails, tick: (bid: number, ask: number) => h.call('SymbolSendTick', { symbol: 'EURUSD', bid, ask }) };
}

afterEach(() => { vi.useRealTimers(); });

describe('opening and closing', () => {
  it('opens a market buy at the ask, holds its margin and realises the profit into the balance on close', () => {
    const { h, login, open, tick } = setUp();
    const trade = open({});
    records.PF4Trade.parse(trade);
    expect(trade).toMatchObject({ tradeCommand: 'Buy', openPrice: 1.1001, volume: 100, tradeRecordState: 'OpenNormal' });
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
    const { h, open } = setUp();
    const trade = open({ volume: 300 });
    const part = h.call('TradeTransaction', { tradeTransactionType: 'BrOrderClose', order: trade.order, volume: 100 });
    expect(part).toMatchObject({ order: trade.order, volume: 100, tradeRecordState: 'ClosedPart' });
    const rest = h.call('TradeRecordRequest', { order: trade.order + 1 });
    expect(rest).toMatchObject({ volume: 200, comment: `from #${trade.order}`, tradeCommand: 'Buy' });
    expect(h.fails('TradeRecordRequest', { order: trade.order }).code).toBe(R.InvalidData);
  });

  it('refuses bad volumes, stops, prices and expirations with the PF4 trade codes', () => {
    const { openFails } = setUp();
    expect(openFails({ volume: 0 }).code).toBe(R.TradeBadVolume);
    expect(openFails({ volume: 60_000 }).code).toBe(R.TradeBadVolume);
    // A buy's stop loss must lie at least the stops level (10 points) under the bid.
    expect(openFails({ sl: 1.09995 }).code).toBe(R.TradeBadStops);
    expect(openFails({ tp: 1.10005 }).code).toBe(R.TradeBadStops);
    expect(openFails({ tradeCommand: 'BuyLimit', price: 1.102 }).code).toBe(R.TradeBadPrices);
    expect(openFails({ tradeCommand: 'BuyLimit', price: 1.10005 }).code).toBe(R.TradeBadStops);
    const soon = new Date(Date.now() + 60_000).toISOString();
    expect(openFails({ tradeCommand: 'BuyLimit', price: 1.09, expiration: soon }).code).toBe(R.TradeExpirationDenied);
    expect(openFails({ price: 1.09, ieDeviation: 5 }).code).toBe(R.TradeRequote);
    expect(openFails({ orderBy: 42 }).code).toBe(R.InvalidData);
  });

  it('refuses trades without free margin and withdrawals beyond it', () => {
    const { h, login, openFails } = setUp(500);
    expect(openFails({}).code).toBe(R.TradeNoMoney);
    expect(h.fails('TradeTransaction', { tradeTransactionType: 'BrBalance', tradeCommand: 'Balance', orderBy: login, price: -600 }).code)
      .toBe(R.TradeNoMoney);
    const credit = h.call('TradeTransaction', { tradeTransactionType: 'BrBalance', tradeCommand: 'Credit', orderBy: login, price: 1000 });
    expect(credit).toMatchObject({ tradeCommand: 'Credit', profit: 1000, tradeRecordState: 'ClosedNormal' });
    expect(h.call('UserRecordRequest', { login })).toMatchObject({ balance: 500, credit: 1000 });
    // Credit counts towards equity, so the same trade now fits; it never counts towards the balance check.
    expect(h.call('AdmBalanceCheck', { login }).diff).toBe(0);
  });

  it('refuses orders on a holiday, a hidden symbol and a close-only symbol', () => {
    // The server's clock is fixed, so the holiday below is "today" for every check this test makes, whenever it runs.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.UTC(2026, 5, 3, 12, 0)); // a Wednesday, noon UTC
    const { h, open, openFails } = setUp();
    h.call('CfgUpdateHoliday', { record: { year: 2026, month: 6, day: 4, from: 0, to: 0, symbol: 'EURUSD', description: 'tomorrow', enable: true } });
    expect(open({ volume: 10 }).symbol).toBe('EURUSD');
    h.call('CfgUpdateHoliday', { record: { year: 2026, month: 6, day: 3, from: 0, to: 0, symbol: 'EURUSD', description: 'test closure', enable: true } });
    expect(openFails({})).toEqual({ code: R.TradeMarketClosed, message: 'market for EURUSD is closed' });
    expect(open({ symbol: 'GBPUSD', volume: 10 }).symbol).toBe('GBPUSD');
    h.call('SymbolHide', { symbol: 'GBPUSD' });
    expect(openFails({ symbol: 'GBPUSD' }).code).toBe(R.TradeDisable);
    h.call('CfgUpdateSymbol', { symbol: 'USDJPY', record: { tradeMode: 'Close' } });
    expect(openFails({ symbol: 'USDJPY' }).code).toBe(R.TradeDisable);
  });

  it('modifies stops, refuses it inside the freeze level and checks stops with TradeCheckStops', () => {
    const { h, login, open } = setUp();
    const trade = open({});
    const modified = h.call('TradeTransaction', { tradeTransactionType: 'BrOrderModify', order: trade.order, sl: 1.099, tp: 1.102 });
    expect(modified).toMatchObject({ sl: 1.099, tp: 1.102 });
    h.call('CfgUpdateSymbol', { symbol: 'EURUSD', record: { freezeLevel: 200 } });
    expect(h.fails('TradeTransaction', { tradeTransactionType: 'BrOrderModify', order: trade.order, sl: 1.0985 }).code).toBe(R.TradeModifyDenied);
    const check = { tradeTransactionType: 'BrOrderOpen', orderBy: login, symbol: 'EURUSD', tradeCommand: 'Buy', volume: 100 };
    expect(h.call('TradeCheckStops', { record: { ...check, sl: 1.09 } })).toBe(true);
    // The query price is the market: a buy's stop loss is measured from the bid, half the spread under it.
    expect(h.fails('TradeCheckStops', { price: 1.0901, record: { ...check, sl: 1.09 } }))
      .toEqual({ code: R.TradeBadStops, message: 'sl 1.09 is too close to 1.09005 (stops level 10 points)' });
    expect(h.call('TradeCheckStops', { price: 1.0912, record: { ...check, sl: 1.09 } })).toBe(true);
  });

  it('checks a pending order\'s stops from its open price and its open price from the reference price', () => {
    const { h, login } = setUp();
    const limit = { tradeTransactionType: 'BrOrderOpen', orderBy: login, symbol: 'EURUSD', tradeCommand: 'BuyLimit', volume: 100, price: 1.099 };
    // Stops 10 points (the stops level) or more from 1.099 pass, wherever the market is.
    expect(h.call('TradeCheckStops', { record: { ...limit, sl: 1.0985, tp: 1.1 } })).toBe(true);
    expect(h.call('TradeCheckStops', { price: 1.1, record: { ...limit, sl: 1.098, tp: 1.0991 } })).toBe(true);
    expect(h.fails('TradeCheckStops', { price: 1.1, record: { ...limit, sl: 1.09895 } }))
      .toEqual({ code: R.TradeBadStops, message: 'sl 1.09895 is too close to 1.099 (stops level 10 points)' });
    expect(h.fails('TradeCheckStops', { price: 1.1, record: { ...limit, tp: 1.09905 } }))
      .toEqual({ code: R.TradeBadStops, message: 'tp 1.09905 is too close to 1.099 (stops level 10 points)' });
    // The open price against the reference: the ask is 1.09907 at 1.09902, 0.7 points above a buy limit at 1.099.
    expect(h.fails('TradeCheckStops', { price: 1.09902, record: { ...limit, sl: 1.098 } }))
      .toEqual({ code: R.TradeBadStops, message: 'price 1.099 is closer to the market than the stops level' });
    expect(h.fails('TradeCheckStops', { price: 1.0985, record: limit }))
      .toEqual({ code: R.TradeBadPrices, message: 'price 1.099 is on the wrong side of the market for BuyLimit' });
    expect(h.call('TradeCheckStops', { price: 1.0992, record: limit })).toBe(true);
    const soon = new Date(Date.now() + 60_000).toISOString();
    expect(h.fails('TradeCheckStops', { record: { ...limit, expiration: soon } }))
      .toEqual({ code: R.TradeExpirationDenied, message: 'expiration must be at least 10 minutes ahead' });
    const { price: _price, ...unpriced } = limit;
    expect(h.fails('TradeCheckStops', { record: unpriced }))
      .toEqual({ code: R.InvalidData, message: 'record.price is required for a pending order' });
    expect(h.fails('TradeCheckStops', { record: { ...limit, symbol: '' } }))
      .toEqual({ code: R.InvalidData, message: 'record.symbol must be a non-empty string' });
    expect(h.fails('TradeCheckStops', { price: 'market', record: limit }))
      .toEqual({ code: R.InvalidData, message: 'price must be a number' });
    expect(h.fails('TradeCheckStops', limit)).toEqual({ code: R.InvalidData, message: 'record must be an object' });
    // A check opens nothing.
    expect(h.call('TradesUserRequest', { login })).toEqual([]);
  });
});

describe('the quote feed drives the trades', () => {
  it('activates a pending order when the market reaches it', () => {
    const { h, open, tick } = setUp();
    const order = open({ tradeCommand: 'BuyLimit', price: 1.099 });
    expect(order.tradeCommand).toBe('BuyLimit');
    tick(1.0991, 1.0992);
    expect(h.call('TradeRecordRequest', { order: order.order }).tradeCommand).toBe('BuyLimit');
    tick(1.0988, 1.0989);
    const active = h.call('TradeRecordRequest', { order: order.order });
    expect(active).toMatchObject({ tradeCommand: 'Buy', openPrice: 1.0989 });
    expect(h.events.some((e) => e.kind === 'trades' && e.op === 'update' && e.record.order === order.order && e.record.tradeCommand === 'Buy')).toBe(true);
  });

  it('closes at the stop loss, and TradeClearRollback restores the trade and the balance', () => {
    const { h, login, open, tick } = setUp();
    const trade = open({ sl: 1.099, tp: 1.103 });
    tick(1.0989, 1.099);
    expect(h.fails('TradeRecordRequest', { order: trade.order }).code).toBe(R.InvalidData);
    const closed = h.call('TradesUserHistory', { login }).at(-1);
    expect(closed).toMatchObject({ order: trade.order, activationType: 'SL', closePrice: 1.0989, profit: -120 });
    expect(h.call('UserRecordRequest', { login }).balance).toBe(9880);
    expect(h.call('TradeClearRollback', { order: trade.order })).toBe(true);
    expect(h.call('TradeRecordRequest', { order: trade.order })).toMatchObject({ activationType: 'SLRollback', sl: 1.099 });
    expect(h.call('UserRecordRequest', { login }).balance).toBe(10_000);
    // The dealer owns a rolled-back trade: the next tick does not stop it out again.
    tick(1.0985, 1.0986);
    expect(h.call('TradeRecordRequest', { order: trade.order }).order).toBe(trade.order);
    expect(h.call('TradeClearRollback', { order: trade.order })).toBe(false);
    expect(h.fails('TradeClearRollback', { order: 1 }).code).toBe(R.InvalidData);
  });

  it('needs the trades right to roll an activation back, and a refused rollback leaves the close in place', () => {
    const { h, login, open, tick } = setUp();
    const trade = open({ sl: 1.099 });
    tick(1.0989, 1.099);
    expect(h.call('UserRecordRequest', { login }).balance).toBe(9880);
    const mark = h.events.length;
    expect(h.fails('TradeClearRollback', { order: trade.order }, ['manager', 'money', 'admin', 'seeTrades']))
      .toEqual({ code: R.NotEnoughRights, message: 'TradeClearRollback needs the trades right' });
    expect(h.events.slice(mark)).toEqual([]);
    expect(h.call('UserRecordRequest', { login }).balance).toBe(9880);
    expect(h.fails('TradeRecordRequest', { order: trade.order }).code).toBe(R.InvalidData);
    expect(h.call('TradeClearRollback', { order: trade.order }, ['trades'])).toBe(true);
    expect(h.call('UserRecordRequest', { login }).balance).toBe(10_000);
  });

  it('takes profit on the bid for buys and on the ask for sells', () => {
    const { h, login, open, tick } = setUp();
    const buy = open({ tp: 1.1011 });
    const sell = open({ tradeCommand: 'Sell', tp: 1.0995 });
    tick(1.1011, 1.1012);
    expect(h.call('TradesUserHistory', { login }).find((r: { order: number }) => r.order === buy.order)).toMatchObject({ activationType: 'TP', closePrice: 1.1011 });
    expect(h.call('TradeRecordRequest', { order: sell.order }).order).toBe(sell.order);
    tick(1.0994, 1.0995);
    expect(h.call('TradesUserHistory', { login }).find((r: { order: number }) => r.order === sell.order)).toMatchObject({ activationType: 'TP', closePrice: 1.0995 });
  });

  it('triggers a buy\'s stops on the bid and a sell\'s on the ask, whatever the other side of the quote shows', () => {
    const { h, login, open, tick } = setUp();
    const buySl = open({ sl: 1.099 });
    const buyTp = open({ tp: 1.101 });
    const sellSl = open({ tradeCommand: 'Sell', sl: 1.1005 });
    const sellTp = open({ tradeCommand: 'Sell', tp: 1.0995 });
    const openOrders = () => h.call('TradesUserRequest', { login }).map((r: { order: number }) => r.order);
    const closed = (order: number) => h.call('TradesUserHistory', { login }).find((r: { order: number }) => r.order === order);
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
    const { h, login, open, tick } = setUp(3000);
    const losing = open({ volume: 100 });
    const winning = open({ tradeCommand: 'Sell', volume: 50 });
    // Down 500 points: the buy loses 5010, the sell gains 2495; equity 485 on 1650.08 of margin is 29% < 50%.
    tick(1.05, 1.0501);
    const history = h.call('TradesUserHistory', { login });
    expect(history.filter((r: { activationType: string }) => r.activationType === 'Stopout'))
      .toEqual([expect.objectContaining({ order: losing.order, tradeCommand: 'Buy', profit: -5010 })]);
    // Closing the loser alone brings the level back above the stop-out level, so the winner stays open.
    expect(h.call('TradesUserRequest', { login }).map((r: { order: number }) => r.order)).toEqual([winning.order]);
    expect(h.call('MarginLevelRequest', { login })).toMatchObject({ balance: -2010, equity: 485, level: 88.18 });
  });

  it('stops an account out when its margin level falls to the stop-out level', () => {
    const { h, login, open, tick } = setUp(2000);
    const trade = open({ volume: 150 });
    expect(h.call('MarginLevelRequest', { login }).level).toBeGreaterThan(100);
    // Margin is 1650.08; equity 2000 - 1.5 lots * 100000 * 0.0095 = 575 puts the level at 35% < 50%.
    tick(1.0906, 1.0907);
    const closed = h.call('TradesUserHistory', { login }).at(-1);
    expect(closed).toMatchObject({ order: trade.order, activationType: 'Stopout' });
    expect(h.call('MarginLevelRequest', { login })).toMatchObject({ margin: 0, levelType: 'Ok' });
    expect(h.call('UserRecordRequest', { login }).balance).toBe(2000 + closed.profit);
  });

  it('charges swaps at rollover from the group override, converted to the deposit currency', () => {
    const { h, open } = setUp();
    const trade = open({});
    h.world.rollover(Date.UTC(2026, 0, 5)); // a Monday: one day of swaps
    // real\vip overrides EURUSD long swaps to -1.5 points: -1.5 * 0.00001 * 100000 * 1 lot = -1.5 USD.
    expect(h.call('TradeRecordRequest', { order: trade.order }).storage).toBe(-1.5);
    h.world.rollover(Date.UTC(2026, 0, 7)); // Wednesday: three days
    expect(h.call('TradeRecordRequest', { order: trade.order }).storage).toBe(-6);
  });

  it('expires pending orders whose expiration has passed', () => {
    const { h, open } = setUp();
    const expiration = new Date(Date.now() + 11 * 60_000).toISOString();
    const order = open({ tradeCommand: 'SellLimit', price: 1.105, expiration });
    h.world.engine.sweep(Date.now() + 12 * 60_000);
    expect(h.fails('TradeRecordRequest', { order: order.order }).code).toBe(R.InvalidData);
  });
});

describe('balance check and fix', () => {
  it('finds seeded accounts whose balance disagrees with their history, and fixes them', () => {
    const h = pf4Harness({ accounts: 300, trades: 100 }, 7);
    const diffs = h.call('AdmBalanceCheck', {});
    expect(diffs.length).toBeGreaterThan(0);
    for (const d of diffs) records.PF4BalanceDiff.parse(d);
    const { login, diff } = diffs[0];
    const before = h.call('UserRecordRequest', { login }).balance;
    expect(h.call('AdmBalanceFix', { logins: [login] })).toBe(true);
    expect(h.call('UserRecordRequest', { login }).balance).toBeCloseTo(before - diff, 2);
    expect(h.call('AdmBalanceCheck', { login }).diff).toBe(0);
    expect(h.call('AdmBalanceCheck', { logins: [login] })).toEqual([]);
  });

  it('keeps balance, credit and the server-derived fields through an account update, so the history still explains the balance', () => {
    const { h, login } = setUp();
    h.call('TradeTransaction', { tradeTransactionType: 'BrBalance', tradeCommand: 'Credit', orderBy: login, price: 300 });
    const before = h.call('UserRecordRequest', { login });
    const mark = h.events.length;
    const updated = h.call('UserRecordUpdate', { login, record: { balance: 10_250, credit: 5, name: 'Renamed Trader', comment: 'vip' } });
    expect(updated).toEqual({ ...before, name: 'Renamed Trader', comment: 'vip' });
    expect(updated).toMatchObject({ balance: 10_000, credit: 300 });
    expect(h.call('UserRecordRequest', { login })).toEqual(updated);
    expect(h.call('AdmBalanceCheck', { login })).toEqual({ login, diff: 0 });
    expect(h.call('AdmBalanceCheck', { logins: [login] })).toEqual([]);
    // Nothing the margin record carries changed, so only the account is announced.
    expect(h.events.slice(mark)).toEqual([{ kind: 'users', op: 'update', record: updated }]);
    // The server-derived fields are not part of PF4UserUpdate at all.
    for (const field of ['prevBalance', 'prevMonthEquity', 'registrationDate', 'lastDate', 'lastIP', 'login']) {
      expect(h.fails('UserRecordUpdate', { login, record: { [field]: 0 } }).message, field).toMatch(new RegExp(`^record\\.${field}: `));
    }
    expect(h.call('UserRecordRequest', { login })).toEqual(updated);
  });
});

describe('generated worlds', () => {
  it('start with no account at stop-out and no trade beyond its stops', () => {
    const h = pf4Harness({ accounts: 200, trades: 400 }, 3);
    const levels = h.world.engine.loginsWithTrades().map((login) => h.call('MarginLevelRequest', { login }))
      .filter((level: { margin: number }) => level.margin > 0);
    expect(levels.length).toBeGreaterThan(50);
    const low = levels.filter((level: { level: number }) => level.level < 299);
    expect(low).toEqual([]);
    const before = h.world.trades.size;
    for (const quote of h.world.feed.allQuotes()) h.world.feed.inject(quote.symbol, quote.bid, quote.ask);
    expect(h.world.trades.size).toBe(before);
  });
});
