/**
 * PF5 pending-order cancellation and the order history: DealerCancel takes an open order off the book into the
 * history as Canceled (no deal, no position), fills and cancellations are read back by ticket and by group mask with
 * an inclusive setup-time window.
 */
import { describe, expect, it } from 'vitest';
import * as records from '../../shared/records/contract.js';
import { PF5_RESULT as R } from '../../shared/resultCodes.js';
import { iso } from '../world/people.js';
import { at, desk, isoAt } from '../../test/support/sim/deskFixture.js';

const orderKeys = (list: Array<{ order: number }>) => list.map((o) => o.order);

describe('DealerCancel', () => {
  it('moves an open order to the history as Canceled, announces its removal, and makes no deal', () => {
    const { h, login, order } = desk();
    const open = h.call('OrderGetByTickets', { tickets: [order.vipGbp] })[0];
    const deals = h.world.deals.size;
    const account = h.call('UserAccountGet', { login: login.vip });
    h.events.length = 0;
    expect(h.call('DealerCancel', { order: order.vipGbp })).toBe(true);
    expect(h.events).toEqual([{ kind: 'orders', op: 'delete', record: { order: order.vipGbp } }]);
    expect(h.call('OrderGetByTickets', { tickets: [order.vipGbp] })).toEqual([]);
    expect(orderKeys(h.call('OrdersRequest', {}).items)).not.toContain(order.vipGbp);
    expect(h.call('OrderGetByLogins', { logins: [login.vip] })).toEqual([]);
    const [done] = h.call('HistoryRequestByTickets', { tickets: [order.vipGbp] });
    records.PF5Order.parse(done);
    const { priceCurrent: _current, ...stored } = open;
    expect(done).toEqual({ ...stored, state: 'Canceled', volumeCurrent: 0, timeDone: done.timeDone });
    expect(Number.isNaN(Date.parse(done.timeDone))).toBe(false);
    expect(h.world.deals.size).toBe(deals);
    expect(h.call('UserAccountGet', { login: login.vip })).toEqual(account);
    // Canceled once; a second cancel finds no open order.
    expect(h.fails('DealerCancel', { order: order.vipGbp })).toEqual({
      code: R.ErrNotfound,
      message: `order ${order.vipGbp} not found`,
    });
  });

  it('refuses a filled or unknown order, a bad ticket, and a manager without TradesDealer', () => {
    const { h, order, filled } = desk();
    h.events.length = 0;
    expect(h.fails('DealerCancel', { order: filled[0] })).toEqual({
      code: R.ErrNotfound,
      message: `order ${filled[0]} not found`,
    });
    expect(h.fails('DealerCancel', { order: 42 })).toEqual({ code: R.ErrNotfound, message: 'order 42 not found' });
    expect(h.fails('DealerCancel', {})).toEqual({ code: R.ErrParams, message: 'order must be an integer' });
    expect(h.fails('DealerCancel', { order: 0 }).message).toMatch(/^order must be between 1 and /);
    expect(h.fails('DealerCancel', { order: order.proXau }, ['TradesManager'])).toEqual({
      code: R.ErrPermissions,
      message: 'DealerCancel needs the TradesDealer right',
    });
    expect(h.events).toEqual([]);
    expect(h.call('OrderGetByTickets', { tickets: [order.proXau] })).toHaveLength(1);
    expect(h.call('DealerCancel', { order: order.proXau }, ['TradesDealer'])).toBe(true);
  });
});

