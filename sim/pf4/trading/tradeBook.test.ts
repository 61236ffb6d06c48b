/**
 * The open trades as the engine files them: an account's open orders by ticket after re-filing, and the cached
 * results re-anchored by a manager action so a later tick stops the account out when it should.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pf4Desk, T0 } from '../../../test/support/sim/pf4TradingDesk.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the open orders of an account', () => {
  it('lists them by ticket after an activation and a rollback have re-filed them', () => {
    const { account, open, tick, openOrders, h } = pf4Desk();
    const login = account();
    const pending = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    const stopped = open(login, { sl: 1.0985 });
    const plain = open(login);
    tick(1.0988, 1.0989); // activates the limit order
    tick(1.0984, 1.0985); // stops the second trade out
    expect(openOrders(login)).toEqual([pending.order, plain.order]);
    h.call('TradeClearRollback', { order: stopped.order });
    expect(openOrders(login)).toEqual([pending.order, stopped.order, plain.order]);
  });
});

describe('stop-out after a change of conversion rates', () => {
  it('stops an account out on a tick of another of its symbols once a manager action has re-anchored its figures', () => {
    const { account, open, tick, deposit, openOrders, history } = pf4Desk();
    tick(100, 100, 'USDJPY');
    tick(160, 160, 'EURJPY');
    tick(1.25, 1.25, 'GBPUSD');
    const login = account(1499);
    const yen = open(login, { symbol: 'EURJPY' }); // 1100.05 of margin
    const pound = open(login, { symbol: 'GBPUSD', volume: 1 }); // 12.5 of margin
    tick(159.5, 159.5, 'EURJPY'); // 50000 JPY down, 500 USD at 100 yen
    tick(50, 50, 'USDJPY'); // the same loss is now 1000 USD
    deposit(login, 1); // equity 500 on 1112.55 of margin: 44.9 %
    expect(openOrders(login)).toEqual([yen.order, pound.order]);
    tick(1.25, 1.25, 'GBPUSD');
    expect(openOrders(login)).toEqual([pound.order]);
    expect(history(login).find((r) => r.order === yen.order)).toMatchObject({
      activationType: 'Stopout',
      profit: -1000,
    });
  });

  it('stops an account out on the tick that takes it below the level, after a manager action re-anchored its figures', () => {
    const { h, account, open, tick, deposit, openOrders, history, margin } = pf4Desk();
    tick(100, 100, 'USDJPY');
    tick(160, 160, 'EURJPY');
    const login = account(1250);
    const trade = open(login, { symbol: 'EURJPY' }); // 1100.05 of margin: 1000 EUR at the EURUSD mid
    tick(159.5, 159.5, 'EURJPY'); // 50000 JPY down, 500 USD at 100 yen
    expect(margin(login)).toMatchObject({ equity: 750, levelType: 'MarginCall' });
    tick(200, 200, 'USDJPY'); // the same loss is now 250 USD
    deposit(login, 1);
    expect(margin(login)).toMatchObject({ equity: 1001, levelType: 'MarginCall' });
    tick(158.5, 158.5, 'EURJPY'); // 150000 JPY down, 750 USD: equity 501 on 1100.05 is 45.5 %
    expect(openOrders(login)).toEqual([]);
    expect(history(login).find((r) => r.order === trade.order)).toMatchObject({
      activationType: 'Stopout',
      closePrice: 158.5,
      profit: -750,
    });
    expect(h.call('UserRecordRequest', { login }).balance).toBe(501);
  });
});
