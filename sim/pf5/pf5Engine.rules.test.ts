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
import { iso } from '../world/people.js';
import { CommandError } from '../world/simWorld.js';
import { pf5Harness } from '../testing/worldHarness.js';
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
  const request = (fields: Partial<DealerRequest>): DealerRequest =>
    ({ login, symbol: 'EURUSD', type: 'Buy', volume: 10_000, priceSL: 0, priceTP: 0, comment: '', ...fields });
  const send = (fields: Partial<DealerRequest> = {}, now = T) => h.world.engine.send(request(fields), now);
  const fails = (fields: Partial<DealerRequest> = {}, now = T) => refused(() => h.world.engine.send(request(fields), now));
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
    // An instrument with a quote but without settings.
    h.world.symbols = h.world.symbols.filter((s) => s.symbol !== 'GBPUSD');
    expect(fails({ symbol: 'GBPUSD' })).toEqual({ code: R.ErrNotfound, message: 'symbol GBPUSD not found' });
    expect(h.world.positions.size).toBe(0);
  });

  it('when trading the symbol is disabled', () => {
    const { h, fails } = account();
    h.call('SymbolRecord', { symbol: 'EURUSD', patch: { tradeMode: 'Disabled' } });
    expect(fails()).toEqual({ code: R.TradeOrderProhibited, message: 'trading EURUSD is disabled' });
    expect(fails({ type: 'BuyLimit', price: 1.09 })).toEqual({ code: R.TradeOrderProhibited, message: 'trading EURUSD is disabled' });
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
    expect(h.world.engine.send({ login: rich, symbol: 'USDJPY', type: 'Buy', volume: 1_000_000, priceSL: 0, priceTP: 0, comment: '' }, T))
      .toMatchObject({ position: expect.any(Number) });
    expect(h.world.engine.account(rich).margin).toBe(100_000);
    // With a fractional step only a whole volume is still refused.
    Object.assign(symbol('EURUSD'), { volumeStep: 0.5 });
    expect(fails({ volume: 100.5 })).toEqual({ code: R.ErrParams, message: 'volume must be between 100 and 1000000 in steps of 0.5 (1/10000 lot)' });
    expect(send({ volume: 101 }).deal).toBeGreaterThan(0);
  });

  it('for a position that does not exist, is another account\'s or another symbol\'s, trades the same way, or is smaller', () => {
    const { h, send, fails, add } = account();
    const eur = send().position!;
    const gold = send({ symbol: 'XAUUSD', volume: 100 }).position!;
    const other = add('demo\\retail', 10_000);
    const theirs = h.world.engine.send({ login: other, symbol: 'EURUSD', type: 'Buy', volume: 10_000, priceSL: 0, priceTP: 0, comment: '' }, T).position!;
    expect(fails({ type: 'Sell', position: 999 })).toEqual({ code: R.ErrNotfound, message: 'position 999 not found' });
    expect(fails({ type: 'Sell', position: theirs })).toEqual({ code: R.ErrNotfound, message: `position ${theirs} not found` });
    expect(fails({ type: 'Sell', position: gold })).toEqual({ code: R.ErrNotfound, message: `position ${gold} not found` });
    expect(fails({ type: 'Buy', position: eur })).toEqual({ code: R.ErrParams, message: 'a close must trade against the position' });
    expect(fails({ type: 'Sell', volume: 10_100, position: eur })).toEqual({ code: R.ErrParams, message: `volume exceeds position ${eur}` });
    expect(send({ type: 'Sell', volume: 10_000, position: eur })).toMatchObject({ position: eur });
    expect(h.world.positions.has(eur)).toBe(false);
  });

  it('for a pending order without a price or on the wrong side of the market', () => {
    const { h, fails, send } = account();
    expect(fails({ type: 'BuyLimit' })).toEqual({ code: R.ErrParams, message: 'price is required for a pending order' });
    h.call('SymbolUpdate', { symbol: 'EURUSD', record: { stopsLevel: 0 } });
    // bid 1.1, ask 1.1001: a price at the market is on the wrong side for every pending type.
    expect(fails({ type: 'BuyLimit', price: 1.1001 })).toEqual({ code: R.ErrParams, message: 'price 1.1001 is on the wrong side of the market' });
    expect(fails({ type: 'BuyStop', price: 1.1001 })).toEqual({ code: R.ErrParams, message: 'price 1.1001 is on the wrong side of the market' });
    expect(fails({ type: 'SellLimit', price: 1.1 })).toEqual({ code: R.ErrParams, message: 'price 1.1 is on the wrong side of the market' });
    expect(fails({ type: 'SellStop', price: 1.1 })).toEqual({ code: R.ErrParams, message: 'price 1.1 is on the wrong side of the market' });
    expect(h.world.orders.size).toBe(0);
    // One point inside is accepted, and the price is rounded to the symbol's digits.
    const placed = [
      send({ type: 'BuyLimit', price: 1.1000049 }), send({ type: 'BuyStop', price: 1.10011 }),
      send({ type: 'SellLimit', price: 1.10001 }), send({ type: 'SellStop', price: 1.09999 }),
    ].map((r) => h.world.orders.get(r.order)!.priceOrder);
    expect(placed).toEqual([1.1, 1.10011, 1.10001, 1.09999]);
  });
});