describe('order history', () => {
  it('answers finished orders by ticket in the order asked, each once, and never open ones', () => {
    const { h, login, order, filled, position } = desk();
    h.call('DealerCancel', { order: order.realEur });
    const found = h.call('HistoryRequestByTickets', {
      tickets: [filled[2], order.realEur, filled[0], order.retailEur, 1, filled[2]],
    });
    expect(orderKeys(found)).toEqual([filled[2], order.realEur, filled[0]]);
    for (const o of found) records.PF5Order.parse(o);
    expect(found[0]).toMatchObject({
      login: login.vip,
      symbol: 'EURUSD',
      type: 'Buy',
      state: 'Filled',
      priceOrder: 1.1001,
      volumeInitial: 10_000,
      volumeCurrent: 0,
      positionID: position.vipEur,
      timeSetup: isoAt(12),
      timeDone: isoAt(12),
    });
    expect(found[1]).toMatchObject({ state: 'Canceled', type: 'BuyStop', timeSetup: isoAt(23) });
    expect(h.call('HistoryRequestByTickets', { tickets: [order.retailEur] })).toEqual([]);
    expect(h.fails('HistoryRequestByTickets', { tickets: ['x'] }).code).toBe(R.ErrParams);
  });

  it("answers a group's finished orders set up within an inclusive window", () => {
    const { h, order, position } = desk();
    h.call('DealerCancel', { order: order.proXau });
    h.call('DealerCancel', { order: order.retailEur });
    const history = (args: Record<string, unknown>) => orderKeys(h.call('HistoryRequestByGroup', args));
    expect(history({ mask: 'real\\*' })).toEqual([position.realXau, position.proEur, order.proXau]);
    expect(history({ mask: 'real\\*', fromTime: isoAt(14), toTime: isoAt(24) })).toEqual([
      position.proEur,
      order.proXau,
    ]);
    expect(history({ mask: 'real\\*', fromTime: iso(at(14) + 1), toTime: iso(at(24) - 1) })).toEqual([]);
    expect(history({ mask: 'demo\\retail' })).toEqual([position.retailEur, position.retailXau, order.retailEur]);
    expect(history({ mask: 'demo\\retail', toTime: isoAt(15) })).toEqual([position.retailEur, position.retailXau]);
    expect(history({ mask: 'demo\\*,!demo\\retail', fromTime: isoAt(16) })).toEqual([]);
  });

  it('rejects a pending order the market reaches when the account cannot pay its margin: history Rejected, no deal', () => {
    const { h, login, order, position } = desk();
    // vip: 100 000 deposited, one lot of EURUSD open; leave it less free margin than a lot of GBPUSD needs (about 1240).
    const free = h.call('UserAccountGet', { login: login.vip }).marginFree;
    h.world.engine.balance(login.vip, 'Balance', -(free - 1000), 'withdrawal', at(25));
    const account = h.call('UserAccountGet', { login: login.vip });
    expect(account.marginFree).toBe(1000);
    const open = h.call('OrderGet', { ticket: order.vipGbp });
    const deals = h.world.deals.size;
    h.events.length = 0;
    h.world.feed.inject('GBPUSD', 1.2398, 1.24, at(30));
    expect(h.events.filter((e) => e.kind !== 'ticks')).toEqual([
      { kind: 'orders', op: 'delete', record: { order: order.vipGbp } },
    ]);
    expect(h.fails('OrderGet', { ticket: order.vipGbp })).toEqual({
      code: R.ErrNotfound,
      message: `order ${order.vipGbp} not found`,
    });
    const [done] = h.call('HistoryRequestByTickets', { tickets: [order.vipGbp] });
    records.PF5Order.parse(done);
    const { priceCurrent: _current, ...stored } = open;
    expect(done).toEqual({ ...stored, state: 'Rejected', volumeCurrent: 0, timeDone: isoAt(30) });
    expect(h.world.deals.size).toBe(deals);
    expect(h.call('PositionGetByLogins', { logins: [login.vip] }).map((p: { position: number }) => p.position)).toEqual(
      [position.vipEur],
    );
    expect(h.call('UserGet', { login: login.vip }).balance).toBe(account.balance);
    expect(
      orderKeys(h.call('HistoryRequestByGroup', { mask: 'demo\\vip', fromTime: isoAt(22), toTime: isoAt(22) })),
    ).toEqual([order.vipGbp]);
    // Later ticks find nothing left to fill.
    h.world.feed.inject('GBPUSD', 1.2388, 1.239, at(31));
    expect(h.world.deals.size).toBe(deals);
  });

  it('records a pending order the market fills as Filled, with the position it opened', () => {
    const { h, login, order } = desk();
    h.world.feed.inject('GBPUSD', 1.2398, 1.24, at(30));
    expect(h.call('OrderGetByTickets', { tickets: [order.vipGbp] })).toEqual([]);
    const [done] = h.call('HistoryRequestByTickets', { tickets: [order.vipGbp] });
    expect(done).toMatchObject({ state: 'Filled', volumeCurrent: 0, positionID: order.vipGbp, timeDone: isoAt(30) });
    expect(
      h.call('PositionGetByLogins', { logins: [login.vip] }).map((p: { position: number }) => p.position),
    ).toContain(order.vipGbp);
    expect(
      orderKeys(h.call('HistoryRequestByGroup', { mask: 'demo\\vip', fromTime: isoAt(22), toTime: isoAt(22) })),
    ).toEqual([order.vipGbp]);
  });
});
