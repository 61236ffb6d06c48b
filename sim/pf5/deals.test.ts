/**
 * PF5 deal reads and the deal update: selection by logins, group mask, symbol list and tickets, the inclusive
 * fromTime / toTime window (absent: from the epoch to the end of time), paging in ticket order, and DealUpdate, which
 * applies only the fields supplied and announces the change.
 */
import { describe, expect, it } from 'vitest';
import * as records from '../../shared/records/contract.js';
import { PF5_RESULT as R } from '../../shared/resultCodes.js';
import { iso } from '../world/people.js';
import { at, desk, isoAt } from '../../test/support/sim/deskFixture.js';

const dealKeys = (list: Array<{ deal: number }>) => list.map((x) => x.deal);

describe('deal reads', () => {
  it('selects the deals of the logins asked for within an inclusive time window', () => {
    const { h, login, deposit, fill } = desk();
    const logins = [login.vip, login.netting, login.vip];
    // Deposits: netting minute 1, vip minute 2; fills: netting minute 11, vip minute 12.
    const all = [deposit.netting, deposit.vip, fill.nettingGbp, fill.vipEur];
    expect(dealKeys(h.call('DealRequestByLogins', { logins }))).toEqual(all);
    expect(dealKeys(h.call('DealRequestByLogins', { logins, fromTime: isoAt(1), toTime: isoAt(12) }))).toEqual(all);
    expect(
      dealKeys(h.call('DealRequestByLogins', { logins, fromTime: iso(at(1) + 1), toTime: iso(at(12) - 1) })),
    ).toEqual([deposit.vip, fill.nettingGbp]);
    expect(dealKeys(h.call('DealRequestByLogins', { logins, fromTime: isoAt(11) }))).toEqual([
      fill.nettingGbp,
      fill.vipEur,
    ]);
    expect(dealKeys(h.call('DealRequestByLogins', { logins, toTime: isoAt(2) }))).toEqual([
      deposit.netting,
      deposit.vip,
    ]);
    expect(dealKeys(h.call('DealRequestByLogins', { logins, fromTime: isoAt(2), toTime: isoAt(2) }))).toEqual([
      deposit.vip,
    ]);
    expect(h.call('DealRequestByLogins', { logins, fromTime: isoAt(3), toTime: isoAt(10) })).toEqual([]);
    expect(h.call('DealRequestByLogins', { logins: [999_999] })).toEqual([]);
  });

  it('selects by group mask, symbol list and time window together', () => {
    const { h, fill, deposit } = desk();
    const select = (args: Record<string, unknown>) => dealKeys(h.call('DealRequestByGroupSymbol', args));
    expect(select({ mask: '*', symbol: 'EURUSD' })).toEqual([fill.retailEur, fill.vipEur, fill.proEur]);
    expect(select({ mask: '*', symbol: 'EURUSD, XAUUSD', fromTime: isoAt(12), toTime: isoAt(15) })).toEqual([
      fill.vipEur,
      fill.realXau,
      fill.proEur,
      fill.retailXau,
    ]);
    expect(select({ mask: 'real\\*', symbol: 'EURUSD,XAUUSD', toTime: isoAt(13) })).toEqual([fill.realXau]);
    expect(select({ mask: 'demo\\*,!demo\\retail', symbol: 'GBPUSD,EURUSD' })).toEqual([fill.nettingGbp, fill.vipEur]);
    // Balance deals have no symbol: an empty entry in the list does not select them.
    expect(select({ mask: '*', symbol: 'EURUSD,' })).toEqual([fill.retailEur, fill.vipEur, fill.proEur]);
    expect(select({ mask: 'demo\\retail', symbol: 'GBPUSD' })).toEqual([]);
    expect(h.fails('DealRequestByGroupSymbol', { mask: '*', symbol: ',,' })).toEqual({
      code: R.ErrParams,
      message: 'symbol must name at least one symbol',
    });
    expect(
      dealKeys(h.call('DealRequestByGroup', { mask: 'real\\pro', fromTime: isoAt(4), toTime: isoAt(14) })),
    ).toEqual([deposit.pro, fill.proEur]);
    expect(dealKeys(h.call('DealRequestByGroup', { mask: 'real\\pro', fromTime: iso(at(4) + 1) }))).toEqual([
      fill.proEur,
    ]);
  });

  it('refuses a time that is not an ISO 8601 date-time, naming the field', () => {
    const { h, login } = desk();
    const cases: Array<[string, Record<string, unknown>]> = [
      ['DealRequestByLogins', { logins: [login.vip] }],
      ['DealRequestByGroup', { mask: '*' }],
      ['DealRequestByGroupSymbol', { mask: '*', symbol: 'EURUSD' }],
      ['HistoryRequestByGroup', { mask: '*' }],
    ];
    for (const [cmd, args] of cases) {
      expect(h.fails(cmd, { ...args, fromTime: 1_767_600_000 }), cmd).toEqual({
        code: R.ErrParams,
        message: 'fromTime must be an ISO 8601 date-time',
      });
      expect(h.fails(cmd, { ...args, toTime: 'yesterday' }), cmd).toEqual({
        code: R.ErrParams,
        message: 'toTime must be an ISO 8601 date-time',
      });
    }
    expect(h.fails('DealRequestByLogins', { logins: 'all' })).toEqual({
      code: R.ErrParams,
      message: 'logins must be an array of integers',
    });
  });

  it('selects deals by ticket in the order asked, each once, with their recorded values', () => {
    const { h, login, deposit, fill, position } = desk();
    const found = h.call('DealRequestByTickets', {
      tickets: [fill.proEur, deposit.retail, fill.proEur, 1, 999_999_999],
    });
    expect(dealKeys(found)).toEqual([fill.proEur, deposit.retail]);
    for (const deal of found) records.PF5Deal.parse(deal);
    // real\pro charges 2.5 USD per lot: one lot sold at the bid.
    expect(found[0]).toMatchObject({
      login: login.pro,
      action: 'Sell',
      entry: 'In',
      symbol: 'EURUSD',
      price: 1.1,
      volume: 10_000,
      profit: 0,
      commission: -2.5,
      positionID: position.proEur,
      order: position.proEur,
      time: isoAt(14),
      reason: 'Dealer',
    });
    expect(found[1]).toMatchObject({
      login: login.retail,
      action: 'Balance',
      symbol: '',
      profit: 100_000,
      comment: 'deposit',
      time: isoAt(0),
    });
    expect(h.call('DealRequestByTickets', { tickets: [] })).toEqual([]);
    expect(h.fails('DealRequestByTickets', { tickets: [-5] }).message).toMatch(
      /^tickets must contain integers between 1 and /,
    );
  });

  it("pages every deal, and a group's deals, by ticket", () => {
    const { h, deposit, fill } = desk();
    const every = [...Object.values(deposit), ...Object.values(fill)];
    expect(every).toEqual([...every].sort((a, b) => a - b));
    const first = h.call('DealsRequest', { limit: 4 });
    expect(first).toMatchObject({ hasMore: true });
    expect(dealKeys(first.items)).toEqual(every.slice(0, 4));
    const second = h.call('DealsRequest', { limit: 4, after: every[3] });
    expect(dealKeys(second.items)).toEqual(every.slice(4, 8));
    const last = h.call('DealsRequest', { limit: 4, after: every[7] });
    expect(last).toMatchObject({ hasMore: false });
    expect(dealKeys(last.items)).toEqual(every.slice(8));
    expect(dealKeys(h.call('DealsRequest', {}).items)).toEqual(every);
    expect(h.call('DealsRequest', { after: every[10] })).toEqual({ items: [], hasMore: false });

    const demo = [
      deposit.retail,
      deposit.netting,
      deposit.vip,
      fill.retailEur,
      fill.nettingGbp,
      fill.vipEur,
      fill.retailXau,
    ];
    const page1 = h.call('DealByGroup', { mask: 'demo\\*', limit: 3 });
    expect(page1).toMatchObject({ hasMore: true });
    expect(dealKeys(page1.items)).toEqual(demo.slice(0, 3));
    const page2 = h.call('DealByGroup', { mask: 'demo\\*', limit: 3, after: demo[2] });
    expect(dealKeys(page2.items)).toEqual(demo.slice(3, 6));
    const page3 = h.call('DealByGroup', { mask: 'demo\\*', limit: 3, after: demo[5] });
    expect(page3).toEqual({ items: [h.call('DealRequestByTicket', { ticket: fill.retailXau })], hasMore: false });
    // The retail XAUUSD fill is the last deal: a full page ending on the group's last deal has no more.
    expect(h.call('DealByGroup', { mask: 'real\\retail', limit: 2 })).toMatchObject({ hasMore: false });
    expect(h.fails('DealsRequest', { limit: 1_000_001 })).toEqual({
      code: R.ErrParams,
      message: 'limit must be between 1 and 1000000',
    });
  });
});

