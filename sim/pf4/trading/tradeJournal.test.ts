/**
 * What the trading engine writes to the server journal: modifications, deletions, an administrator's edit, a dealer's
 * close and an automatic activation.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pf4Desk, T0 } from '../../../test/support/sim/pf4TradingDesk.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('what the journal says of trades', () => {
  it('journals a modification and a deletion with the order they leave', () => {
    const { account, open, tx, journal } = pf4Desk();
    const login = account();
    const order = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    tx('BrOrderModify', { order: order.order, price: 1.098 });
    tx('BrOrderDelete', { order: order.order });
    expect(journal().slice(-2)).toEqual([
      `'${login}': modify #${order.order} buylimit 1.00 EURUSD at 1.098`,
      `'${login}': #${order.order} buylimit 1.00 EURUSD at 1.098 deleted`,
    ]);
  });

  it("journals an administrator's edit of a trade", () => {
    const { h, account, open, journal } = pf4Desk();
    const login = account();
    const trade = open(login);
    h.call('AdmTradeRecordModify', { ticket: trade.order, record: { comment: 'checked' } });
    expect(journal().at(-1)).toBe(
      `'${login}': #${trade.order} buy 1.00 EURUSD at 1.1001 modified by the administrator`,
    );
  });

  it("journals a dealer's close without an activation mark and an activation with its price", () => {
    const { account, open, tx, tick, journal } = pf4Desk();
    const login = account();
    const trade = open(login);
    tx('BrOrderClose', { order: trade.order });
    expect(journal()).toContain(`'${login}': close #${trade.order} buy 1.00 EURUSD at 1.1001 at 1.1`);
    const order = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    tick(1.0985, 1.0987);
    expect(journal()).toContain(`'${login}': pending #${order.order} activated at 1.0987`);
    expect(journal()).toContain(`'${login}': balance 10000 (#${trade.order - 1})`);
  });
});
