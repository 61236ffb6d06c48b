/**
 * What a transaction must pass, each refusal with its PF4 result code: the account, symbol, session and group rules of
 * an open, volumes, money, prices and stops at their limits, unknown tickets and accounts, TradeCheckStops and the
 * freeze level.
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

describe('what an open must pass', () => {
  it('refuses bad volumes, stops, prices and expirations with the PF4 trade codes', () => {
    const { openFails } = pf4Trader();
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

  it('refuses orders on a holiday, a hidden symbol and a close-only symbol', () => {
    // The server's clock is fixed, so the holiday below is "today" for every check this test makes, whenever it runs.
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.UTC(2026, 5, 3, 12, 0)); // a Wednesday, noon UTC
    const { h, open, openFails } = pf4Trader();
    h.call('CfgUpdateHoliday', {
      record: { year: 2026, month: 6, day: 4, from: 0, to: 0, symbol: 'EURUSD', description: 'tomorrow', enable: true },
    });
    expect(open({ volume: 10 }).symbol).toBe('EURUSD');
    h.call('CfgUpdateHoliday', {
      record: {
        year: 2026,
        month: 6,
        day: 3,
        from: 0,
        to: 0,
        symbol: 'EURUSD',
        description: 'test closure',
        enable: true,
      },
    });
    expect(openFails({})).toEqual({ code: R.TradeMarketClosed, message: 'market for EURUSD is closed' });
    expect(open({ symbol: 'GBPUSD', volume: 10 }).symbol).toBe('GBPUSD');
    h.call('SymbolHide', { symbol: 'GBPUSD' });
    expect(openFails({ symbol: 'GBPUSD' }).code).toBe(R.TradeDisable);
    h.call('CfgUpdateSymbol', { symbol: 'USDJPY', record: { tradeMode: 'Close' } });
    expect(openFails({ symbol: 'USDJPY' }).code).toBe(R.TradeDisable);
  });

  it('names the unknown account and the unknown symbol', () => {
    const { account, openFails } = pf4Desk();
    expect(openFails(42)).toEqual({ code: R.InvalidData, message: 'orderBy: login 42 not found' });
    expect(openFails(account(), { symbol: 'NOPE' })).toEqual({ code: R.InvalidData, message: 'symbol NOPE not found' });
  });

  it('refuses a symbol whose configuration was deleted and a hidden one', () => {
    const { h, account, openFails } = pf4Desk();
    const login = account();
    h.call('CfgDeleteSymbol', { pos: h.world.symbols.indexOf('GBPUSD') });
    expect(openFails(login, { symbol: 'GBPUSD' })).toEqual({ code: R.InvalidData, message: 'symbol GBPUSD not found' });
    h.call('SymbolHide', { symbol: 'USDJPY' });
    expect(openFails(login, { symbol: 'USDJPY' })).toEqual({
      code: R.TradeDisable,
      message: 'symbol USDJPY is not in the active set',
    });
  });

  it('refuses a disabled account', () => {
    const { h, account, openFails, open } = pf4Desk();
    const login = account();
    h.call('UsersGroupOp', { record: { command: 'Disable', logins: [login] } });
    expect(openFails(login)).toEqual({ code: R.TradeDisable, message: `account ${login} is disabled` });
    h.call('UsersGroupOp', { record: { command: 'Enable', logins: [login] } });
    expect(open(login).tradeCommand).toBe('Buy');
  });

  it('refuses symbols whose trade mode is No or Close, each with its reason', () => {
    const { symbol, account, openFails } = pf4Desk();
    const login = account();
    symbol('EURUSD', { tradeMode: 'No' });
    expect(openFails(login)).toEqual({ code: R.TradeDisable, message: 'trading EURUSD is disabled' });
    symbol('EURUSD', { tradeMode: 'Close' });
    expect(openFails(login)).toEqual({ code: R.TradeDisable, message: 'trading EURUSD is close-only' });
  });

  it('lets a long-only symbol be bought and refuses selling it', () => {
    const { symbol, account, open, openFails } = pf4Desk();
    const login = account();
    symbol('EURUSD', { longOnly: 1 });
    expect(openFails(login, { tradeCommand: 'Sell' })).toEqual({
      code: R.TradeLongOnly,
      message: 'EURUSD allows long positions only',
    });
    expect(openFails(login, { tradeCommand: 'SellLimit', price: 1.102 }).code).toBe(R.TradeLongOnly);
    expect(open(login, { tradeCommand: 'Buy' }).tradeCommand).toBe('Buy');
    expect(open(login, { tradeCommand: 'BuyLimit', price: 1.099 }).tradeCommand).toBe('BuyLimit');
  });

  it("counts open trades and pending orders against the group's maximum", () => {
    const { group, account, open, openFails, openOrders } = pf4Desk();
    group('real\\vip', { maxPositions: 2 });
    const login = account();
    const first = open(login);
    const second = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    expect(openFails(login)).toEqual({ code: R.TradeTooManyOrders, message: `account ${login} has reached 2 orders` });
    expect(openOrders(login)).toEqual([first.order, second.order]);
    // Another account of the group has its own count.
    expect(open(account()).tradeCommand).toBe('Buy');
  });

  it('refuses an opposite market trade on the same symbol where the group prohibits hedging', () => {
    const { group, account, open, openFails } = pf4Desk();
    group('real\\vip', { hedgeProhibited: 1 });
    const login = account();
    open(login);
    expect(openFails(login, { tradeCommand: 'Sell' })).toEqual({
      code: R.TradeHedgeProhibited,
      message: 'hedging EURUSD is prohibited in group real\\vip',
    });
    // The same direction, another symbol and a pending order are no hedge.
    expect(open(login).tradeCommand).toBe('Buy');
    expect(open(login, { tradeCommand: 'Sell', symbol: 'GBPUSD', volume: 10 }).tradeCommand).toBe('Sell');
    expect(open(login, { tradeCommand: 'SellLimit', price: 1.102 }).tradeCommand).toBe('SellLimit');
  });

  it('does not count pending orders as a position to hedge against', () => {
    const { group, account, open, openFails } = pf4Desk();
    group('real\\vip', { hedgeProhibited: 1 });
    const login = account();
    open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    expect(open(login, { tradeCommand: 'Sell' }).tradeCommand).toBe('Sell');
    expect(openFails(login, { tradeCommand: 'Buy' }).code).toBe(R.TradeHedgeProhibited);
  });

  it('lets an account hedge in a group that allows it', () => {
    const { account, open } = pf4Desk();
    const login = account();
    open(login);
    expect(open(login, { tradeCommand: 'Sell' }).tradeCommand).toBe('Sell');
  });

  it("takes a pending order's expiration from 10 minutes ahead on, and none for a time not after 1970", () => {
    const { account, open, openFails } = pf4Desk();
    const login = account();
    const limit = { tradeCommand: 'SellLimit', price: 1.102 };
    expect(openFails(login, { ...limit, expiration: at(T0 + 10 * MINUTE - 1000) })).toEqual({
      code: R.TradeExpirationDenied,
      message: 'expiration must be at least 10 minutes ahead',
    });
    expect(open(login, { ...limit, expiration: at(T0 + 10 * MINUTE) }).expiration).toBe(at(T0 + 10 * MINUTE));
    expect('expiration' in open(login, { ...limit, expiration: '1970-01-01T00:00:00Z' })).toBe(false);
    expect('expiration' in open(login, limit)).toBe(false);
  });

  it('needs a price for a pending order', () => {
    const { account, openFails } = pf4Desk();
    expect(openFails(account(), { tradeCommand: 'SellStop' })).toEqual({
      code: R.InvalidData,
      message: 'price is required for a pending order',
    });
  });

  it("refuses a symbol the group may not trade and volumes off the group's lot grid", () => {
    const { h, account, open, openFails } = pf4Desk();
    const login = account();
    const sec = h.world.groupSecurities.get('real\\vip')![0];
    Object.assign(sec, { lotMin: 3, lotMax: 503, lotStep: 5 });
    expect(openFails(login, { volume: 5 })).toEqual({
      code: R.TradeBadVolume,
      message: 'volume 5 must be between 3 and 503 in steps of 5 (1/100 lot)',
    });
    expect(openFails(login, { volume: 2 }).code).toBe(R.TradeBadVolume);
    expect(openFails(login, { volume: 508 }).code).toBe(R.TradeBadVolume);
    expect([3, 8, 503].map((volume) => open(login, { volume }).volume)).toEqual([3, 8, 503]);
    // Without a grid of its own the group trades 1 to 100000 in steps of 1.
    Object.assign(sec, { lotMin: 0, lotMax: 0, lotStep: 0 });
    expect(openFails(login, { volume: 100_001 })).toEqual({
      code: R.TradeBadVolume,
      message: 'volume 100001 must be between 1 and 100000 in steps of 1 (1/100 lot)',
    });
    expect(openFails(login, { volume: 100_000 }).code).toBe(R.TradeNoMoney);
    expect(open(login, { volume: 1 }).volume).toBe(1);
    sec.trade = 0;
    expect(openFails(login, { volume: 15 })).toEqual({
      code: R.TradeDisable,
      message: 'group real\\vip may not trade EURUSD',
    });
  });
});

describe('money, prices and stops at their limits', () => {
  it('refuses trades without free margin and withdrawals beyond it', () => {
    const { h, login, openFails } = pf4Trader(500);
    expect(openFails({}).code).toBe(R.TradeNoMoney);
    expect(
      h.fails('TradeTransaction', {
        tradeTransactionType: 'BrBalance',
        tradeCommand: 'Balance',
        orderBy: login,
        price: -600,
      }).code,
    ).toBe(R.TradeNoMoney);
    const credit = h.call('TradeTransaction', {
      tradeTransactionType: 'BrBalance',
      tradeCommand: 'Credit',
      orderBy: login,
      price: 1000,
    });
    expect(credit).toMatchObject({ tradeCommand: 'Credit', profit: 1000, tradeRecordState: 'ClosedNormal' });
    expect(h.call('UserRecordRequest', { login })).toMatchObject({ balance: 500, credit: 1000 });
    // Credit counts towards equity, so the same trade now fits; it never counts towards the balance check.
    expect(h.call('AdmBalanceCheck', { login }).diff).toBe(0);
  });

  it('opens when the margin equals the free margin and not a cent beyond', () => {
    const { account, open, openFails } = pf4Desk();
    expect(openFails(account(1100.04))).toEqual({
      code: R.TradeNoMoney,
      message: 'not enough money: margin 1100.05 exceeds free margin 1100.04',
    });
    expect(open(account(1100.05)).tradeCommand).toBe('Buy');
  });

  it('counts the commission an open charges against the free margin', () => {
    const { account, open, openFails } = pf4Desk();
    // real\\standard charges 3.5 USD for the lot.
    expect(openFails(account(1103.54, 'real\\standard'))).toEqual({
      code: R.TradeNoMoney,
      message: 'not enough money: margin 1100.05 exceeds free margin 1103.54',
    });
    expect(open(account(1103.55, 'real\\standard')).commission).toBe(-3.5);
  });

  it('accepts a requested price up to the deviation away and requotes beyond it', () => {
    const { account, open, openFails, tx, txFails } = pf4Desk();
    const login = account();
    // The ask is 1.1001: a request at 1.1 is 10 points away.
    expect(openFails(login, { price: 1.1, ieDeviation: 9 })).toEqual({
      code: R.TradeRequote,
      message: 'price moved to 1.1001',
    });
    const trade = open(login, { price: 1.1, ieDeviation: 10 });
    expect(trade.openPrice).toBe(1.1001);
    // A price of 0 or no deviation asks for the market, whatever it is.
    expect(open(login, { price: 0, ieDeviation: 0 }).openPrice).toBe(1.1001);
    expect(open(login, { price: 1.05 }).openPrice).toBe(1.1001);
    // A close is checked against its closing price, the bid.
    expect(txFails('BrOrderClose', { order: trade.order, price: 1.10011, ieDeviation: 10 })).toEqual({
      code: R.TradeRequote,
      message: 'price moved to 1.1',
    });
    expect(tx('BrOrderClose', { order: trade.order, price: 1.1001, ieDeviation: 10 })).toMatchObject({
      closePrice: 1.1,
    });
  });

  it('places pending orders exactly the stops level from the market and not closer', () => {
    const { account, open, openFails } = pf4Desk();
    const login = account();
    // 10 points under the ask (1.1001), over the ask, over the bid (1.1) and under the bid.
    expect(open(login, { tradeCommand: 'BuyLimit', price: 1.1 }).openPrice).toBe(1.1);
    expect(open(login, { tradeCommand: 'BuyStop', price: 1.1002 }).openPrice).toBe(1.1002);
    expect(open(login, { tradeCommand: 'SellLimit', price: 1.1001 }).openPrice).toBe(1.1001);
    expect(open(login, { tradeCommand: 'SellStop', price: 1.0999 }).openPrice).toBe(1.0999);
    expect(openFails(login, { tradeCommand: 'BuyLimit', price: 1.10001 })).toEqual({
      code: R.TradeBadStops,
      message: 'price 1.10001 is closer to the market than the stops level',
    });
    expect(openFails(login, { tradeCommand: 'SellStop', price: 1.09991 }).code).toBe(R.TradeBadStops);
    expect(openFails(login, { tradeCommand: 'SellLimit', price: 1.0999 })).toEqual({
      code: R.TradeBadPrices,
      message: 'price 1.0999 is on the wrong side of the market for SellLimit',
    });
    expect(openFails(login, { tradeCommand: 'BuyStop', price: 1.1001 }).code).toBe(R.TradeBadPrices);
    expect(openFails(login, { tradeCommand: 'BuyLimit', price: 1.1001 }).code).toBe(R.TradeBadPrices);
    expect(openFails(login, { tradeCommand: 'SellStop', price: 1.1 }).code).toBe(R.TradeBadPrices);
  });

  it('sets stops exactly the stops level from the closing price, and refuses negative ones', () => {
    const { account, open, openFails } = pf4Desk();
    const login = account();
    expect(open(login, { sl: 1.0999, tp: 1.1001 })).toMatchObject({ sl: 1.0999, tp: 1.1001 });
    expect(open(login, { tradeCommand: 'Sell', sl: 1.1002, tp: 1.1 })).toMatchObject({ sl: 1.1002, tp: 1.1 });
    expect(openFails(login, { tradeCommand: 'Sell', sl: 1.10019 })).toEqual({
      code: R.TradeBadStops,
      message: 'sl 1.10019 is too close to 1.1001 (stops level 10 points)',
    });
    expect(openFails(login, { tradeCommand: 'Sell', tp: 1.10001 })).toEqual({
      code: R.TradeBadStops,
      message: 'tp 1.10001 is too close to 1.1001 (stops level 10 points)',
    });
    expect(openFails(login, { sl: -1 })).toEqual({
      code: R.TradeBadStops,
      message: 'sl -1 is too close to 1.1 (stops level 10 points)',
    });
    expect(openFails(login, { tp: -1 })).toEqual({
      code: R.TradeBadStops,
      message: 'tp -1 is too close to 1.1 (stops level 10 points)',
    });
    expect(openFails(login, { tradeCommand: 'Sell', tp: -1 })).toEqual({
      code: R.TradeBadStops,
      message: 'tp -1 is too close to 1.1001 (stops level 10 points)',
    });
  });
});

describe('TradeCheckStops', () => {
  it('modifies stops, refuses it inside the freeze level and checks stops with TradeCheckStops', () => {
    const { h, login, open } = pf4Trader();
    const trade = open({});
    const modified = h.call('TradeTransaction', {
      tradeTransactionType: 'BrOrderModify',
      order: trade.order,
      sl: 1.099,
      tp: 1.102,
    });
    expect(modified).toMatchObject({ sl: 1.099, tp: 1.102 });
    h.call('CfgUpdateSymbol', { symbol: 'EURUSD', record: { freezeLevel: 200 } });
    expect(
      h.fails('TradeTransaction', { tradeTransactionType: 'BrOrderModify', order: trade.order, sl: 1.0985 }).code,
    ).toBe(R.TradeModifyDenied);
    const check = {
      tradeTransactionType: 'BrOrderOpen',
      orderBy: login,
      symbol: 'EURUSD',
      tradeCommand: 'Buy',
      volume: 100,
    };
    expect(h.call('TradeCheckStops', { record: { ...check, sl: 1.09 } })).toBe(true);
    // The query price is the market: a buy's stop loss is measured from the bid, half the spread under it.
    expect(h.fails('TradeCheckStops', { price: 1.0901, record: { ...check, sl: 1.09 } })).toEqual({
      code: R.TradeBadStops,
      message: 'sl 1.09 is too close to 1.09005 (stops level 10 points)',
    });
    expect(h.call('TradeCheckStops', { price: 1.0912, record: { ...check, sl: 1.09 } })).toBe(true);
  });

  it("checks a pending order's stops from its open price and its open price from the reference price", () => {
    const { h, login } = pf4Trader();
    const limit = {
      tradeTransactionType: 'BrOrderOpen',
      orderBy: login,
      symbol: 'EURUSD',
      tradeCommand: 'BuyLimit',
      volume: 100,
      price: 1.099,
    };
    // Stops 10 points (the stops level) or more from 1.099 pass, wherever the market is.
    expect(h.call('TradeCheckStops', { record: { ...limit, sl: 1.0985, tp: 1.1 } })).toBe(true);
    expect(h.call('TradeCheckStops', { price: 1.1, record: { ...limit, sl: 1.098, tp: 1.0991 } })).toBe(true);
    expect(h.fails('TradeCheckStops', { price: 1.1, record: { ...limit, sl: 1.09895 } })).toEqual({
      code: R.TradeBadStops,
      message: 'sl 1.09895 is too close to 1.099 (stops level 10 points)',
    });
    expect(h.fails('TradeCheckStops', { price: 1.1, record: { ...limit, tp: 1.09905 } })).toEqual({
      code: R.TradeBadStops,
      message: 'tp 1.09905 is too close to 1.099 (stops level 10 points)',
    });
    // The open price against the reference: the ask is 1.09907 at 1.09902, 0.7 points above a buy limit at 1.099.
    expect(h.fails('TradeCheckStops', { price: 1.09902, record: { ...limit, sl: 1.098 } })).toEqual({
      code: R.TradeBadStops,
      message: 'price 1.099 is closer to the market than the stops level',
    });
    expect(h.fails('TradeCheckStops', { price: 1.0985, record: limit })).toEqual({
      code: R.TradeBadPrices,
      message: 'price 1.099 is on the wrong side of the market for BuyLimit',
    });
    expect(h.call('TradeCheckStops', { price: 1.0992, record: limit })).toBe(true);
    const soon = new Date(Date.now() + 60_000).toISOString();
    expect(h.fails('TradeCheckStops', { record: { ...limit, expiration: soon } })).toEqual({
      code: R.TradeExpirationDenied,
      message: 'expiration must be at least 10 minutes ahead',
    });
    const { price: _price, ...unpriced } = limit;
    expect(h.fails('TradeCheckStops', { record: unpriced })).toEqual({
      code: R.InvalidData,
      message: 'record.price is required for a pending order',
    });
    expect(h.fails('TradeCheckStops', { record: { ...limit, symbol: '' } })).toEqual({
      code: R.InvalidData,
      message: 'record.symbol must be a non-empty string',
    });
    expect(h.fails('TradeCheckStops', { price: 'market', record: limit })).toEqual({
      code: R.InvalidData,
      message: 'price must be a number',
    });
    expect(h.fails('TradeCheckStops', limit)).toEqual({ code: R.InvalidData, message: 'record must be an object' });
    // A check opens nothing.
    expect(h.call('TradesUserRequest', { login })).toEqual([]);
  });

  it('names an unknown symbol, and a symbol whose configuration was deleted', () => {
    const { h, account } = pf4Desk();
    const check = (symbol: string) =>
      h.fails('TradeCheckStops', {
        record: {
          tradeTransactionType: 'BrOrderOpen',
          orderBy: account(),
          symbol,
          tradeCommand: 'BuyLimit',
          volume: 100,
          price: 1,
        },
      });
    expect(check('NOPE')).toEqual({ code: R.InvalidData, message: 'symbol NOPE not found' });
    // The feed still quotes a deleted symbol; without its configuration there is nothing to check against.
    h.call('CfgDeleteSymbol', { pos: h.world.symbols.indexOf('GBPUSD') });
    expect(h.world.feed.quote('GBPUSD')).toBeDefined();
    expect(check('GBPUSD')).toEqual({ code: R.InvalidData, message: 'symbol GBPUSD not found' });
  });

  it("checks a pending order's expiration from 10 minutes ahead on, and takes a time not after 1970 for none", () => {
    const { h, account } = pf4Desk();
    const limit = {
      tradeTransactionType: 'BrOrderOpen',
      orderBy: account(),
      symbol: 'EURUSD',
      tradeCommand: 'SellLimit',
      volume: 100,
      price: 1.102,
    };
    expect(h.fails('TradeCheckStops', { record: { ...limit, expiration: at(T0 + 10 * MINUTE - 1000) } })).toEqual({
      code: R.TradeExpirationDenied,
      message: 'expiration must be at least 10 minutes ahead',
    });
    expect(h.call('TradeCheckStops', { record: { ...limit, expiration: at(T0 + 10 * MINUTE) } })).toBe(true);
    expect(h.call('TradeCheckStops', { record: { ...limit, expiration: '1970-01-01T00:00:00Z' } })).toBe(true);
    expect(h.call('TradeCheckStops', { record: limit })).toBe(true);
  });

  it("needs a pending order's price when the engine is asked directly", () => {
    const { h, account } = pf4Desk();
    expect(() =>
      h.world.engine.checkRequestStops(
        {
          login: account(),
          symbol: 'EURUSD',
          command: 'SellStop',
          volume: 100,
          sl: 0,
          tp: 0,
          comment: '',
          reason: 'Dealer',
        },
        undefined,
      ),
    ).toThrow('price is required for a pending order');
  });
});

describe('unknown tickets and accounts', () => {
  it('names the order a transaction cannot find and the login a balance check cannot find', () => {
    const { h, txFails } = pf4Desk();
    for (const type of ['BrOrderClose', 'BrOrderModify', 'BrOrderDelete', 'BrOrderActivate']) {
      expect(txFails(type, { order: 99 }), type).toEqual({ code: R.InvalidData, message: 'order 99 not found' });
    }
    expect(h.fails('AdmBalanceCheck', { login: 42 })).toEqual({ code: R.InvalidData, message: 'login 42 not found' });
  });
});

describe('the freeze level', () => {
  /** EURUSD at 1.10000/1.10100 (a 100-point spread) with a freeze level of 100 points (0.001). */
  function frozen() {
    const s = pf4Desk();
    const login = s.account();
    const orders = {
      buyLimit: s.open(login, { tradeCommand: 'BuyLimit', price: 1.0995 }),
      buyStop: s.open(login, { tradeCommand: 'BuyStop', price: 1.1015 }),
      sellLimit: s.open(login, { tradeCommand: 'SellLimit', price: 1.1015 }),
      sellStop: s.open(login, { tradeCommand: 'SellStop', price: 1.0995 }),
    };
    s.tick(1.1, 1.101);
    s.symbol('EURUSD', { freezeLevel: 100 });
    return { ...s, login, orders };
  }

  it('measures buy orders from the ask: a buy limit 15 points under it may move, a buy stop 5 points over it may not', () => {
    const { tx, txFails, orders } = frozen();
    expect(tx('BrOrderModify', { order: orders.buyLimit.order, sl: 1.099 })).toMatchObject({ sl: 1.099 });
    expect(txFails('BrOrderModify', { order: orders.buyStop.order, sl: 1.1 })).toEqual({
      code: R.TradeModifyDenied,
      message: `order ${orders.buyStop.order} is frozen: price within the freeze level`,
    });
  });

  it('measures sell orders from the bid: a sell limit 15 points over it may move, a sell stop 5 points under it may not', () => {
    const { tx, txFails, orders } = frozen();
    expect(tx('BrOrderModify', { order: orders.sellLimit.order, sl: 1.103 })).toMatchObject({ sl: 1.103 });
    expect(txFails('BrOrderModify', { order: orders.sellStop.order, sl: 1.1 }).code).toBe(R.TradeModifyDenied);
  });

  it("measures a market trade's stops from the price it would close at: a buy's from the bid, a sell's from the ask", () => {
    const { account, open, tx, txFails, symbol } = pf4Desk();
    const login = account();
    // With a freeze level of 100 points (0.001) and the market at 1.10000/1.10010:
    const buyNear = open(login, { sl: 1.09905 }); // 9.5 points under the bid, 10.5 under the ask
    const buyFar = open(login, { sl: 1.09895 });
    const sellNear = open(login, { tradeCommand: 'Sell', sl: 1.10105 }); // 9.5 points over the ask, 10.5 over the bid
    const sellFar = open(login, { tradeCommand: 'Sell', sl: 1.10115 });
    symbol('EURUSD', { freezeLevel: 100 });
    expect(txFails('BrOrderModify', { order: buyNear.order, tp: 1.11 }).code).toBe(R.TradeModifyDenied);
    expect(txFails('BrOrderModify', { order: sellNear.order, tp: 1.09 }).code).toBe(R.TradeModifyDenied);
    expect(tx('BrOrderModify', { order: buyFar.order, tp: 1.11 }).tp).toBe(1.11);
    expect(tx('BrOrderModify', { order: sellFar.order, tp: 1.09 }).tp).toBe(1.09);
  });

  it('freezes a market trade whose take profit is near the closing price, not one whose take profit is far', () => {
    const { account, open, tx, txFails, symbol } = pf4Desk();
    const login = account();
    const near = open(login, { tp: 1.1005 });
    const far = open(login, { tp: 1.11 });
    symbol('EURUSD', { freezeLevel: 100 });
    expect(txFails('BrOrderModify', { order: near.order, sl: 1.09 })).toEqual({
      code: R.TradeModifyDenied,
      message: `order ${near.order} is frozen: a stop is within the freeze level`,
    });
    expect(tx('BrOrderModify', { order: far.order, sl: 1.09 })).toMatchObject({ sl: 1.09, tp: 1.11 });
  });
});