describe('trade modes', () => {
  it('short-only takes sells, and a buy only when it closes a sell', () => {
    const { h, send, fails } = account();
    h.call('SymbolRecord', { symbol: 'EURUSD', patch: { tradeMode: 'ShortOnly' } });
    expect(fails()).toEqual({ code: R.TradeOrderProhibited, message: 'EURUSD: only sell orders are accepted' });
    expect(fails({ type: 'BuyLimit', price: 1.09 })).toEqual({ code: R.TradeOrderProhibited, message: 'EURUSD: only sell orders are accepted' });
    const short = send({ type: 'Sell' }).position!;
    expect(send({ type: 'Buy', position: short })).toMatchObject({ position: short });
    expect(h.world.positions.size).toBe(0);
  });

  it('long-only takes a sell that closes a buy', () => {
    const { h, send, fails } = account();
    const long = send().position!;
    h.call('SymbolRecord', { symbol: 'EURUSD', patch: { tradeMode: 'LongOnly' } });
    expect(fails({ type: 'Sell' })).toEqual({ code: R.TradeOrderProhibited, message: 'EURUSD: only buy orders are accepted' });
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
    expect(fails({ type: 'Sell' })).toEqual({ code: R.TradeOrderProhibited, message: 'EURUSD: only closing orders are accepted' });
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
        code: R.TradeOrderProhibited, message: `EURUSD: the market is closed (trade sessions of ${day})`,
      });
    });
  });

  it('open at the window\'s first minute and close at its last, and a window without an end never opens', () => {
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

  it('do not restrict a symbol without sessions or without the weekday\'s entry', () => {
    const { send, symbol } = account();
    Object.assign(symbol('EURUSD'), { sessionTrade: undefined });
    expect(send().deal).toBeGreaterThan(0);
    Object.assign(symbol('EURUSD'), { sessionTrade: [] });
    expect(send().deal).toBeGreaterThan(0);
  });
});

describe('stops level', () => {
  it('keeps a sell\'s take-profit the stops level below the ask, and accepts it exactly there', () => {
    const { h, send, fails } = account();
    // ask 1.1001 less 10 points of 0.00001.
    expect(fails({ type: 'Sell', priceTP: 1.10005 })).toEqual({ code: R.ErrParams, message: 'priceTP must be at most 1.1 (stops level 10 points)' });
    expect(fails({ type: 'Sell', priceTP: 1.10005, priceSL: 1.2 }).message).toBe('priceTP must be at most 1.1 (stops level 10 points)');
    const { position } = send({ type: 'Sell', priceTP: 1.1, priceSL: 1.1002 });
    expect(h.world.positions.get(position!)).toMatchObject({ priceTP: 1.1, priceSL: 1.1002 });
  });

  it('measures a pending order\'s stops from its own price', () => {
    const { h, send, fails } = account();
    expect(fails({ type: 'BuyLimit', price: 1.09, priceSL: 1.08995 })).toEqual({ code: R.ErrParams, message: 'priceSL must be at most 1.0899 (stops level 10 points)' });
    expect(fails({ type: 'BuyLimit', price: 1.09, priceTP: 1.09005 })).toEqual({ code: R.ErrParams, message: 'priceTP must be at least 1.0901 (stops level 10 points)' });
    expect(fails({ type: 'SellLimit', price: 1.11, priceSL: 1.11005 })).toEqual({ code: R.ErrParams, message: 'priceSL must be at least 1.1101 (stops level 10 points)' });
    expect(fails({ type: 'SellLimit', price: 1.11, priceTP: 1.10995 })).toEqual({ code: R.ErrParams, message: 'priceTP must be at most 1.1099 (stops level 10 points)' });
    const buy = send({ type: 'BuyLimit', price: 1.09, priceSL: 1.0899, priceTP: 1.0901 });
    const sell = send({ type: 'SellLimit', price: 1.11, priceSL: 1.1101, priceTP: 1.1099 });
    expect(h.world.orders.get(buy.order)).toMatchObject({ priceSL: 1.0899, priceTP: 1.0901 });
    expect(h.world.orders.get(sell.order)).toMatchObject({ priceSL: 1.1101, priceTP: 1.1099 });
  });

  it('keeps a pending price the stops level from the side it fills on, and accepts it exactly there', () => {
    const { h, send, fails } = account();
    expect(fails({ type: 'BuyLimit', price: 1.10001 })).toEqual({ code: R.ErrParams, message: 'price must be at least 10 points from the market (1.1001)' });
    expect(fails({ type: 'BuyStop', price: 1.10019 })).toEqual({ code: R.ErrParams, message: 'price must be at least 10 points from the market (1.1001)' });
    expect(fails({ type: 'SellLimit', price: 1.10009 })).toEqual({ code: R.ErrParams, message: 'price must be at least 10 points from the market (1.1)' });
    expect(fails({ type: 'SellStop', price: 1.09991 })).toEqual({ code: R.ErrParams, message: 'price must be at least 10 points from the market (1.1)' });
    const placed = [
      send({ type: 'BuyLimit', price: 1.1 }), send({ type: 'BuyStop', price: 1.1002 }),
      send({ type: 'SellLimit', price: 1.1001 }), send({ type: 'SellStop', price: 1.0999 }),
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
    expect(h.world.deals.values().at(-1)).toMatchObject({ reason: 'Sl', entry: 'Out', price: 1.1, profit: -10, positionID: position });
  });
});
