/**
 * Group masks as every PF5 mask command takes them (spec, rules for every endpoint, item 8): one group, several
 * separated by commas, `*` for any run of characters, `!` to exclude, names matched in full including their path.
 * Each mask selects the same accounts whichever records are asked for: accounts, positions, orders, order history,
 * deals (plain and paged) and the groups themselves.
 */
import { describe, expect, it } from 'vitest';
import { PF5_RESULT as R } from '../../shared/resultCodes.js';
import { desk, GROUP_OF, isoAt, type Who } from '../../test/support/sim/deskFixture.js';

const d = desk();
const { h } = d;
const everyone: Who[] = ['retail', 'netting', 'vip', 'real', 'pro'];

const positionsOf: Record<Who, number[]> = {
  retail: [d.position.retailEur, d.position.retailXau],
  netting: [d.position.nettingGbp],
  vip: [d.position.vipEur],
  real: [d.position.realXau],
  pro: [d.position.proEur],
};
const ordersOf: Record<Who, number[]> = {
  retail: [d.order.retailEur],
  netting: [d.order.nettingEur],
  vip: [d.order.vipGbp],
  real: [d.order.realEur],
  pro: [d.order.proXau],
};
const dealsOf: Record<Who, number[]> = {
  retail: [d.deposit.retail, d.fill.retailEur, d.fill.retailXau],
  netting: [d.deposit.netting, d.fill.nettingGbp],
  vip: [d.deposit.vip, d.fill.vipEur],
  real: [d.deposit.real, d.fill.realXau],
  pro: [d.deposit.pro, d.fill.proEur],
};
const symbolOf = new Map<number, string>([
  [d.position.retailEur, 'EURUSD'],
  [d.position.nettingGbp, 'GBPUSD'],
  [d.position.vipEur, 'EURUSD'],
  [d.position.realXau, 'XAUUSD'],
  [d.position.proEur, 'EURUSD'],
  [d.position.retailXau, 'XAUUSD'],
  [d.order.retailEur, 'EURUSD'],
  [d.order.nettingEur, 'EURUSD'],
  [d.order.vipGbp, 'GBPUSD'],
  [d.order.realEur, 'EURUSD'],
  [d.order.proXau, 'XAUUSD'],
]);

const ascending = (xs: number[]) => [...xs].sort((a, b) => a - b);
const of = (who: Who[], table: Record<Who, number[]>) => ascending(who.flatMap((w) => table[w]));

/** Mask → the accounts it must select. */
const CASES: Array<[string, Who[]]> = [
  ['demo\\retail', ['retail']],
  ['demo\\vip', ['vip']],
  ['demo\\retail,real\\pro', ['retail', 'pro']],
  [' demo\\netting , real\\retail ', ['netting', 'real']],
  ['demo\\*', ['retail', 'netting', 'vip']],
  ['demo\\*,!demo\\vip', ['retail', 'netting']],
  ['!demo\\vip,demo\\*', ['retail', 'netting']],
  ['*,!real\\*', ['retail', 'netting', 'vip']],
  ['*,!demo\\*,!real\\pro', ['real']],
  ['*\\retail', ['retail', 'real']],
  ['*', everyone],
  ['demo', []],
  ['retail', []],
  ['demo\\re', []],
  ['!demo\\vip', []],
  ['nobody\\*', []],
];

