/**
 * The PF5 engine's rules, each pinned to exact values: what a dealer request is refused for (unknown login, symbol or
 * position, trade mode, trade sessions, volume, stops level, pending price side, margin) with its result code and
 * message; balance and credit deals; the records a fill writes (deal, position, history order) and the events it
 * announces; pending fills at their exact trigger, expiry and rejection; stop-loss and take-profit closes;
 * commissions; margin in the margin or profit currency; swaps; the batch deletes; and the margin-call states.
 * Time is fixed (fake Date) and every engine call that takes `now` is given one.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PF5_RESULT as R } from '../../shared/resultCodes.js';
import { cents, iso } from '../world/people.js';
import { CommandError } from '../world/commandError.js';
import { pf5Harness } from '../../test/support/sim/worldHarness.js';
import type { DealerRequest } from './pf5Engine.js';

/** Tuesday 6 January 2026, 10:00 UTC. */
const T = Date.UTC(2026, 0, 6, 10, 0, 0);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: T });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Runs an engine call that must fail; answers its code and message. */
function refused(run: () => unknown): { code: number; message: string } {
  try {
    run();
  } catch (err) {
    if (err instanceof CommandError) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error('the call unexpectedly succeeded');
}

/** An empty server with fixed quotes and one funded account of `group`. */
function account(group = 'demo\\retail', deposit = 10_000, leverage = 100) {
  const h = pf5Harness({ accounts: 0, trades: 0, orders: 0 });
  const tick = (symbol: string, bid: number, ask: number, now = T) => h.world.feed.inject(symbol, bid, ask, now);
  tick('EURUSD', 1.1, 1.1001);
  tick('GBPUSD', 1.25, 1.2502);
  tick('USDJPY', 150, 150.02);
  tick('EURGBP', 0.85, 0.8501);
  tick('XAUUSD', 2000, 2000.5);
  const add = (g: string, amount: number) => {
    const login = h.call('UserAdd', { record: { group: g, leverage, firstName: 'Rita' } }).login as number;
    if (amount) h.world.engine.balance(login, 'Balance', amount, 'deposit', T);
    return login;
  };
  const login = add(group, deposit);
  const request = (fields: Partial<DealerRequest>): DealerRequest => ({
    login,
    symbol: 'EURUSD',
    type: 'Buy',
    volume: 10_000,
    priceSL: 0,
    priceTP: 0,
    comment: '',
    ...fields,
  });
  const send = (fields: Partial<DealerRequest> = {}, now = T) => h.world.engine.send(request(fields), now);
  const fails = (fields: Partial<DealerRequest> = {}, now = T) =>
    refused(() => h.world.engine.send(request(fields), now));
  const symbol = (name: string) => h.world.symbolRecord(name)!;
  const history = (order: number) => h.world.engine.historyOrders.get(order);
  h.events.length = 0;
  return { h, login, add, send, fails, tick, symbol, history, engine: h.world.engine };
}

const kinds = (events: Array<{ kind: string; op: string }>) => events.map((e) => `${e.kind} ${e.op}`);

describe('a dealer request is refused', () => {
  it('for an unknown login, naming it', () => {
    const { fails } = account();
    expect(fails({ login: 123 })).toEqual({ code: R.ErrNotfound, message: 'login 123 not found' });
  });

  it('for a symbol the server lacks, has no quote or instrument for, or has no settings for', () => {
    const { h, fails, symbol } = account();
    expect(fails({ symbol: 'NOPE' })).toEqual({ code: R.ErrNotfound, message: 'symbol NOPE not found' });
    // Settings without an instrument or quote.
    h.world.symbols.push({ ...symbol('EURUSD'), symbol: 'FAKE1' });
    expect(fails({ symbol: 'FAKE1' })).toEqual({ code: R.ErrNotfound, message: 'symbol FAKE1 not found' });
    // Settings and an instrument without a quote.
    h.world.symbols.push({ ...symbol('EURUSD'), symbol: 'FAKE2' });
    h.world.instrumentBySymbol.set('FAKE2', { ...h.world.instrumentBySymbol.get('EURUSD')!, symbol: 'FAKE2' });
    expect(fails({ symbol: 'FAKE2' })).toEqual({ code: R.ErrNotfound, message: 'symbol FAKE2 not found' });
    // Settings and a quote without an instrument.
    h.world.instrumentBySymbol.delete('USDJPY');
    expect(fails({ symbol: 'USDJPY' })).toEqual({ code: R.ErrNotfound, message: 'symbol USDJPY not found' });
    // An instrument with a quote but without settings.
    h.world.symbols = h.world.symbols.filter((s) => s.symbol !== 'GBPUSD');
    expect(fails({ symbol: 'GBPUSD' })).toEqual({ code: R.ErrNotfound, message: 'symbol GBPUSD not found' });
    expect(h.world.positions.size).toBe(0);
  });

  it('when trading the symbol is disabled', () => {
    const { h, fails } = account();
    h.call('SymbolRecord', { symbol: 'EURUSD', patch: { tradeMode: 'Disabled' } });
    expect(fails()).toEqual({ code: R.TradeOrderProhibited, message: 'trading EURUSD is disabled' });
    expect(fails({ type: 'BuyLimit', price: 1.09 })).toEqual({
      code: R.TradeOrderProhibited,
      message: 'trading EURUSD is disabled',
    });
  });

  it('for a volume below the minimum, above the maximum, off the step or not whole, and takes both ends of the range', () => {
    const { h, send, fails, add, symbol } = account();
    const rule = { code: R.ErrParams, message: 'volume must be between 100 and 1000000 in steps of 100 (1/10000 lot)' };
    expect(fails({ volume: 0 })).toEqual(rule);
    expect(fails({ volume: 1_000_100 })).toEqual(rule);
    expect(fails({ volume: 150 })).toEqual(rule);
    expect(send({ volume: 100 })).toMatchObject({ position: expect.any(Number) });
    const rich = add('demo\\retail', 200_000);
    // 100 lots of USDJPY hold 100 000 USD of margin at leverage 100.
    expect(
      h.world.engine.send(
        { login: rich, symbol: 'USDJPY', type: 'Buy', volume: 1_000_000, priceSL: 0, priceTP: 0, comment: '' },
        T,
      ),
    ).toMatchObject({ position: expect.any(Number) });
    expect(h.world.engine.account(rich).margin).toBe(100_000);
    // With a fractional step only a whole volume is still refused.
    Object.assign(symbol('EURUSD'), { volumeStep: 0.5 });
    expect(fails({ volume: 100.5 })).toEqual({
      code: R.ErrParams,
      message: 'volume must be between 100 and 1000000 in steps of 0.5 (1/10000 lot)',
    });
    expect(send({ volume: 101 }).deal).toBeGreaterThan(0);
    // Steps count from the minimum.
    Object.assign(symbol('EURUSD'), { volumeMin: 30, volumeStep: 100 });
    expect(fails({ volume: 100 })).toEqual({
      code: R.ErrParams,
      message: 'volume must be between 30 and 1000000 in steps of 100 (1/10000 lot)',
    });
    expect(send({ volume: 130 }).deal).toBeGreaterThan(0);
  });

  it("for a position that does not exist, is another account's or another symbol's, trades the same way, or is smaller", () => {
    const { h, send, fails, add } = account();
    const eur = send().position!;
    const gold = send({ symbol: 'XAUUSD', volume: 100 }).position!;
    const other = add('demo\\retail', 10_000);
    const theirs = h.world.engine.send(
      { login: other, symbol: 'EURUSD', type: 'Buy', volume: 10_000, priceSL: 0, priceTP: 0, comment: '' },
      T,
    ).position!;
    expect(fails({ type: 'Sell', position: 999 })).toEqual({ code: R.ErrNotfound, message: 'position 999 not found' });
    expect(fails({ type: 'Sell', position: theirs })).toEqual({
      code: R.ErrNotfound,
      message: `position ${theirs} not found`,
    });
    expect(fails({ type: 'Sell', position: gold })).toEqual({
      code: R.ErrNotfound,
      message: `position ${gold} not found`,
    });
    expect(fails({ type: 'Buy', position: eur })).toEqual({
      code: R.ErrParams,
      message: 'a close must trade against the position',
    });
    expect(fails({ type: 'Sell', volume: 10_100, position: eur })).toEqual({
      code: R.ErrParams,
      message: `volume exceeds position ${eur}`,
    });
    expect(send({ type: 'Sell', volume: 10_000, position: eur })).toMatchObject({ position: eur });
    expect(h.world.positions.has(eur)).toBe(false);
  });

  it('for a pending order without a price or on the wrong side of the market', () => {
    const { h, fails, send } = account();
    expect(fails({ type: 'BuyLimit' })).toEqual({
      code: R.ErrParams,
      message: 'price is required for a pending order',
    });
    h.call('SymbolUpdate', { symbol: 'EURUSD', record: { stopsLevel: 0 } });
    // bid 1.1, ask 1.1001: a price at the market is on the wrong side for every pending type.
    expect(fails({ type: 'BuyLimit', price: 1.1001 })).toEqual({
      code: R.ErrParams,
      message: 'price 1.1001 is on the wrong side of the market',
    });
    expect(fails({ type: 'BuyStop', price: 1.1001 })).toEqual({
      code: R.ErrParams,
      message: 'price 1.1001 is on the wrong side of the market',
    });
    expect(fails({ type: 'SellLimit', price: 1.1 })).toEqual({
      code: R.ErrParams,
      message: 'price 1.1 is on the wrong side of the market',
    });
    expect(fails({ type: 'SellStop', price: 1.1 })).toEqual({
      code: R.ErrParams,
      message: 'price 1.1 is on the wrong side of the market',
    });
    expect(h.world.orders.size).toBe(0);
    // One point inside is accepted, and the price is rounded to the symbol's digits.
    const placed = [
      send({ type: 'BuyLimit', price: 1.1000049 }),
      send({ type: 'BuyStop', price: 1.10011 }),
      send({ type: 'SellLimit', price: 1.10001 }),
      send({ type: 'SellStop', price: 1.09999 }),
    ].map((r) => h.world.orders.get(r.order)!.priceOrder);
    expect(placed).toEqual([1.1, 1.10011, 1.10001, 1.09999]);
  });
});

describe('trade modes', () => {
  it('short-only takes sells, and a buy only when it closes a sell', () => {
    const { h, send, fails } = account();
    h.call('SymbolRecord', { symbol: 'EURUSD', patch: { tradeMode: 'ShortOnly' } });
    expect(fails()).toEqual({ code: R.TradeOrderProhibited, message: 'EURUSD: only sell orders are accepted' });
    expect(fails({ type: 'BuyLimit', price: 1.09 })).toEqual({
      code: R.TradeOrderProhibited,
      message: 'EURUSD: only sell orders are accepted',
    });
    const short = send({ type: 'Sell' }).position!;
    expect(send({ type: 'Buy', position: short })).toMatchObject({ position: short });
    expect(h.world.positions.size).toBe(0);
  });

  it('long-only takes a sell that closes a buy', () => {
    const { h, send, fails } = account();
    const long = send().position!;
    h.call('SymbolRecord', { symbol: 'EURUSD', patch: { tradeMode: 'LongOnly' } });
    expect(fails({ type: 'Sell' })).toEqual({
      code: R.TradeOrderProhibited,
      message: 'EURUSD: only buy orders are accepted',
    });
    expect(send({ type: 'Sell', position: long })).toMatchObject({ position: long });
    expect(h.world.positions.size).toBe(0);
  });

  it('close-only takes on a netting account only a market order against the position no larger than it', () => {
    const { h, send, fails, login } = account('demo\\netting');
    send({ volume: 20_000 });
    h.call('SymbolRecord', { symbol: 'EURUSD', patch: { tradeMode: 'CloseOnly' } });
    const closeOnly = { code: R.TradeOrderProhibited, message: 'EURUSD: only closing orders are accepted' };
    expect(fails({ type: 'Sell', volume: 20_100 })).toEqual(closeOnly);
    expect(fails({ type: 'SellLimit', volume: 10_000, price: 1.11 })).toEqual(closeOnly);
    expect(fails({ type: 'Buy' })).toEqual(closeOnly);
    send({ type: 'Sell', volume: 10_000 });
    expect(h.world.positionsOf(login).map((p) => p.volume)).toEqual([10_000]);
    send({ type: 'Sell', volume: 10_000 });
    expect(h.world.positionsOf(login)).toEqual([]);
  });

  it('close-only takes on a hedging account only a close that names the position', () => {
    const { h, send, fails } = account();
    const long = send().position!;
    h.call('SymbolRecord', { symbol: 'EURUSD', patch: { tradeMode: 'CloseOnly' } });
    expect(fails({ type: 'Sell' })).toEqual({
      code: R.TradeOrderProhibited,
      message: 'EURUSD: only closing orders are accepted',
    });
    expect(send({ type: 'Sell', position: long }).position).toBe(long);
  });
});

describe('trade sessions', () => {
  it('name the weekday of a closed market, every day of the week', () => {
    const { fails, symbol } = account();
    Object.assign(symbol('EURUSD'), { sessionTrade: Array.from({ length: 7 }, () => []) });
    const days = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
    // 4 January 2026 is a Sunday.
    days.forEach((day, i) => {
      expect(fails({}, Date.UTC(2026, 0, 4 + i, 12))).toEqual({
        code: R.TradeOrderProhibited,
        message: `EURUSD: the market is closed (trade sessions of ${day})`,
      });
    });
  });

  it("open at the window's first minute and close at its last, and a window without an end never opens", () => {
    const { send, fails, symbol } = account();
    const day = Date.UTC(2026, 0, 6);
    Object.assign(symbol('EURUSD'), { sessionTrade: Array.from({ length: 7 }, () => [{ open: 60, close: 120 }]) });
    expect(fails({}, day + 59 * 60_000).message).toBe('EURUSD: the market is closed (trade sessions of Tuesday)');
    expect(send({}, day + 60 * 60_000).deal).toBeGreaterThan(0);
    expect(send({}, day + 119 * 60_000).deal).toBeGreaterThan(0);
    expect(fails({}, day + 120 * 60_000).message).toBe('EURUSD: the market is closed (trade sessions of Tuesday)');
    // Without an opening minute the window opens at midnight; without a closing one it is empty.
    Object.assign(symbol('EURUSD'), { sessionTrade: Array.from({ length: 7 }, () => [{ close: 30 }]) });
    expect(send({}, day).deal).toBeGreaterThan(0);
    expect(fails({}, day + 30 * 60_000).code).toBe(R.TradeOrderProhibited);
    Object.assign(symbol('EURUSD'), { sessionTrade: Array.from({ length: 7 }, () => [{ open: 0 }]) });
    expect(fails({}, day).code).toBe(R.TradeOrderProhibited);
  });

  it("do not restrict a symbol without sessions or without the weekday's entry", () => {
    const { send, symbol } = account();
    Object.assign(symbol('EURUSD'), { sessionTrade: undefined });
    expect(send().deal).toBeGreaterThan(0);
    Object.assign(symbol('EURUSD'), { sessionTrade: [] });
    expect(send().deal).toBeGreaterThan(0);
  });
});

describe('stops level', () => {
  it("keeps a sell's take-profit the stops level below the ask, and accepts it exactly there", () => {
    const { h, send, fails } = account();
    // ask 1.1001 less 10 points of 0.00001.
    expect(fails({ type: 'Sell', priceTP: 1.10005 })).toEqual({
      code: R.ErrParams,
      message: 'priceTP must be at most 1.1 (stops level 10 points)',
    });
    expect(fails({ type: 'Sell', priceTP: 1.10005, priceSL: 1.2 }).message).toBe(
      'priceTP must be at most 1.1 (stops level 10 points)',
    );
    const { position } = send({ type: 'Sell', priceTP: 1.1, priceSL: 1.1002 });
    expect(h.world.positions.get(position!)).toMatchObject({ priceTP: 1.1, priceSL: 1.1002 });
  });

  it("measures a pending order's stops from its own price", () => {
    const { h, send, fails } = account();
    expect(fails({ type: 'BuyLimit', price: 1.09, priceSL: 1.08995 })).toEqual({
      code: R.ErrParams,
      message: 'priceSL must be at most 1.0899 (stops level 10 points)',
    });
    expect(fails({ type: 'BuyLimit', price: 1.09, priceTP: 1.09005 })).toEqual({
      code: R.ErrParams,
      message: 'priceTP must be at least 1.0901 (stops level 10 points)',
    });
    expect(fails({ type: 'SellLimit', price: 1.11, priceSL: 1.11005 })).toEqual({
      code: R.ErrParams,
      message: 'priceSL must be at least 1.1101 (stops level 10 points)',
    });
    expect(fails({ type: 'SellLimit', price: 1.11, priceTP: 1.10995 })).toEqual({
      code: R.ErrParams,
      message: 'priceTP must be at most 1.1099 (stops level 10 points)',
    });
    const buy = send({ type: 'BuyLimit', price: 1.09, priceSL: 1.0899, priceTP: 1.0901 });
    const sell = send({ type: 'SellLimit', price: 1.11, priceSL: 1.1101, priceTP: 1.1099 });
    expect(h.world.orders.get(buy.order)).toMatchObject({ priceSL: 1.0899, priceTP: 1.0901 });
    expect(h.world.orders.get(sell.order)).toMatchObject({ priceSL: 1.1101, priceTP: 1.1099 });
  });

  it('keeps a pending price the stops level from the side it fills on, and accepts it exactly there', () => {
    const { h, send, fails } = account();
    expect(fails({ type: 'BuyLimit', price: 1.10001 })).toEqual({
      code: R.ErrParams,
      message: 'price must be at least 10 points from the market (1.1001)',
    });
    expect(fails({ type: 'BuyStop', price: 1.10019 })).toEqual({
      code: R.ErrParams,
      message: 'price must be at least 10 points from the market (1.1001)',
    });
    expect(fails({ type: 'SellLimit', price: 1.10009 })).toEqual({
      code: R.ErrParams,
      message: 'price must be at least 10 points from the market (1.1)',
    });
    expect(fails({ type: 'SellStop', price: 1.09991 })).toEqual({
      code: R.ErrParams,
      message: 'price must be at least 10 points from the market (1.1)',
    });
    const placed = [
      send({ type: 'BuyLimit', price: 1.1 }),
      send({ type: 'BuyStop', price: 1.1002 }),
      send({ type: 'SellLimit', price: 1.1001 }),
      send({ type: 'SellStop', price: 1.0999 }),
    ];
    expect(placed.map((r) => h.world.orders.get(r.order)!.priceOrder)).toEqual([1.1, 1.1002, 1.1001, 1.0999]);
  });

  it('with a zero stops level lets stops sit at the closing price, and a tick there closes at the stop loss', () => {
    const { h, send, tick, login } = account();
    h.call('SymbolUpdate', { symbol: 'EURUSD', record: { stopsLevel: 0 } });
    const { position } = send({ priceSL: 1.1, priceTP: 1.1 });
    expect(h.world.positions.get(position!)).toMatchObject({ priceSL: 1.1, priceTP: 1.1 });
    tick('EURUSD', 1.1, 1.1001, T + 1000);
    expect(h.world.positionsOf(login)).toEqual([]);
    expect(h.world.deals.values().at(-1)).toMatchObject({
      reason: 'Sl',
      entry: 'Out',
      price: 1.1,
      profit: -10,
      positionID: position,
    });
  });
});

describe('balance and credit deals', () => {
  it('are refused for an unknown login and for an amount that is zero or not a finite number', () => {
    const { engine, login } = account();
    expect(refused(() => engine.balance(77, 'Balance', 10, '', T))).toEqual({
      code: R.ErrNotfound,
      message: 'login 77 not found',
    });
    for (const amount of [0, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(refused(() => engine.balance(login, 'Balance', amount, '', T))).toEqual({
        code: R.ErrParams,
        message: 'amount must be a non-zero number',
      });
    }
  });

  it('write the deal, then the account, and a default comment by the sign of the amount', () => {
    const { h, engine, login } = account();
    const deal = engine.balance(login, 'Balance', 250.5, '', T + 5000);
    expect(deal).toEqual({
      deal: deal.deal,
      externalID: '',
      dealer: 0,
      digitsCurrency: 2,
      priceSL: 0,
      priceTP: 0,
      volumeClosed: 0,
      storage: 0,
      commission: 0,
      fee: 0,
      rateProfit: 1,
      rateMargin: 1,
      expertID: 0,
      login,
      action: 'Balance',
      entry: 'In',
      digits: 0,
      contractSize: 0,
      time: iso(T + 5000),
      symbol: '',
      price: 0,
      volume: 0,
      profit: 250.5,
      positionID: 0,
      order: 0,
      comment: 'Deposit',
      reason: 'Dealer',
    });
    expect(kinds(h.events)).toEqual(['deals add', 'users update']);
    expect(h.events[0].record).toBe(deal);
    expect(h.events[1].record).toMatchObject({ login, balance: 10_250.5, credit: 0 });
    expect(engine.balance(login, 'Balance', -50, '', T).comment).toBe('Withdrawal');
    expect(engine.balance(login, 'Balance', -50, 'to bank', T).comment).toBe('to bank');
    expect(h.world.users.get(login)!.balance).toBe(10_150.5);
  });

  it('let a withdrawal take the whole free margin but not a cent more, announcing the margin call it causes', () => {
    const { h, engine, login, send } = account();
    send();
    // Equity 9 990 (the spread), margin 1 100.05: free 8 889.95.
    expect(engine.account(login).marginFree).toBe(8889.95);
    h.events.length = 0;
    expect(refused(() => engine.balance(login, 'Balance', -8889.96, '', T))).toEqual({
      code: R.TradeMaxMoney,
      message: 'not enough free margin',
    });
    expect(h.events).toEqual([]);
    engine.balance(login, 'Balance', -8889.95, '', T + 1000);
    expect(h.world.users.get(login)!.balance).toBe(1110.05);
    expect(kinds(h.events)).toEqual(['deals add', 'users update', 'margin add']);
    expect(h.events[2].record).toEqual({
      login,
      group: 'demo\\retail',
      type: 'MarginCall',
      direction: 'Enter',
      time: iso(T + 1000),
      marginLevel: 100,
      equity: 1100.05,
      margin: 1100.05,
    });
    expect(engine.marginStateOf(login)).toBe('MarginCall');
  });

  it('move the credit, not the balance, and never below zero', () => {
    const { h, engine, login } = account();
    const given = engine.balance(login, 'Credit', 500, '', T);
    expect(given).toMatchObject({ action: 'Credit', profit: 500, comment: 'Deposit' });
    expect(h.world.users.get(login)).toMatchObject({ balance: 10_000, credit: 500 });
    expect(refused(() => engine.balance(login, 'Credit', -500.01, '', T))).toEqual({
      code: R.TradeMaxMoney,
      message: 'not enough credit',
    });
    expect(engine.balance(login, 'Credit', -500, 'bonus ends', T)).toMatchObject({
      action: 'Credit',
      profit: -500,
      comment: 'bonus ends',
    });
    expect(h.world.users.get(login)).toMatchObject({ balance: 10_000, credit: 0 });
    expect(engine.account(login)).toMatchObject({ balance: 10_000, credit: 0, equity: 10_000 });
  });
});

describe('account figures', () => {
  it('of an account without positions: no margin and a zero margin level', () => {
    const { engine, login } = account();
    expect(engine.account(login)).toEqual({
      login,
      balance: 10_000,
      credit: 0,
      equity: 10_000,
      margin: 0,
      marginFree: 10_000,
      marginLevel: 0,
      profit: 0,
      storage: 0,
    });
    expect(refused(() => engine.account(77))).toEqual({ code: R.ErrNotfound, message: 'login 77 not found' });
  });

  it('sum forex margin on the base currency and metal margin on the notional at the open price', () => {
    const { engine, login, send } = account();
    send();
    send({ symbol: 'XAUUSD', type: 'Sell', volume: 1_000 });
    // EURUSD: 1 000 EUR at the mid 1.10005; XAUUSD: 0.1 lot × 100 oz × 2 000 / 100. Results: -10 and -5.
    expect(engine.account(login)).toEqual({
      login,
      balance: 10_000,
      credit: 0,
      equity: 9985,
      margin: 1300.05,
      marginFree: 8684.95,
      marginLevel: 768.05,
      profit: -15,
      storage: 0,
    });
  });

  it("convert a cross's margin and result to USD through the USD pair quoted either way round", () => {
    const cross = account();
    cross.send({ symbol: 'EURGBP' });
    // Margin 1 000 EUR at EURUSD's mid; result -10 GBP at GBPUSD's mid 1.2501.
    expect(cross.engine.account(cross.login)).toMatchObject({ margin: 1100.05, profit: -12.5, equity: 9987.5 });
    const yen = account();
    yen.send({ symbol: 'USDJPY' });
    // Margin 1 000 USD; result -2 000 JPY at USDJPY's mid 150.01.
    expect(yen.engine.account(yen.login)).toMatchObject({ margin: 1000, profit: -13.33, equity: 9986.67 });
  });

  it('take a leverage below one as one', () => {
    const { h, engine, login, send } = account();
    h.world.users.set(login, { ...h.world.users.get(login)!, leverage: 0 });
    send({ symbol: 'XAUUSD', volume: 100 });
    // 0.01 lot × 100 oz × 2 000.5 at leverage 1.
    expect(engine.account(login).margin).toBe(2000.5);
  });
});

describe('a market fill', () => {
  it('writes the deal, the position and the filled order, and announces the position and the deal', () => {
    const { h, login, send, history } = account();
    const result = send({ comment: 'mine', priceSL: 1.09, priceTP: 1.12 }, T + 3000);
    const order = result.order;
    expect(result).toEqual({ order, deal: result.deal, position: order });
    const time = iso(T + 3000);
    expect(h.world.deals.get(result.deal!)).toEqual({
      deal: result.deal,
      externalID: '',
      dealer: 0,
      digitsCurrency: 2,
      priceSL: 0,
      priceTP: 0,
      volumeClosed: 0,
      storage: 0,
      commission: 0,
      fee: 0,
      rateProfit: 1,
      rateMargin: 1,
      expertID: 0,
      login,
      action: 'Buy',
      entry: 'In',
      digits: 5,
      contractSize: 100_000,
      time,
      symbol: 'EURUSD',
      price: 1.1001,
      volume: 10_000,
      profit: 0,
      positionID: order,
      order,
      comment: 'mine',
      reason: 'Dealer',
    });
    expect(h.world.positions.get(order)).toEqual({
      position: order,
      login,
      symbol: 'EURUSD',
      action: 'Buy',
      digits: 5,
      digitsCurrency: 2,
      contractSize: 100_000,
      externalId: '',
      timeCreate: time,
      timeUpdate: time,
      priceOpen: 1.1001,
      priceSL: 1.09,
      priceTP: 1.12,
      volume: 10_000,
      storage: 0,
      rateProfit: 1,
      rateMargin: 1,
      expertId: 0,
      comment: 'mine',
      reason: 'Dealer',
    });
    expect(history(order)).toEqual({
      order,
      externalID: '',
      login,
      symbol: 'EURUSD',
      digits: 5,
      digitsCurrency: 2,
      contractSize: 100_000,
      state: 'Filled',
      reason: 'Dealer',
      timeSetup: time,
      type: 'Buy',
      typeFill: 'Return',
      typeTime: 'GtC',
      priceOrder: 1.1001,
      priceTrigger: 0,
      priceSL: 1.09,
      priceTP: 1.12,
      volumeInitial: 10_000,
      volumeCurrent: 0,
      expertID: 0,
      positionID: order,
      comment: 'mine',
      timeDone: time,
    });
    // No commission in this group: the account record is not rewritten.
    expect(kinds(h.events)).toEqual(['positions add', 'deals add']);
    expect(h.events[0].record).toMatchObject({ position: order, priceCurrent: 1.1, profit: -10 });
    expect(h.world.orders.size).toBe(0);
    const sell = send({ type: 'Sell' });
    expect(h.world.positions.get(sell.position!)).toMatchObject({ action: 'Sell', priceOpen: 1.1 });
  });

  it('fills at the market whatever price the request carries', () => {
    const { h, send } = account();
    const buy = send({ price: 1.1001 });
    const sell = send({ type: 'Sell', price: 1.05 });
    expect([h.world.deals.get(buy.deal!)!.price, h.world.deals.get(sell.deal!)!.price]).toEqual([1.1001, 1.1]);
    expect(h.world.orders.size).toBe(0);
  });

  it('closes part of a hedged position, keeping the rest with a new update time', () => {
    const { h, login, send, tick } = account();
    const { position } = send({ volume: 20_000 });
    tick('EURUSD', 1.102, 1.1021, T + 1000);
    h.events.length = 0;
    const close = send({ type: 'Sell', volume: 5_000, position }, T + 2000);
    expect(close.position).toBe(position);
    expect(h.world.deals.get(close.deal!)).toMatchObject({
      entry: 'Out',
      action: 'Sell',
      price: 1.102,
      volume: 5_000,
      profit: 95,
      positionID: position,
    });
    expect(h.world.positions.get(position!)).toMatchObject({
      volume: 15_000,
      priceOpen: 1.1001,
      timeCreate: iso(T),
      timeUpdate: iso(T + 2000),
    });
    expect(kinds(h.events)).toEqual(['deals add', 'positions update', 'users update']);
    expect(h.world.users.get(login)!.balance).toBe(10_095);
    // 1 500 EUR of margin at the new mid 1.10205.
    expect(h.world.engine.account(login).margin).toBe(1653.08);
  });

  it("closes a hedged position paying its profit less the group's commission", () => {
    const { h, login, send, tick } = account('real\\retail');
    const { position } = send();
    tick('EURUSD', 1.102, 1.1021, T + 1000);
    h.events.length = 0;
    const close = send({ type: 'Sell', position }, T + 2000);
    expect(h.world.deals.get(close.deal!)).toMatchObject({ entry: 'Out', profit: 190, commission: -3.5 });
    expect(kinds(h.events)).toEqual(['deals add', 'positions delete', 'users update']);
    expect(h.events[1].record).toEqual({ position });
    // 10 000 - 3.50 to open, + 190 - 3.50 to close.
    expect(h.world.users.get(login)!.balance).toBe(10_183);
  });

  it('reverses a netting position under the same ticket, the excess opening at the fill price', () => {
    const { h, login, send } = account('demo\\netting');
    const { position } = send();
    h.events.length = 0;
    const reverse = send({ type: 'Sell', volume: 30_000 }, T + 1000);
    expect(reverse.position).toBe(position);
    expect(h.world.deals.get(reverse.deal!)).toMatchObject({
      entry: 'InOut',
      action: 'Sell',
      volume: 30_000,
      price: 1.1,
      profit: -10,
      positionID: position,
    });
    expect(kinds(h.events)).toEqual(['deals add', 'positions delete', 'positions add', 'users update']);
    expect(h.events[1].record).toEqual({ position });
    expect(h.world.positionsOf(login)).toEqual([
      expect.objectContaining({
        position,
        action: 'Sell',
        volume: 20_000,
        priceOpen: 1.1,
        timeCreate: iso(T + 1000),
      }),
    ]);
    expect(h.world.users.get(login)!.balance).toBe(9990);
    expect(h.world.engine.account(login).margin).toBe(2200.1);
  });

  it('reduces a netting position without reversing it', () => {
    const { h, login, send } = account('demo\\netting');
    const { position } = send();
    const reduce = send({ type: 'Sell', volume: 5_000 });
    expect(h.world.deals.get(reduce.deal!)).toMatchObject({ entry: 'Out', volume: 5_000, profit: -5 });
    expect(h.world.positionsOf(login)).toEqual([expect.objectContaining({ position, action: 'Buy', volume: 5_000 })]);
  });

  it('grows a netting position at the average price, charging the commission and rewriting the account only when there is one', () => {
    const free = account('demo\\netting');
    free.send();
    free.tick('EURUSD', 1.1009, 1.101, T + 1000);
    free.h.events.length = 0;
    const grow = free.send({}, T + 2000);
    expect(kinds(free.h.events)).toEqual(['positions update', 'deals add']);
    expect(free.h.world.positions.get(grow.position!)).toMatchObject({
      volume: 20_000,
      priceOpen: 1.10055,
      timeUpdate: iso(T + 2000),
    });
    expect(free.h.world.deals.get(grow.deal!)).toMatchObject({ entry: 'In', profit: 0, commission: 0 });

    const paid = account('real\\retail');
    paid.h.call('GroupRecord', { group: 'real\\retail', patch: { marginMode: 'Retail' } });
    paid.send();
    expect(paid.h.world.users.get(paid.login)!.balance).toBe(9996.5);
    paid.tick('EURUSD', 1.1009, 1.101, T + 1000);
    paid.h.events.length = 0;
    const more = paid.send({}, T + 2000);
    expect(kinds(paid.h.events)).toEqual(['positions update', 'deals add', 'users update']);
    expect(paid.h.world.deals.get(more.deal!)).toMatchObject({ entry: 'In', commission: -3.5, price: 1.101 });
    expect(paid.h.world.positionsOf(paid.login)).toEqual([
      expect.objectContaining({ volume: 20_000, priceOpen: 1.10055 }),
    ]);
    expect(paid.h.world.users.get(paid.login)!.balance).toBe(9993);
  });

  it("charges the sum of the group's instant per-lot commissions only", () => {
    const { h, login, send } = account();
    h.world.groups.get('demo\\retail')!.commissions = {
      a: { chargeMode: 'Instant', tiers: [{ value: 2 }] },
      b: { chargeMode: 'Instant', tiers: [{ value: 4 }, { value: 100 }] },
      c: { chargeMode: 'Daily', tiers: [{ value: 100 }] },
      d: { chargeMode: 'Instant' },
      e: { chargeMode: 'Instant', tiers: [{}] },
      f: { chargeMode: 'Instant', tiers: [] },
    };
    const half = send({ volume: 5_000 });
    // (2 + 4) per lot × 0.5 lot.
    expect(h.world.deals.get(half.deal!)!.commission).toBe(-3);
    expect(h.world.users.get(login)!.balance).toBe(9997);
  });
});

describe('pending orders on ticks', () => {
  const cases = [
    { type: 'BuyLimit', price: 1.099, miss: [1.09891, 1.09901], hit: [1.0989, 1.099], fill: 1.099 },
    { type: 'BuyStop', price: 1.102, miss: [1.10189, 1.10199], hit: [1.1019, 1.102], fill: 1.102 },
    { type: 'SellLimit', price: 1.102, miss: [1.10199, 1.10209], hit: [1.102, 1.1021], fill: 1.102 },
    { type: 'SellStop', price: 1.098, miss: [1.09801, 1.09811], hit: [1.098, 1.0981], fill: 1.098 },
  ] as const;
  for (const c of cases) {
    it(`fill a ${c.type} when the side it trades on reaches its price exactly, at that side's price`, () => {
      const { h, login, send, tick, history } = account();
      const { order } = send({ type: c.type, price: c.price });
      expect(h.world.orders.get(order)).toMatchObject({
        state: 'Placed',
        typeTime: 'GtC',
        priceOrder: c.price,
        positionID: 0,
      });
      expect('timeExpiration' in h.world.orders.get(order)!).toBe(false);
      tick('EURUSD', c.miss[0], c.miss[1], T + 1000);
      expect(h.world.orders.has(order)).toBe(true);
      h.events.length = 0;
      tick('EURUSD', c.hit[0], c.hit[1], T + 2000);
      expect(h.world.orders.has(order)).toBe(false);
      expect(kinds(h.events).slice(0, 4)).toEqual(['ticks update', 'orders delete', 'positions add', 'deals add']);
      expect(h.world.positionsOf(login)).toEqual([
        expect.objectContaining({
          position: order,
          action: c.type.startsWith('Buy') ? 'Buy' : 'Sell',
          priceOpen: c.fill,
          timeCreate: iso(T + 2000),
        }),
      ]);
      expect(h.world.deals.values().at(-1)).toMatchObject({
        order,
        entry: 'In',
        price: c.fill,
        reason: 'Client',
        time: iso(T + 2000),
      });
      expect(history(order)).toMatchObject({
        state: 'Filled',
        priceOrder: c.price,
        positionID: order,
        volumeCurrent: 0,
        timeSetup: iso(T),
        timeDone: iso(T + 2000),
      });
    });
  }

  it('fill an order the server started with when the market reaches it', () => {
    const h = pf5Harness({ accounts: 5, trades: 0, orders: 5 });
    const order = h.world.orders.values()[0];
    h.world.engine.balance(order.login, 'Balance', 1_000_000, '', T);
    const spread = h.world.feed.quote(order.symbol)!.ask - h.world.feed.quote(order.symbol)!.bid;
    const buy = order.type.startsWith('Buy');
    h.events.length = 0;
    h.world.feed.inject(
      order.symbol,
      buy ? order.priceOrder - spread : order.priceOrder,
      buy ? order.priceOrder : order.priceOrder + spread,
      T + 1000,
    );
    expect(h.events[1]).toEqual({ kind: 'orders', op: 'delete', record: { order: order.order } });
    expect(h.world.engine.historyOrders.get(order.order)).toMatchObject({
      state: 'Filled',
      positionID: order.order,
      timeDone: iso(T + 1000),
    });
    expect(h.world.positions.get(order.order)).toMatchObject({
      login: order.login,
      symbol: order.symbol,
      action: buy ? 'Buy' : 'Sell',
      priceOpen: order.priceOrder,
      volume: order.volumeInitial,
    });
  });

  it('expire at their expiration time, even on a tick that reaches their price', () => {
    const { h, login, send, tick, history } = account();
    const { order } = send({ type: 'BuyLimit', price: 1.099, expiration: T + 60_000, comment: 'one minute' });
    expect(h.world.orders.get(order)).toEqual({
      order,
      externalID: '',
      login,
      symbol: 'EURUSD',
      digits: 5,
      digitsCurrency: 2,
      contractSize: 100_000,
      state: 'Placed',
      reason: 'Dealer',
      timeSetup: iso(T),
      type: 'BuyLimit',
      typeFill: 'Return',
      typeTime: 'Specified',
      timeExpiration: iso(T + 60_000),
      priceOrder: 1.099,
      priceTrigger: 0,
      priceSL: 0,
      priceTP: 0,
      volumeInitial: 10_000,
      volumeCurrent: 10_000,
      expertID: 0,
      positionID: 0,
      comment: 'one minute',
    });
    tick('EURUSD', 1.1, 1.1001, T + 59_999);
    expect(h.world.orders.has(order)).toBe(true);
    h.events.length = 0;
    tick('EURUSD', 1.0989, 1.099, T + 60_000);
    expect(kinds(h.events)).toEqual(['ticks update', 'orders delete']);
    expect(h.world.positionsOf(login)).toEqual([]);
    expect(history(order)).toMatchObject({
      state: 'Expired',
      volumeCurrent: 0,
      timeDone: iso(T + 60_000),
      timeExpiration: iso(T + 60_000),
    });
  });

  it('are rejected into the history, without a deal, when the account can no longer pay the margin at the fill', () => {
    const { h, engine, login, send, tick, history } = account('demo\\retail', 1200);
    const { order } = send({ type: 'BuyLimit', price: 1.099 });
    engine.balance(login, 'Balance', -200, '', T);
    const deals = h.world.deals.size;
    h.events.length = 0;
    // 1 000 EUR at the mid 1.09895 is 1 098.95 of margin; the free margin is 1 000.
    tick('EURUSD', 1.0989, 1.099, T + 1000);
    expect(kinds(h.events)).toEqual(['ticks update', 'orders delete']);
    expect(history(order)).toMatchObject({ state: 'Rejected', volumeCurrent: 0, timeDone: iso(T + 1000) });
    expect(h.world.deals.size).toBe(deals);
    expect(h.world.positionsOf(login)).toEqual([]);
    expect(h.world.users.get(login)!.balance).toBe(1000);
  });

  it('that close a named position fill without free margin', () => {
    const { h, login, send, tick, history, engine } = account('demo\\retail', 1200);
    const { position } = send();
    expect(engine.account(login).marginFree).toBe(89.95);
    const { order } = send({ type: 'SellLimit', price: 1.102, position });
    expect(h.world.orders.get(order)!.positionID).toBe(position);
    tick('EURUSD', 1.102, 1.1021, T + 1000);
    expect(history(order)).toMatchObject({ state: 'Filled', positionID: position });
    expect(h.world.deals.values().at(-1)).toMatchObject({
      entry: 'Out',
      price: 1.102,
      profit: 190,
      positionID: position,
      reason: 'Client',
    });
    expect(h.world.positionsOf(login)).toEqual([]);
    expect(h.world.users.get(login)!.balance).toBe(1390);
  });

  it('announce their placing and cancelling, and a cancelled order never fills', () => {
    const { h, engine, login, send, tick, history } = account();
    const { order } = send({ type: 'BuyLimit', price: 1.099 });
    expect(kinds(h.events)).toEqual(['orders add']);
    expect(h.events[0].record).toMatchObject({ order, priceOrder: 1.099, priceCurrent: 1.1001 });
    h.events.length = 0;
    engine.cancel(order, T + 500);
    expect(h.events).toEqual([{ kind: 'orders', op: 'delete', record: { order } }]);
    expect(history(order)).toMatchObject({ state: 'Canceled', timeDone: iso(T + 500) });
    expect(refused(() => engine.cancel(order, T))).toEqual({
      code: R.ErrNotfound,
      message: `order ${order} not found`,
    });
    tick('EURUSD', 1.0989, 1.099, T + 1000);
    expect(h.world.positionsOf(login)).toEqual([]);
  });
});

describe('stops on ticks', () => {
  const cases = [
    {
      side: 'Buy',
      sl: 1.095,
      tp: 1.105,
      miss: [1.09501, 1.09511],
      hit: [1.095, 1.0951],
      reason: 'Sl',
      close: 1.095,
      profit: -510,
    },
    {
      side: 'Buy',
      sl: 1.095,
      tp: 1.105,
      miss: [1.10499, 1.10509],
      hit: [1.105, 1.1051],
      reason: 'Tp',
      close: 1.105,
      profit: 490,
    },
    {
      side: 'Sell',
      sl: 1.105,
      tp: 1.095,
      miss: [1.10489, 1.10499],
      hit: [1.1049, 1.105],
      reason: 'Sl',
      close: 1.105,
      profit: -500,
    },
    {
      side: 'Sell',
      sl: 1.105,
      tp: 1.095,
      miss: [1.09491, 1.09501],
      hit: [1.0949, 1.095],
      reason: 'Tp',
      close: 1.095,
      profit: 500,
    },
  ] as const;
  for (const c of cases) {
    it(`close a ${c.side.toLowerCase()} at its ${c.reason === 'Sl' ? 'stop loss' : 'take profit'} when its closing price reaches it exactly`, () => {
      const { h, login, send, tick, history } = account();
      const { position } = send({ type: c.side, priceSL: c.sl, priceTP: c.tp });
      tick('EURUSD', c.miss[0], c.miss[1], T + 1000);
      expect(h.world.positions.has(position!)).toBe(true);
      tick('EURUSD', c.hit[0], c.hit[1], T + 2000);
      expect(h.world.positionsOf(login)).toEqual([]);
      const deal = h.world.deals.values().at(-1)!;
      const comment = `[${c.reason.toLowerCase()} ${c.close}]`;
      expect(deal).toMatchObject({
        entry: 'Out',
        action: c.side === 'Buy' ? 'Sell' : 'Buy',
        reason: c.reason,
        price: c.close,
        profit: c.profit,
        positionID: position,
        comment,
        time: iso(T + 2000),
      });
      expect(history(deal.order)).toEqual({
        order: deal.order,
        externalID: '',
        login,
        symbol: 'EURUSD',
        digits: 5,
        digitsCurrency: 2,
        contractSize: 100_000,
        state: 'Filled',
        reason: c.reason.toUpperCase(),
        timeSetup: iso(T + 2000),
        type: c.side === 'Buy' ? 'Sell' : 'Buy',
        typeFill: 'Return',
        typeTime: 'GtC',
        priceOrder: c.close,
        priceTrigger: 0,
        priceSL: 0,
        priceTP: 0,
        volumeInitial: 10_000,
        volumeCurrent: 0,
        expertID: 0,
        positionID: position,
        comment,
        timeDone: iso(T + 2000),
      });
      expect(deal).toEqual({
        deal: deal.deal,
        externalID: '',
        dealer: 0,
        digitsCurrency: 2,
        priceSL: 0,
        priceTP: 0,
        volumeClosed: 0,
        storage: 0,
        commission: 0,
        fee: 0,
        rateProfit: 1,
        rateMargin: 1,
        expertID: 0,
        login,
        action: c.side === 'Buy' ? 'Sell' : 'Buy',
        entry: 'Out',
        digits: 5,
        contractSize: 100_000,
        time: iso(T + 2000),
        symbol: 'EURUSD',
        price: c.close,
        volume: 10_000,
        profit: c.profit,
        positionID: position,
        order: deal.order,
        comment,
        reason: c.reason,
      });
      expect(h.world.users.get(login)!.balance).toBe(10_000 + c.profit);
    });
  }

  it('a stop-out closes the most losing position with the reason SO, announced between the margin events', () => {
    const { h, login, send, tick, history } = account('demo\\retail', 3000);
    const losing = send().position!;
    const winning = send({ type: 'Sell', volume: 5_000 }).position!;
    h.events.length = 0;
    tick('EURUSD', 1.05, 1.0501, T + 1000);
    const seen = h.events
      .filter((e) => e.kind === 'margin' || e.kind === 'deals')
      .map((e) =>
        e.kind === 'margin'
          ? `${e.record.type} ${e.record.direction}`
          : `deal ${e.record.reason} ${e.record.positionID}`,
      );
    expect(seen).toEqual(['MarginCall Enter', 'StopOut Enter', `deal So ${losing}`, 'StopOut Leave']);
    const deal = h.world.deals.values().at(-1)!;
    expect(history(deal.order)).toMatchObject({
      reason: 'SO',
      type: 'Sell',
      comment: '[so 1.05]',
      priceOrder: 1.05,
      positionID: losing,
    });
    expect(h.world.positionsOf(login).map((p) => p.position)).toEqual([winning]);
    expect(h.world.engine.marginStateOf(login)).toBe('MarginCall');
  });

  it('a stop-out closes positions worst first, all of them when the level stays below after each close', () => {
    const { h, login, send, tick } = account('demo\\retail', 1000);
    const small = send({ volume: 1_000 }).position!;
    const large = send({ volume: 8_000 }).position!;
    // Down 121 points: the 0.8 lot loses 968, the 0.1 lot 121, more than the balance.
    tick('EURUSD', 1.088, 1.0881, T + 1000);
    const closes = h.world.deals
      .values()
      .filter((d) => d.reason === 'So')
      .map((d) => [d.positionID, d.profit]);
    expect(closes).toEqual([
      [large, -968],
      [small, -121],
    ]);
    expect(h.world.positionsOf(login)).toEqual([]);
    expect(h.world.users.get(login)!.balance).toBe(-89);
    expect(h.world.engine.marginStateOf(login)).toBe('Ok');
  });
});

describe('swaps', () => {
  it('charge a sell the short swap and a yen position its swap in USD, three days on the triple-swap weekday', () => {
    const { h, engine, login, send } = account();
    const eur = send({ type: 'Sell' }).position!;
    const yen = send({ symbol: 'USDJPY' }).position!;
    h.events.length = 0;
    // Tuesday: -1.2 points × 0.00001 × 100 000; -2.5 points × 0.001 × 100 000 JPY at USDJPY's mid 150.01.
    expect(engine.chargeSwaps(T)).toBe(2);
    expect(h.world.positions.get(eur)).toMatchObject({ storage: -1.2, timeUpdate: iso(T) });
    expect(h.world.positions.get(yen)).toMatchObject({ storage: -1.67, timeUpdate: iso(T) });
    expect(kinds(h.events)).toEqual(['positions update', 'positions update']);
    expect(h.events[0].record).toMatchObject({ position: eur, storage: -1.2 });
    const wednesday = T + 86_400_000;
    expect(engine.chargeSwaps(wednesday)).toBe(2);
    expect(h.world.positions.get(eur)).toMatchObject({ storage: -4.8, timeUpdate: iso(wednesday) });
    expect(h.world.positions.get(yen)!.storage).toBe(-6.67);
    expect(engine.account(login)).toMatchObject({ storage: -11.47, equity: cents(10_000 - 10 - 13.33 - 11.47) });
  });

  it('skip a position whose swap is zero and a position on a symbol the server no longer lists', () => {
    const { h, engine, send } = account();
    const eur = send({ type: 'Sell' }).position!;
    const yen = send({ symbol: 'USDJPY' }).position!;
    h.call('SymbolRecord', { symbol: 'EURUSD', patch: { swapShort: 0 } });
    h.events.length = 0;
    expect(engine.chargeSwaps(T)).toBe(1);
    expect(h.world.positions.get(eur)).toMatchObject({ storage: 0, timeUpdate: iso(T) });
    expect(h.events.map((e) => e.record.position)).toEqual([yen]);
    h.world.symbols = h.world.symbols.filter((s) => s.symbol !== 'USDJPY');
    expect(engine.chargeSwaps(T)).toBe(0);
    expect(h.world.positions.get(yen)!.storage).toBe(-1.67);
  });

  it('announce the margin call a swap causes', () => {
    const { h, engine, login, send } = account('demo\\retail', 1111);
    send();
    // Equity 1 101 on 1 100.05 of margin: 100.09 %, then 2.50 of swap takes it to 99.86 %.
    expect(engine.account(login).marginLevel).toBe(100.09);
    h.events.length = 0;
    engine.chargeSwaps(T);
    expect(kinds(h.events)).toEqual(['positions update', 'margin add']);
    expect(h.events[1].record).toEqual({
      login,
      group: 'demo\\retail',
      type: 'MarginCall',
      direction: 'Enter',
      time: iso(T),
      marginLevel: 99.86,
      equity: 1098.5,
      margin: 1100.05,
    });
  });
});

describe('swaps in the running figures', () => {
  it('count on the next tick: a large swap brings the margin call a tick announces', () => {
    const { h, login, send, tick, engine } = account('demo\\retail', 2000);
    send();
    h.call('SymbolRecord', { symbol: 'EURUSD', patch: { swapLong: -100 } });
    // -100 points × 0.00001 × 100 000 = -100 a day.
    engine.chargeSwaps(T);
    expect(engine.account(login)).toMatchObject({ storage: -100, equity: 1890 });
    h.events.length = 0;
    tick('EURUSD', 1.0915, 1.0916, T + 1000);
    expect(h.events.filter((e) => e.kind === 'margin').map((e) => e.record)).toEqual([
      {
        login,
        group: 'demo\\retail',
        type: 'MarginCall',
        direction: 'Enter',
        time: iso(T + 1000),
        marginLevel: 95.28,
        equity: 1040,
        margin: 1091.55,
      },
    ]);
  });
});

describe('batch deletes', () => {
  it('of positions delete a ticket named twice once, keep the balance and deals, and end the margin call', () => {
    const { h, login, send, engine } = account('demo\\retail', 1111);
    const { position } = send();
    engine.balance(login, 'Balance', -0.9, '', T);
    expect(engine.marginStateOf(login)).toBe('MarginCall');
    const deals = h.world.deals.size;
    h.events.length = 0;
    h.world.engine.deletePositions([position!, position!]);
    expect(kinds(h.events)).toEqual(['positions delete', 'margin add']);
    expect(h.events[0].record).toEqual({ position });
    expect(h.events[1].record).toMatchObject({
      type: 'MarginCall',
      direction: 'Leave',
      marginLevel: 0,
      equity: 1110.1,
      margin: 0,
    });
    expect(engine.marginStateOf(login)).toBe('Ok');
    expect(h.world.deals.size).toBe(deals);
    expect(engine.account(login)).toMatchObject({ balance: 1110.1, margin: 0, equity: 1110.1 });
  });

  it("check every ticket exists before any is another server's, and delete nothing when one fails", () => {
    const { h, send } = account();
    const mine = send().position!;
    const foreign = send().position!;
    h.world.foreignTickets.add(foreign);
    expect(h.fails('PositionDeleteBatch', { tickets: [foreign, 999] })).toEqual({
      code: R.ErrNotfound,
      message: 'position 999 not found',
    });
    expect(h.fails('PositionDeleteBatch', { tickets: [mine, foreign] })).toEqual({
      code: R.ErrNotMain,
      message: `position ${foreign} was created on another trade server`,
    });
    expect(h.world.positions.size).toBe(2);
  });

  it('of orders delete live and history orders, and a deleted pending order never fills', () => {
    const { h, login, send, tick, history } = account();
    const live = send({ type: 'BuyLimit', price: 1.099 }).order;
    const done = send().order;
    const foreign = send({ type: 'SellLimit', price: 1.11 }).order;
    h.world.foreignTickets.add(foreign);
    expect(h.fails('OrderDeleteBatch', { tickets: [live, 5] })).toEqual({
      code: R.ErrNotfound,
      message: 'order 5 not found',
    });
    expect(h.fails('OrderDeleteBatch', { tickets: [live, foreign] })).toEqual({
      code: R.ErrNotMain,
      message: `order ${foreign} was created on another trade server`,
    });
    h.events.length = 0;
    expect(h.call('OrderDeleteBatch', { tickets: [live, done] })).toBe(true);
    expect(h.events).toEqual([{ kind: 'orders', op: 'delete', record: { order: live } }]);
    expect(h.world.orders.has(live)).toBe(false);
    expect(history(live)).toBeUndefined();
    expect(history(done)).toBeUndefined();
    tick('EURUSD', 1.0989, 1.099, T + 1000);
    expect(h.world.positionsOf(login).map((p) => p.position)).toEqual([done]);
  });

  it('of deals delete the deals only', () => {
    const { h, login, send } = account();
    const { deal } = send();
    const other = h.world.deals.values().find((d) => d.action === 'Balance')!.deal;
    h.world.foreignTickets.add(other);
    expect(h.fails('DealDeleteBatch', { tickets: [deal, 5] })).toEqual({
      code: R.ErrNotfound,
      message: 'deal 5 not found',
    });
    expect(h.fails('DealDeleteBatch', { tickets: [deal, other] })).toEqual({
      code: R.ErrNotMain,
      message: `deal ${other} was created on another trade server`,
    });
    h.events.length = 0;
    expect(h.call('DealDeleteBatch', { tickets: [deal] })).toBe(true);
    expect(h.events).toEqual([{ kind: 'deals', op: 'delete', record: { deal } }]);
    expect(h.world.deals.has(deal!)).toBe(false);
    expect(h.world.positionsOf(login)).toHaveLength(1);
    expect(h.world.users.get(login)!.balance).toBe(10_000);
  });
});

describe('margin-call states', () => {
  const margins = (events: Array<{ kind: string; record: any }>) =>
    events.filter((e) => e.kind === 'margin').map((e) => `${e.record.login} ${e.record.type} ${e.record.direction}`);

  it("place the level against the group's levels inclusively, crossing both in order, and leave other groups alone", () => {
    const { h, login, send, add } = account();
    send();
    const bystander = add('demo\\netting', 1111);
    h.world.engine.send(
      { login: bystander, symbol: 'EURUSD', type: 'Buy', volume: 10_000, priceSL: 0, priceTP: 0, comment: '' },
      T,
    );
    expect(h.world.engine.account(login).marginLevel).toBe(908.14);
    h.events.length = 0;
    h.call('GroupRecord', { group: 'demo\\retail', patch: { marginCall: 908.14 } });
    expect(margins(h.events)).toEqual([`${login} MarginCall Enter`]);
    expect(h.events.find((e) => e.kind === 'margin')!.record).toEqual({
      login,
      group: 'demo\\retail',
      type: 'MarginCall',
      direction: 'Enter',
      time: iso(T),
      marginLevel: 908.14,
      equity: 9990,
      margin: 1100.05,
    });
    h.events.length = 0;
    h.call('GroupRecord', { group: 'demo\\retail', patch: { marginCall: 908.13 } });
    expect(margins(h.events)).toEqual([`${login} MarginCall Leave`]);
    h.events.length = 0;
    h.call('GroupRecord', { group: 'demo\\retail', patch: { marginCall: 1000, marginStopOut: 908.14 } });
    expect(margins(h.events)).toEqual([`${login} MarginCall Enter`, `${login} StopOut Enter`]);
    expect(h.world.engine.marginStateOf(login)).toBe('StopOut');
    // A group's new levels announce; they close nothing until a tick.
    expect(h.world.positionsOf(login)).toHaveLength(1);
    h.events.length = 0;
    h.call('GroupRecord', { group: 'demo\\retail', patch: { marginCall: 100, marginStopOut: 50 } });
    expect(margins(h.events)).toEqual([`${login} StopOut Leave`, `${login} MarginCall Leave`]);
    expect(h.world.engine.marginStateOf(login)).toBe('Ok');
    expect(h.world.engine.marginStateOf(bystander)).toBe('Ok');
  });

  it('start from the exact levels without announcing them, skipping positions of an account the server lacks', () => {
    const { h, login, send, add } = account();
    send();
    const gone = add('demo\\retail', 10_000);
    h.world.engine.send(
      { login: gone, symbol: 'EURUSD', type: 'Buy', volume: 10_000, priceSL: 0, priceTP: 0, comment: '' },
      T,
    );
    h.world.users.delete(gone);
    h.world.users.set(login, { ...h.world.users.get(login)!, balance: 1000 });
    h.events.length = 0;
    h.world.engine.initMarginStates();
    // Equity 990 on 1 100.05 of margin: 90 %.
    expect(h.world.engine.marginStateOf(login)).toBe('MarginCall');
    expect(h.world.engine.marginStateOf(gone)).toBe('Ok');
    h.world.users.set(login, { ...h.world.users.get(login)!, balance: 500 });
    h.world.engine.initMarginStates();
    expect(h.world.engine.marginStateOf(login)).toBe('StopOut');
    h.world.users.set(login, { ...h.world.users.get(login)!, balance: 10_000 });
    h.world.engine.initMarginStates();
    expect(h.world.engine.marginStateOf(login)).toBe('Ok');
    expect(h.events).toEqual([]);
  });

  it('forget an account the server no longer has when its positions are deleted', () => {
    const { h, login, send, engine } = account('demo\\retail', 1111);
    const { position } = send();
    engine.balance(login, 'Balance', -0.9, '', T);
    expect(engine.marginStateOf(login)).toBe('MarginCall');
    h.world.users.delete(login);
    h.events.length = 0;
    expect(h.call('PositionDeleteBatch', { tickets: [position] })).toBe(true);
    expect(kinds(h.events)).toEqual(['positions delete']);
    expect(engine.marginStateOf(login)).toBe('Ok');
  });

  it('use the levels 100 and 50 for an account whose group record is gone', () => {
    const { h, login, send, tick, engine } = account('demo\\retail', 1111);
    h.world.groups.set('demo\\gone', { ...h.world.groups.get('demo\\retail')!, group: 'demo\\gone' });
    h.world.users.set(login, { ...h.world.users.get(login)!, group: 'demo\\gone' });
    send();
    h.world.groups.delete('demo\\gone');
    h.events.length = 0;
    // Equity 1 100.10 on 1 100.05 of margin: 100 % after rounding.
    engine.balance(login, 'Balance', -0.9, '', T);
    expect(margins(h.events)).toEqual([`${login} MarginCall Enter`]);
    expect(h.events.at(-1)!.record).toMatchObject({ group: 'demo\\gone', marginLevel: 100 });
    h.events.length = 0;
    // About 80 %: still in the margin call.
    tick('EURUSD', 1.0978, 1.0979, T + 500);
    expect(margins(h.events)).toEqual([]);
    expect(engine.marginStateOf(login)).toBe('MarginCall');
    tick('EURUSD', 1.094, 1.0941, T + 1000);
    expect(margins(h.events)).toEqual([`${login} StopOut Enter`]);
    expect(h.events.at(-1)!.record).toMatchObject({ marginLevel: 45.71, equity: 500.1, margin: 1094.05 });
  });
});

describe('margin checks', () => {
  it('let an order use the free margin exactly, and name both figures when it needs a cent more', () => {
    const exact = account('demo\\retail', 20);
    // A sell of 0.01 lot of gold at the bid 2 000: 1 oz × 2 000 / 100 = 20 of margin.
    expect(exact.send({ symbol: 'XAUUSD', type: 'Sell', volume: 100 }).deal).toBeGreaterThan(0);
    expect(exact.engine.account(exact.login)).toMatchObject({ margin: 20, marginFree: -0.5 });
    // Equity 19.50 (the spread) on 20 of margin: the fill itself announces the margin call.
    expect(kinds(exact.h.events)).toEqual(['positions add', 'deals add', 'margin add']);
    expect(exact.h.events[2].record).toMatchObject({
      type: 'MarginCall',
      direction: 'Enter',
      marginLevel: 97.5,
      equity: 19.5,
      margin: 20,
    });
    const short = account('demo\\retail', 19.99);
    expect(short.fails({ symbol: 'XAUUSD', type: 'Sell', volume: 100 })).toEqual({
      code: R.TradeMaxMoney,
      message: 'not enough money: margin 20 exceeds free margin 19.99',
    });
    expect(short.h.events).toEqual([]);
  });

  it("ask a netting account for the margin of a reversal's excess only", () => {
    const { h, login, send, fails, engine } = account('demo\\netting', 1200);
    send();
    expect(engine.account(login).marginFree).toBe(89.95);
    expect(fails({ type: 'Sell', volume: 20_000 })).toEqual({
      code: R.TradeMaxMoney,
      message: 'not enough money: margin 1100.05 exceeds free margin 89.95',
    });
    // 0.05 lot beyond the position: 5 000 EUR / 100 at 1.10005 is 55.
    const reverse = send({ type: 'Sell', volume: 10_500 });
    expect(h.world.deals.get(reverse.deal!)).toMatchObject({ entry: 'InOut', volume: 10_500 });
    expect(h.world.positionsOf(login)).toEqual([expect.objectContaining({ action: 'Sell', volume: 500 })]);
    expect(engine.account(login).margin).toBe(55);
  });

  it('let a netting account close its whole position by a plain order while its free margin is negative', () => {
    const { h, login, send, tick, engine } = account('demo\\netting', 1111);
    send();
    engine.balance(login, 'Balance', -0.9, '', T);
    tick('EURUSD', 1.099, 1.0991, T + 1000);
    expect(engine.account(login).marginFree).toBe(-98.95);
    const close = send({ type: 'Sell' }, T + 2000);
    expect(h.world.deals.get(close.deal!)).toMatchObject({ entry: 'Out', price: 1.099, profit: -110 });
    expect(h.world.positionsOf(login)).toEqual([]);
    expect(h.world.users.get(login)!.balance).toBe(1000.1);
  });

  it('take a deposit whatever the free margin, and announce the margin call it ends', () => {
    const { h, login, send, tick, engine } = account('demo\\retail', 1111);
    send();
    engine.balance(login, 'Balance', -0.9, '', T);
    tick('EURUSD', 1.099, 1.0991, T + 1000);
    expect(engine.account(login)).toMatchObject({ equity: 1000.1, margin: 1099.05, marginFree: -98.95 });
    h.events.length = 0;
    engine.balance(login, 'Balance', 200, '', T + 2000);
    expect(kinds(h.events)).toEqual(['deals add', 'users update', 'margin add']);
    expect(h.events[2].record).toMatchObject({
      type: 'MarginCall',
      direction: 'Leave',
      time: iso(T + 2000),
      equity: 1200.1,
      margin: 1099.05,
      marginLevel: 109.19,
    });
  });

  it('charge no commission without a commission table or a group record', () => {
    const { h, login, send, engine } = account();
    delete h.world.groups.get('demo\\retail')!.commissions;
    expect(h.world.deals.get(send().deal!)!.commission).toBe(0);
    h.world.users.set(login, { ...h.world.users.get(login)!, group: 'demo\\gone' });
    expect(h.world.deals.get(send({ symbol: 'GBPUSD' }).deal!)!.commission).toBe(0);
    expect(engine.account(login).balance).toBe(10_000);
  });

  it('charge no commission for a negative per-lot value', () => {
    const { h, login, send } = account();
    h.world.groups.get('demo\\retail')!.commissions = { rebate: { chargeMode: 'Instant', tiers: [{ value: -2 }] } };
    const fill = send();
    expect(h.world.deals.get(fill.deal!)!.commission).toBe(0);
    expect(kinds(h.events)).toEqual(['positions add', 'deals add']);
    expect(h.world.users.get(login)!.balance).toBe(10_000);
  });
});

describe('positions and ticks', () => {
  it("list an account's positions by ticket, also after a reversal gave one of them back its ticket", () => {
    const { h, login, send } = account('demo\\netting');
    const eur = send().position!;
    const gbp = send({ symbol: 'GBPUSD' }).position!;
    expect(send({ type: 'Sell', volume: 20_000 }).position).toBe(eur);
    expect(h.world.positionsOf(login).map((p) => [p.position, p.action])).toEqual([
      [eur, 'Sell'],
      [gbp, 'Buy'],
    ]);
    expect(h.call('PositionGet', { login }).map((p: { position: number }) => p.position)).toEqual([eur, gbp]);
  });

  it('stop an account out on a tick when its level equals the stop-out level, and not when its level is a cent above it', () => {
    const { h, login, send, tick } = account();
    const { position } = send();
    h.call('GroupRecord', { group: 'demo\\retail', patch: { marginCall: 1000, marginStopOut: 908.13 } });
    tick('EURUSD', 1.1, 1.1001, T + 1000);
    expect(h.world.positions.has(position!)).toBe(true);
    expect(h.world.engine.marginStateOf(login)).toBe('MarginCall');
    h.call('GroupRecord', { group: 'demo\\retail', patch: { marginStopOut: 908.14 } });
    h.events.length = 0;
    tick('EURUSD', 1.1, 1.1001, T + 2000);
    expect(h.world.positions.has(position!)).toBe(false);
    expect(h.world.deals.values().at(-1)).toMatchObject({
      reason: 'So',
      positionID: position,
      price: 1.1,
      time: iso(T + 2000),
    });
    expect(h.events.filter((e) => e.kind === 'margin').map((e) => `${e.record.type} ${e.record.direction}`)).toEqual([
      'StopOut Leave',
      'MarginCall Leave',
    ]);
  });

  it("take 50 as the stop-out level of a group record without one, and keep a healthy account's positions", () => {
    const { h, login, send, tick } = account();
    delete h.world.groups.get('demo\\retail')!.marginStopOut;
    send();
    send({ type: 'BuyLimit', price: 1.099 });
    tick('EURUSD', 1.0989, 1.099, T + 1000);
    expect(h.world.positionsOf(login)).toHaveLength(2);
    expect(h.world.deals.values().filter((d) => d.reason === 'So')).toEqual([]);
    expect(h.world.engine.marginStateOf(login)).toBe('Ok');
  });

  it('leave an account the server no longer has as it was: no close, no announcement', () => {
    const { h, login, send, tick, engine } = account('demo\\retail', 1111);
    const { position } = send();
    engine.balance(login, 'Balance', -0.9, '', T);
    expect(engine.marginStateOf(login)).toBe('MarginCall');
    h.world.users.delete(login);
    h.events.length = 0;
    tick('EURUSD', 1.05, 1.0501, T + 1000);
    tick('EURUSD', 1.2, 1.2001, T + 2000);
    expect(kinds(h.events)).toEqual(['ticks update', 'ticks update']);
    expect(h.world.positions.has(position!)).toBe(true);
    expect(engine.marginStateOf(login)).toBe('MarginCall');
    // Nor does a change of the levels of the group it was in.
    h.call('GroupRecord', { group: 'demo\\retail', patch: { marginCall: 90 } });
    expect(h.events.filter((e) => e.kind === 'margin')).toEqual([]);
    expect(engine.marginStateOf(login)).toBe('MarginCall');
  });

  it('charge no swap to an account the server lacks or whose group is gone', () => {
    const { h, login, send, add, engine } = account();
    const mine = send().position!;
    const other = add('demo\\retail', 10_000);
    const theirs = engine.send(
      { login: other, symbol: 'EURUSD', type: 'Buy', volume: 10_000, priceSL: 0, priceTP: 0, comment: '' },
      T,
    ).position!;
    h.world.users.delete(other);
    h.world.users.set(login, { ...h.world.users.get(login)!, group: 'demo\\gone' });
    h.events.length = 0;
    expect(engine.chargeSwaps(T)).toBe(0);
    expect([h.world.positions.get(mine)!.storage, h.world.positions.get(theirs)!.storage]).toEqual([0, 0]);
    expect(h.events).toEqual([]);
  });
});

describe('margin states on ticks', () => {
  /** The state the exact margin level gives against the group's levels (100 and 50). */
  const exact = (h: ReturnType<typeof account>['h'], login: number) => {
    const a = h.world.engine.account(login);
    return a.margin <= 0 ? 'Ok' : a.marginLevel <= 50 ? 'StopOut' : a.marginLevel <= 100 ? 'MarginCall' : 'Ok';
  };
  const margins = (events: Array<{ kind: string; record: any }>) =>
    events.filter((e) => e.kind === 'margin').map((e) => `${e.record.type} ${e.record.direction}`);

  it('enter and leave the margin call on the ticks that cross it, far from the stop-out level', () => {
    const { h, send, tick } = account('demo\\retail', 2000);
    send();
    h.events.length = 0;
    // Equity 990 on 1 090.05 of margin.
    tick('EURUSD', 1.09, 1.0901, T + 1000);
    expect(margins(h.events)).toEqual(['MarginCall Enter']);
    expect(h.events.at(-1)!.record).toMatchObject({
      marginLevel: 90.82,
      equity: 990,
      margin: 1090.05,
      time: iso(T + 1000),
    });
    h.events.length = 0;
    tick('EURUSD', 1.1, 1.1001, T + 2000);
    expect(margins(h.events)).toEqual(['MarginCall Leave']);
    expect(h.events.at(-1)!.record).toMatchObject({ marginLevel: 180.9, equity: 1990, margin: 1100.05 });
  });

  it('count the credit in the level a tick places: leaving the margin call a little above it', () => {
    const { h, login, send, tick, engine } = account('demo\\retail', 1890);
    engine.balance(login, 'Credit', 110, '', T);
    send();
    tick('EURUSD', 1.09, 1.0901, T + 1000);
    expect(engine.marginStateOf(login)).toBe('MarginCall');
    h.events.length = 0;
    // Equity 1 890 + 110 - 850 on 1 091.65 of margin.
    tick('EURUSD', 1.0916, 1.0917, T + 2000);
    expect(margins(h.events)).toEqual(['MarginCall Leave']);
    expect(h.events.at(-1)!.record).toMatchObject({ marginLevel: 105.35, equity: 1150, margin: 1091.65 });
  });

  it("follow the exact level on every tick after partial and full closes changed the account's positions", () => {
    const { h, login, send, tick } = account('demo\\retail', 3000);
    send({ volume: 20_000 });
    const a = send({ volume: 2_000 }).position!;
    const b = send({ volume: 2_000 }).position!;
    tick('EURUSD', 1.12, 1.1201, T + 1000);
    send({ type: 'Sell', volume: 1_000, position: a }, T + 2000);
    send({ type: 'Sell', volume: 2_000, position: b }, T + 2000);
    expect(h.world.users.get(login)!.balance).toBe(3597);
    h.events.length = 0;
    const walk = (from: number, to: number, step: number) => {
      for (
        let i = 0, bid = from;
        step < 0 ? bid >= to : bid <= to;
        i++, bid = Math.round((from + step * i) * 1e5) / 1e5
      ) {
        tick('EURUSD', bid, Math.round((bid + 0.0001) * 1e5) / 1e5, T + 3000 + i);
        expect(h.world.engine.marginStateOf(login), `at bid ${bid}`).toBe(exact(h, login));
      }
    };
    walk(1.12, 1.0915, -0.0005);
    expect(h.world.engine.marginStateOf(login)).toBe('MarginCall');
    walk(1.0915, 1.1, 0.0005);
    expect(margins(h.events)).toEqual(['MarginCall Enter', 'MarginCall Leave']);
    expect(h.world.positionsOf(login)).toHaveLength(2);
  });

  it('enter the margin call when the running margin lags a cross rate that moved on another symbol', () => {
    const { h, login, send, tick } = account('demo\\retail', 1122.5);
    send({ symbol: 'EURGBP' });
    // Equity 1 110 (the spread, -10 GBP) on 1 100.05 of margin.
    expect(h.world.engine.account(login).marginLevel).toBe(100.9);
    // The euro's rise moves the EURGBP margin, held in USD, to 1 120.05.
    tick('EURUSD', 1.12, 1.1201, T + 1000);
    h.events.length = 0;
    // Another group's new levels do not place this account.
    h.call('GroupRecord', { group: 'demo\\netting', patch: { marginCall: 100 } });
    expect(margins(h.events)).toEqual([]);
    tick('EURGBP', 0.85, 0.8501, T + 2000);
    expect(margins(h.events)).toEqual(['MarginCall Enter']);
    expect(h.events.at(-1)!.record).toMatchObject({ marginLevel: 99.1, equity: 1110, margin: 1120.05 });
  });
});