describe('DealUpdate', () => {
  it('applies only the supplied fields, keeps the rest, and announces the updated deal', () => {
    const { h, login, fill } = desk();
    const before = h.call('DealRequestByTicket', { ticket: fill.vipEur });
    const others = h.world.deals.values().filter((x) => x.deal !== fill.vipEur);
    const balance = h.world.users.get(login.vip)!.balance;
    h.events.length = 0;
    const updated = h.call('DealUpdate', {
      record: { deal: fill.vipEur, comment: 'checked', priceSL: 1.09, price: null, login: null },
    });
    expect(updated).toEqual({ ...before, comment: 'checked', priceSL: 1.09 });
    records.PF5Deal.parse(updated);
    expect(h.call('DealRequestByTicket', { ticket: fill.vipEur })).toEqual(updated);
    expect(h.events).toEqual([{ kind: 'deals', op: 'update', record: updated }]);
    expect(h.world.deals.values().filter((x) => x.deal !== fill.vipEur)).toEqual(others);
    expect(h.world.users.get(login.vip)!.balance).toBe(balance);
    // A second update starts from the updated deal.
    expect(h.call('DealUpdate', { record: { deal: fill.vipEur, login: login.vip, reason: 'Client' } })).toEqual({
      ...updated,
      reason: 'Client',
    });
  });

  it('refuses a bad record with ErrParams naming the field, an unknown deal with ErrNotfound, and changes nothing', () => {
    const { h, login, fill } = desk();
    const before = h.call('DealRequestByTicket', { ticket: fill.retailEur });
    h.events.length = 0;
    expect(h.fails('DealUpdate', {})).toEqual({ code: R.ErrParams, message: 'record must be an object' });
    expect(h.fails('DealUpdate', { record: { comment: 'x' } })).toEqual({
      code: R.ErrParams,
      message: 'record.deal is required',
    });
    expect(h.fails('DealUpdate', { record: { deal: fill.retailEur, colour: 1 } }).message).toMatch(/^record\.colour: /);
    expect(h.fails('DealUpdate', { record: { deal: fill.retailEur, price: 'high' } }).message).toMatch(
      /^record\.price: /,
    );
    expect(h.fails('DealUpdate', { record: { deal: fill.retailEur, entry: 'Sideways' } }).message).toMatch(
      /^record\.entry: /,
    );
    expect(h.fails('DealUpdate', { record: { deal: fill.retailEur, time: 'noon' } }).message).toMatch(
      /^record\.time: /,
    );
    expect(h.fails('DealUpdate', { record: { deal: fill.retailEur, login: login.pro } })).toEqual({
      code: R.ErrParams,
      message: `record.login: deal ${fill.retailEur} belongs to login ${login.retail} and cannot move to another account`,
    });
    expect(h.fails('DealUpdate', { record: { deal: 1, comment: 'x' } })).toEqual({
      code: R.ErrNotfound,
      message: 'deal 1 not found',
    });
    expect(h.call('DealRequestByTicket', { ticket: fill.retailEur })).toEqual(before);
    expect(h.events).toEqual([]);
  });

  it('needs the TradesManager right', () => {
    const { h, fill } = desk();
    expect(h.fails('DealUpdate', { record: { deal: fill.retailEur, comment: 'x' } }, ['TradesRead'])).toEqual({
      code: R.ErrPermissions,
      message: 'DealUpdate needs the TradesManager right',
    });
    expect(h.call('DealUpdate', { record: { deal: fill.retailEur, comment: 'x' } }, ['TradesManager']).comment).toBe(
      'x',
    );
  });
});

describe('batch deletes naming a ticket twice', () => {
  it('delete each record once and announce it once', () => {
    const { h, login, position, order, deposit } = desk();
    h.events.length = 0;
    expect(h.call('PositionDeleteBatch', { tickets: [position.vipEur, position.vipEur] })).toBe(true);
    expect(h.call('OrderDeleteBatch', { tickets: [order.vipGbp, order.vipGbp] })).toBe(true);
    expect(h.call('DealDeleteBatch', { tickets: [deposit.vip, deposit.vip] })).toBe(true);
    expect(h.events.map((e) => [e.kind, e.op, e.record])).toEqual([
      ['positions', 'delete', { position: position.vipEur }],
      ['orders', 'delete', { order: order.vipGbp }],
      ['deals', 'delete', { deal: deposit.vip }],
    ]);
    expect(h.call('PositionGetByTickets', { tickets: [position.vipEur] })).toEqual([]);
    expect(h.call('UserAccountGet', { login: login.vip })).toMatchObject({ margin: 0 });
  });
});
