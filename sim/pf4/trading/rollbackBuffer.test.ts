/**
 * The rollback buffer: automatic activations held for the rollback time, TradeClearRollback restoring the trade and
 * the balance, the rights it needs, and the triggers leaving a rolled-back trade to the dealer.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PF4_RESULT as R } from '../../../shared/resultCodes.js';
import { at, pf4Desk, pf4Trader, T0 } from '../../../test/support/sim/pf4TradingDesk.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the rollback buffer', () => {
  it('closes at the stop loss, and TradeClearRollback restores the trade and the balance', () => {
    const { h, login, open, tick } = pf4Trader();
    const trade = open({ sl: 1.099, tp: 1.103 });
    tick(1.0989, 1.099);
    expect(h.fails('TradeRecordRequest', { order: trade.order }).code).toBe(R.InvalidData);
    const closed = h.call('TradesUserHistory', { login }).at(-1);
    expect(closed).toMatchObject({ order: trade.order, activationType: 'SL', closePrice: 1.0989, profit: -120 });
    expect(h.call('UserRecordRequest', { login }).balance).toBe(9880);
    expect(h.call('TradeClearRollback', { order: trade.order })).toBe(true);
    expect(h.call('TradeRecordRequest', { order: trade.order })).toMatchObject({
      activationType: 'SLRollback',
      sl: 1.099,
    });
    expect(h.call('UserRecordRequest', { login }).balance).toBe(10_000);
    // The dealer owns a rolled-back trade: the next tick does not stop it out again.
    tick(1.0985, 1.0986);
    expect(h.call('TradeRecordRequest', { order: trade.order }).order).toBe(trade.order);
    expect(h.call('TradeClearRollback', { order: trade.order })).toBe(false);
    expect(h.fails('TradeClearRollback', { order: 1 }).code).toBe(R.InvalidData);
  });

  it('needs the trades right to roll an activation back, and a refused rollback leaves the close in place', () => {
    const { h, login, open, tick } = pf4Trader();
    const trade = open({ sl: 1.099 });
    tick(1.0989, 1.099);
    expect(h.call('UserRecordRequest', { login }).balance).toBe(9880);
    const mark = h.events.length;
    expect(h.fails('TradeClearRollback', { order: trade.order }, ['manager', 'money', 'admin', 'seeTrades'])).toEqual({
      code: R.NotEnoughRights,
      message: 'TradeClearRollback needs the trades right',
    });
    expect(h.events.slice(mark)).toEqual([]);
    expect(h.call('UserRecordRequest', { login }).balance).toBe(9880);
    expect(h.fails('TradeRecordRequest', { order: trade.order }).code).toBe(R.InvalidData);
    expect(h.call('TradeClearRollback', { order: trade.order }, ['trades'])).toBe(true);
    expect(h.call('UserRecordRequest', { login }).balance).toBe(10_000);
  });

  it('rolls an automatic activation back to the pending order, freeing its margin', () => {
    const { h, account, open, tick, margin, since } = pf4Desk();
    const login = account();
    const order = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    tick(1.0988, 1.0989);
    expect(h.call('TradeRecordRequest', { order: order.order })).toMatchObject({
      tradeCommand: 'Buy',
      openPrice: 1.0989,
    });
    expect(margin(login).margin).toBe(1098.85);
    const after = since();
    expect(h.call('TradeClearRollback', { order: order.order })).toBe(true);
    const restored = h.call('TradeRecordRequest', { order: order.order });
    expect(restored).toMatchObject({
      tradeCommand: 'BuyLimit',
      openPrice: 1.099,
      activationType: 'PendingRollback',
      timeStamp: at(T0),
    });
    expect(margin(login)).toMatchObject({ margin: 0, equity: 10_000 });
    expect(after().filter((e) => e.kind === 'trades')).toEqual([{ kind: 'trades', op: 'update', record: restored }]);
    // The dealer owns it now: the market reaching it again does not activate it.
    tick(1.0985, 1.0986);
    expect(h.call('TradeRecordRequest', { order: order.order }).tradeCommand).toBe('BuyLimit');
  });

  it('holds an automatic close until the rollback time has passed', () => {
    const { h, account, open, tick } = pf4Desk();
    const login = account();
    const early = open(login, { sl: 1.099 });
    const late = open(login, { sl: 1.099 });
    tick(1.0989, 1.099);
    vi.setSystemTime(T0 + 9_999);
    expect(h.call('TradeClearRollback', { order: early.order })).toBe(true);
    vi.setSystemTime(T0 + 10_000);
    expect(h.call('TradeClearRollback', { order: late.order })).toBe(false);
    // Once committed it stays committed.
    expect(h.world.engine.clearRollback(late.order, T0 + 5_000)).toBe(false);
    expect(h.fails('TradeClearRollback', { order: 1 })).toEqual({ code: R.InvalidData, message: 'order 1 not found' });
  });

  it('commits held activations on the sweep once their time has come', () => {
    const { h, account, open, tick } = pf4Desk();
    const login = account();
    const first = open(login, { sl: 1.099 });
    const second = open(login, { sl: 1.099 });
    tick(1.0989, 1.099);
    h.world.engine.sweep(T0 + 9_999);
    expect(h.world.engine.clearRollback(first.order, T0 + 1)).toBe(true);
    h.world.engine.sweep(T0 + 10_000);
    expect(h.world.engine.clearRollback(second.order, T0 + 1)).toBe(false);
  });

  it('hands a rolled-back trade back to the triggers once a dealer modifies it', () => {
    const { h, account, open, tx, tick, history } = pf4Desk();
    const login = account();
    const trade = open(login, { sl: 1.099 });
    tick(1.0989, 1.099);
    h.call('TradeClearRollback', { order: trade.order });
    tick(1.1, 1.1001);
    const modified = tx('BrOrderModify', { order: trade.order, sl: 1.0995 });
    expect(modified.activationType).toBe('None');
    tick(1.0994, 1.0995);
    expect(history(login).at(-1)).toMatchObject({ order: trade.order, activationType: 'SL', closePrice: 1.0994 });
  });

  it('holds nothing when the rollback time is 0', () => {
    const { h, account, open, tick } = pf4Desk({ rollbackMs: 0 });
    const trade = open(account(), { sl: 1.099 });
    tick(1.0989, 1.099);
    expect(h.call('TradeClearRollback', { order: trade.order })).toBe(false);
  });

  it('restores a take-profit close as TPRollback and journals the rollback', () => {
    const { h, account, open, tick, journal } = pf4Desk();
    const login = account();
    const trade = open(login, { tp: 1.101 });
    tick(1.101, 1.1011);
    vi.setSystemTime(T0 + 1000);
    const after = h.events.length;
    expect(h.call('TradeClearRollback', { order: trade.order })).toBe(true);
    const restored = h.call('TradeRecordRequest', { order: trade.order });
    expect(restored).toMatchObject({ activationType: 'TPRollback', tp: 1.101, timeStamp: at(T0 + 1000) });
    expect(h.events.slice(after).filter((e) => e.kind === 'trades')).toEqual([
      { kind: 'trades', op: 'add', record: restored },
    ]);
    expect(journal()).toContain(`'${login}': TP activation of #${trade.order} rolled back`);
  });

  it('restores a stopped-out trade as StopOutRollback and does not stop it out again', () => {
    const { h, account, open, tick, openOrders, history } = pf4Desk();
    const login = account(2000);
    const trade = open(login, { volume: 150 });
    tick(1.0906, 1.0907);
    expect(history(login).at(-1)).toMatchObject({ order: trade.order, activationType: 'Stopout' });
    expect(h.call('TradeClearRollback', { order: trade.order })).toBe(true);
    expect(h.call('TradeRecordRequest', { order: trade.order }).activationType).toBe('StopOutRollback');
    const pending = open(login, { tradeCommand: 'SellLimit', price: 1.2 });
    // Still below the stop-out level, but the dealer owns the trade now, and a pending order is no position to close.
    tick(1.0905, 1.0906);
    expect(openOrders(login)).toEqual([trade.order, pending.order]);
    expect(h.call('MarginLevelRequest', { login }).levelType).toBe('StopOut');
  });
});
