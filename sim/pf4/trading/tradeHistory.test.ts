/**
 * The history of an account and its balance check: filters and order, the balance the history explains, the fix of
 * one it does not, and closes a rollback takes out again.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as records from '../../../shared/records/contract.js';
import { pf4Harness } from '../../../test/support/sim/worldHarness.js';
import { at, MINUTE, pf4Desk, pf4Trader, T0, type TradeRow } from '../../../test/support/sim/pf4TradingDesk.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('balance check and fix', () => {
  it('finds seeded accounts whose balance disagrees with their history, and fixes them', () => {
    const h = pf4Harness({ accounts: 300, trades: 100 }, 7);
    const diffs = h.call('AdmBalanceCheck', {});
    expect(diffs.length).toBeGreaterThan(0);
    for (const d of diffs) records.PF4BalanceDiff.parse(d);
    const { login, diff } = diffs[0];
    const before = h.call('UserRecordRequest', { login }).balance;
    expect(h.call('AdmBalanceFix', { logins: [login] })).toBe(true);
    expect(h.call('UserRecordRequest', { login }).balance).toBeCloseTo(before - diff, 2);
    expect(h.call('AdmBalanceCheck', { login }).diff).toBe(0);
    expect(h.call('AdmBalanceCheck', { logins: [login] })).toEqual([]);
  });

  it('keeps balance, credit and the server-derived fields through an account update, so the history still explains the balance', () => {
    const { h, login } = pf4Trader();
    h.call('TradeTransaction', {
      tradeTransactionType: 'BrBalance',
      tradeCommand: 'Credit',
      orderBy: login,
      price: 300,
    });
    const before = h.call('UserRecordRequest', { login });
    const mark = h.events.length;
    const updated = h.call('UserRecordUpdate', {
      login,
      record: { balance: 10_250, credit: 5, name: 'Renamed Trader', comment: 'vip' },
    });
    expect(updated).toEqual({ ...before, name: 'Renamed Trader', comment: 'vip' });
    expect(updated).toMatchObject({ balance: 10_000, credit: 300 });
    expect(h.call('UserRecordRequest', { login })).toEqual(updated);
    expect(h.call('AdmBalanceCheck', { login })).toEqual({ login, diff: 0 });
    expect(h.call('AdmBalanceCheck', { logins: [login] })).toEqual([]);
    // Nothing the margin record carries changed, so only the account is announced.
    expect(h.events.slice(mark)).toEqual([{ kind: 'users', op: 'update', record: updated }]);
    // The server-derived fields are not part of PF4UserUpdate at all.
    for (const field of ['prevBalance', 'prevMonthEquity', 'registrationDate', 'lastDate', 'lastIP', 'login']) {
      expect(h.fails('UserRecordUpdate', { login, record: { [field]: 0 } }).message, field).toMatch(
        new RegExp(`^record\\.${field}: `),
      );
    }
    expect(h.call('UserRecordRequest', { login })).toEqual(updated);
  });
});

describe('the history of an account', () => {
  it('answers an empty history and no balance difference for an account that never had an entry', () => {
    const { h, account, history } = pf4Desk();
    const login = account(0);
    expect(history(login)).toEqual([]);
    expect(h.call('AdmBalanceCheck', { login })).toEqual({ login, diff: 0 });
  });

  it('filters by close time with both bounds included and sorts by close time, then by ticket', () => {
    const { account, open, tx, history } = pf4Desk();
    const login = account(); // the deposit at T0
    vi.setSystemTime(T0 + 1 * MINUTE);
    const a = open(login);
    const c = open(login);
    vi.setSystemTime(T0 + 2 * MINUTE);
    const b = open(login);
    vi.setSystemTime(T0 + 4 * MINUTE);
    tx('BrOrderClose', { order: b.order });
    vi.setSystemTime(T0 + 6 * MINUTE);
    // Closed in this order at the same moment: the later ticket first.
    tx('BrOrderClose', { order: c.order });
    tx('BrOrderClose', { order: a.order });
    const tickets = (rows: TradeRow[]) => rows.map((r) => r.order);
    const deposit = history(login)[0].order;
    expect(tickets(history(login))).toEqual([deposit, b.order, a.order, c.order]);
    // b opened before the window and closed on its first instant; a and c closed on its last one.
    expect(tickets(history(login, { fromTime: at(T0 + 4 * MINUTE), toTime: at(T0 + 6 * MINUTE) }))).toEqual([
      b.order,
      a.order,
      c.order,
    ]);
    expect(tickets(history(login, { fromTime: at(T0 + 4 * MINUTE + 1), toTime: at(T0 + 6 * MINUTE) }))).toEqual([
      a.order,
      c.order,
    ]);
    expect(tickets(history(login, { fromTime: at(T0), toTime: at(T0 + 6 * MINUTE - 1) }))).toEqual([deposit, b.order]);
    expect(tickets(history(login, { fromTime: at(T0 + 5 * MINUTE), toTime: at(T0 + 5 * MINUTE) }))).toEqual([]);
  });

  it('sorts entries restored out of order by their close time, a balance entry by its time', () => {
    const { h, account, history } = pf4Desk();
    const login = account(0);
    h.call('BackupRestoreOrders', {
      records: [
        {
          order: 900_001,
          login,
          symbol: 'EURUSD',
          tradeCommand: 'Buy',
          volume: 100,
          openPrice: 1.1,
          openTime: at(T0 - 10 * MINUTE),
          closeTime: at(T0 - 2 * MINUTE),
          closePrice: 1.101,
          profit: 100,
        },
        {
          order: 900_002,
          login,
          symbol: 'EURUSD',
          tradeCommand: 'Sell',
          volume: 100,
          openPrice: 1.1,
          openTime: at(T0 - 5 * MINUTE),
          closeTime: at(T0 - 3 * MINUTE),
          closePrice: 1.101,
          profit: -100,
        },
        {
          order: 900_003,
          login,
          tradeCommand: 'Balance',
          openTime: at(T0 - 4 * MINUTE),
          closeTime: at(T0 - 4 * MINUTE),
          profit: 50,
        },
      ],
    });
    expect(history(login).map((r) => r.order)).toEqual([900_003, 900_002, 900_001]);
    expect(history(login, { fromTime: at(T0 - 3 * MINUTE) }).map((r) => r.order)).toEqual([900_002, 900_001]);
    // Restored entries explain the balance like any other: 100 - 100 + 50 against a balance of 0.
    expect(h.call('AdmBalanceCheck', { login })).toEqual({ login, diff: -50 });
  });

  it('explains a balance by profit, commission and swaps of the closed trades', () => {
    const { h, account, open, tx, history } = pf4Desk();
    // real\standard charges 3.5 USD per lot.
    const login = account(10_000, 'real\\standard');
    const trade = open(login, { volume: 200 });
    expect(trade.commission).toBe(-7);
    h.world.rollover(Date.UTC(2026, 5, 4)); // a Thursday: one day of EURUSD's -2.5 points long swap on 2 lots
    expect(h.call('TradeRecordRequest', { order: trade.order }).storage).toBe(-5);
    tx('BrOrderClose', { order: trade.order });
    const closed = history(login).at(-1) as TradeRow;
    // Closed at the bid, 1 point under the ask it opened at: 2 lots lose 20 USD.
    expect(closed).toMatchObject({ profit: -20, commission: -7, storage: -5 });
    expect(h.call('UserRecordRequest', { login }).balance).toBe(9968);
    expect(h.call('AdmBalanceCheck', { login })).toEqual({ login, diff: 0 });
  });

  it('fixes nothing and announces nothing for an intact account', () => {
    const { h, account, open, since, journal } = pf4Desk();
    const login = account();
    open(login);
    const after = since();
    expect(h.call('AdmBalanceFix', { logins: [login] })).toBe(true);
    expect(after()).toEqual([]);
    expect(journal().filter((m) => m.startsWith('balance of'))).toEqual([]);
  });

  it('fixes a balance the history does not explain, journals the correction and announces the account', () => {
    const { h, since, journal } = pf4Desk();
    const login = 700_001;
    h.call('BackupRestoreUsers', { records: [{ login, group: 'real\\vip', name: 'Restored', balance: 2500 }] });
    expect(h.call('AdmBalanceCheck', { login })).toEqual({ login, diff: 2500 });
    const after = since();
    expect(h.call('AdmBalanceFix', { logins: [login] })).toBe(true);
    expect(h.call('UserRecordRequest', { login }).balance).toBe(0);
    expect(after()).toEqual([{ kind: 'users', op: 'update', record: h.call('UserRecordRequest', { login }) }]);
    expect(journal()).toContain(`balance of ${login} fixed by -2500`);
  });

  it("takes a rolled-back close out of the history, also when it was the account's first entry", () => {
    const { h, open, tick, history } = pf4Desk();
    // A restored account holds money its history does not show, so the close is its first entry.
    const login = 700_002;
    h.call('BackupRestoreUsers', { records: [{ login, group: 'real\\vip', name: 'Restored', balance: 10_000 }] });
    const trade = open(login, { sl: 1.099 });
    const count = h.world.engine.historyCount;
    tick(1.0989, 1.099);
    expect(history(login).map((r) => [r.order, r.activationType])).toEqual([[trade.order, 'SL']]);
    expect(h.world.engine.historyCount).toBe(count + 1);
    expect(h.call('TradeClearRollback', { order: trade.order })).toBe(true);
    expect(history(login)).toEqual([]);
    expect(h.world.engine.historyCount).toBe(count);
    expect(h.call('UserRecordRequest', { login }).balance).toBe(10_000);
  });

  it('keeps the other entries when it takes a rolled-back close out', () => {
    const { h, account, open, tick, history } = pf4Desk();
    const login = account();
    const kept = open(login);
    const stopped = open(login, { sl: 1.099 });
    h.call('TradeTransaction', { tradeTransactionType: 'BrOrderClose', order: kept.order });
    tick(1.0989, 1.099);
    const deposit = history(login)[0].order;
    expect(history(login).map((r) => r.order)).toEqual([deposit, kept.order, stopped.order]);
    expect(h.call('TradeClearRollback', { order: stopped.order })).toBe(true);
    expect(history(login).map((r) => r.order)).toEqual([deposit, kept.order]);
  });
});
