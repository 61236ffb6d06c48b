/**
 * Swaps at rollover (the symbol's, a group's override, the triple-swap day, groups and symbols without swaps) and the
 * group's commission per lot.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pf4Desk, pf4Trader, T0 } from '../../../test/support/sim/pf4TradingDesk.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('swaps at rollover', () => {
  const THURSDAY = Date.UTC(2026, 5, 4);

  it('charges swaps at rollover from the group override, converted to the deposit currency', () => {
    const { h, open } = pf4Trader();
    const trade = open({});
    h.world.rollover(Date.UTC(2026, 0, 5)); // a Monday: one day of swaps
    // real\vip overrides EURUSD long swaps to -1.5 points: -1.5 * 0.00001 * 100000 * 1 lot = -1.5 USD.
    expect(h.call('TradeRecordRequest', { order: trade.order }).storage).toBe(-1.5);
    h.world.rollover(Date.UTC(2026, 0, 7)); // Wednesday: three days
    expect(h.call('TradeRecordRequest', { order: trade.order }).storage).toBe(-6);
  });

  it("charges the symbol's long and short swaps for one day, converted to USD, and skips pending orders", () => {
    const { h, account, open, tick, journal } = pf4Desk();
    tick(150, 150.02, 'USDJPY');
    const login = account(10_000, 'real\\standard');
    const buy = open(login);
    const sell = open(login, { tradeCommand: 'Sell' });
    const yen = open(login, { symbol: 'USDJPY' });
    const pending = open(login, { tradeCommand: 'BuyLimit', price: 1.09 });
    expect(h.world.rollover(THURSDAY)).toBe(3);
    const storage = (order: number) => h.call('TradeRecordRequest', { order }).storage;
    // -2.5 and -1.2 points of 0.00001 on 100000; -2.5 points of 0.001 on 100000 JPY at the USDJPY mid of 150.01.
    expect([storage(buy.order), storage(sell.order), storage(yen.order), storage(pending.order)]).toEqual([
      -2.5, -1.2, -1.67, 0,
    ]);
    expect(journal()).toContain('rollover: swaps charged on 3 trades');
  });

  it("takes the group's short swap override and triples the swap on the symbol's triple-swap day", () => {
    const { h, account, open } = pf4Desk();
    const sell = open(account(), { tradeCommand: 'Sell' });
    h.world.rollover(Date.UTC(2026, 5, 3)); // a Wednesday
    expect(h.call('TradeRecordRequest', { order: sell.order }).storage).toBe(-1.5);
  });

  it("takes a group's override only for the symbol it names", () => {
    const { h, account, open, tick } = pf4Desk();
    tick(1.25, 1.2501, 'GBPUSD');
    // real\\vip overrides EURUSD (-1.5 long) and XAUUSD, not GBPUSD: the symbol's -2.5 points apply.
    const buy = open(account(), { symbol: 'GBPUSD' });
    h.world.rollover(THURSDAY);
    expect(h.call('TradeRecordRequest', { order: buy.order }).storage).toBe(-2.5);
  });

  it('charges nothing in a group without swaps, on a symbol without swaps, or at a swap of 0 points', () => {
    const { h, account, open, group, symbol } = pf4Desk();
    const login = account(10_000, 'real\\standard');
    const buy = open(login);
    const sell = open(login, { tradeCommand: 'Sell' });
    group('real\\standard', { useSwap: 0 });
    expect(h.world.rollover(THURSDAY)).toBe(0);
    group('real\\standard', { useSwap: 1 });
    symbol('EURUSD', { swapEnable: 0 });
    expect(h.world.rollover(THURSDAY)).toBe(0);
    symbol('EURUSD', { swapEnable: 1, swapLong: 0 });
    expect(h.world.rollover(THURSDAY)).toBe(1);
    expect([buy, sell].map((t) => h.call('TradeRecordRequest', { order: t.order }).storage)).toEqual([0, -1.2]);
  });

  it('keeps the margin a trade has held since it opened when its swaps or commission change', () => {
    const { h, account, open, tick, margin } = pf4Desk();
    const login = account();
    const trade = open(login);
    expect(margin(login).margin).toBe(1100.05);
    tick(1.12, 1.1201); // the euro is dearer: a margin taken now would be 1120.05
    h.world.rollover(THURSDAY);
    h.call('AdmTradeRecordModify', { ticket: trade.order, record: { commission: -4 } });
    // Equity: 10000 + 1990 of profit - 1.5 of swaps - 4 of commission.
    expect(margin(login)).toMatchObject({ margin: 1100.05, equity: 11_984.5 });
  });
});

describe('the commission', () => {
  it("charges the group's commission per lot on the volume opened", () => {
    const { account, open } = pf4Desk();
    const login = account(10_000, 'real\\standard');
    expect(open(login, { volume: 50 }).commission).toBe(-1.75);
    expect(open(login, { tradeCommand: 'SellLimit', price: 1.102 }).commission).toBe(0);
    // real\\vip charges none: exactly 0.
    expect(open(account(), { volume: 50 }).commission).toBe(0);
  });
});