describe('group masks', () => {
  it.each(CASES)('%s selects the accounts, positions, orders, history and deals of its groups', (mask, who) => {
    const logins = who.map((w) => d.login[w]);
    expect(h.call('UserGetByGroup', { mask }).map((u: { login: number }) => u.login)).toEqual(logins);
    expect(h.call('UserGetByGroup', { mask }).map((u: { group: string }) => u.group)).toEqual(
      who.map((w) => GROUP_OF[w]),
    );

    const positions = of(who, positionsOf);
    expect(h.call('PositionRequestByGroup', { mask }).map((p: { position: number }) => p.position)).toEqual(positions);
    expect(h.call('PositionByGroup', { mask }).items.map((p: { position: number }) => p.position)).toEqual(positions);
    expect(
      h.call('PositionGetBySymbol', { mask, symbol: 'EURUSD' }).map((p: { position: number }) => p.position),
    ).toEqual(positions.filter((t) => symbolOf.get(t) === 'EURUSD'));

    const orders = of(who, ordersOf);
    for (const cmd of ['OrderGetByGroup', 'OrderRequestByGroup']) {
      expect(
        h.call(cmd, { mask }).map((o: { order: number }) => o.order),
        cmd,
      ).toEqual(orders);
    }
    expect(h.call('OrderByGroup', { mask }).items.map((o: { order: number }) => o.order)).toEqual(orders);
    for (const cmd of ['OrderGetBySymbol', 'OrderRequestByGroupSymbol']) {
      expect(
        h.call(cmd, { mask, symbol: 'EURUSD' }).map((o: { order: number }) => o.order),
        cmd,
      ).toEqual(orders.filter((t) => symbolOf.get(t) === 'EURUSD'));
    }

    // Every fill's order is in the history; on these accounts a fill opened the position with the order's ticket.
    expect(h.call('HistoryRequestByGroup', { mask }).map((o: { order: number }) => o.order)).toEqual(positions);

    const deals = of(who, dealsOf);
    expect(h.call('DealRequestByGroup', { mask }).map((x: { deal: number }) => x.deal)).toEqual(deals);
    expect(h.call('DealByGroup', { mask }).items.map((x: { deal: number }) => x.deal)).toEqual(deals);
    const traded = deals.filter((t) => !Object.values(d.deposit).includes(t));
    expect(
      h.call('DealRequestByGroupSymbol', { mask, symbol: 'EURUSD,GBPUSD,XAUUSD' }).map((x: { deal: number }) => x.deal),
    ).toEqual(traded);

    const groups = [...new Set(who.map((w) => GROUP_OF[w]))].sort();
    expect(
      h
        .call('GroupRequestArray', { mask })
        .map((g: { group: string }) => g.group)
        .sort(),
    ).toEqual(groups);
  });

  it('answers every group for `*` and none for a pattern that only excludes', () => {
    expect(
      h
        .call('GroupRequestArray', { mask: '*' })
        .map((g: { group: string }) => g.group)
        .sort(),
    ).toEqual(['demo\\netting', 'demo\\retail', 'demo\\vip', 'real\\pro', 'real\\retail']);
    expect(h.call('GroupRequestArray', { mask: 'real\\*,!real\\pro' }).map((g: { group: string }) => g.group)).toEqual([
      'real\\retail',
    ]);
    expect(h.call('GroupRequestArray', { mask: '!real\\pro' })).toEqual([]);
  });

  it('refuses a missing, empty or overlong mask with ErrParams naming it', () => {
    const commands = [
      'UserGetByGroup',
      'PositionRequestByGroup',
      'PositionByGroup',
      'OrderGetByGroup',
      'OrderRequestByGroup',
      'OrderByGroup',
      'HistoryRequestByGroup',
      'DealRequestByGroup',
      'DealByGroup',
      'GroupRequestArray',
    ];
    for (const cmd of commands) {
      expect(h.fails(cmd, {}), cmd).toEqual({ code: R.ErrParams, message: 'mask must be a non-empty string' });
      expect(h.fails(cmd, { mask: '' }), cmd).toEqual({
        code: R.ErrParams,
        message: 'mask must be a non-empty string',
      });
      expect(h.fails(cmd, { mask: 7 }).code, cmd).toBe(R.ErrParams);
      expect(h.fails(cmd, { mask: 'x'.repeat(1025) }), cmd).toEqual({
        code: R.ErrParams,
        message: 'mask must be at most 1024 characters',
      });
    }
    for (const cmd of [
      'PositionGetBySymbol',
      'OrderGetBySymbol',
      'OrderRequestByGroupSymbol',
      'DealRequestByGroupSymbol',
    ]) {
      expect(h.fails(cmd, { symbol: 'EURUSD' }).message, cmd).toBe('mask must be a non-empty string');
    }
  });

  it('applies the mask together with a time window', () => {
    // demo\* deals from minute 1 to minute 12: the netting and vip deposits, then the fills of minutes 10 to 12.
    const window = { mask: 'demo\\*,!demo\\vip', fromTime: isoAt(1), toTime: isoAt(12) };
    expect(h.call('DealRequestByGroup', window).map((x: { deal: number }) => x.deal)).toEqual([
      d.deposit.netting,
      d.fill.retailEur,
      d.fill.nettingGbp,
    ]);
    expect(h.call('HistoryRequestByGroup', window).map((o: { order: number }) => o.order)).toEqual([
      d.position.retailEur,
      d.position.nettingGbp,
    ]);
  });
});
