/**
 * The PF4 trading engine's rules, one by one, on a small world driven by manual ticks and a fixed clock: the history
 * and its balance check, margin by calculation mode, the account, symbol and group rules a transaction must pass,
 * modifying and closing pending orders, partial closes, manual and automatic activation, balance and credit entries,
 * the rollback of an activation and the freeze level.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PF4_RESULT as R } from '../../shared/resultCodes.js';
import { pf4Harness } from '../../test/support/sim/worldHarness.js';

/** Wednesday 3 June 2026, noon UTC: every symbol trades round the clock, and no check reads the real clock. */
const T0 = Date.UTC(2026, 5, 3, 12, 0);
const MINUTE = 60_000;
const at = (ms: number) => new Date(ms).toISOString();

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(T0);
});
afterEach(() => { vi.useRealTimers(); });

type Row = { order: number; login: number; tradeCommand: string; [field: string]: unknown };

/** A world with EURUSD at 1.10000/1.10010; accounts are made on demand (default real\vip: no commission, 1:100). */
function setUp(overrides: Record<string, unknown> = {}) {
  const h = pf4Harness(overrides);
  const tick = (bid: number, ask: number, symbol = 'EURUSD') => h.call('SymbolSendTick', { symbol, bid, ask });
  tick(1.1, 1.1001);
  const deposit = (login: number, amount: number, tradeCommand = 'Balance', comment?: string) => h.call('TradeTransaction', {
    tradeTransactionType: 'BrBalance', tradeCommand, orderBy: login, price: amount, ...(comment === undefined ? {} : { comment }) });
  const account = (money = 10_000, group = 'real\\vip', leverage = 100): number => {
    const { login } = h.call('UserRecordNew', { record: { group, name: 'Rule Tester', leverage } });
    if (money > 0) deposit(login, money);
    return login;
  };
  const openFields = (login: number, fields: Record<string, unknown>) => ({
    tradeTransactionType: 'BrOrderOpen', orderBy: login, symbol: 'EURUSD', tradeCommand: 'Buy', volume: 100, ...fields });
  const open = (login: number, fields: Record<string, unknown> = {}): Row => h.call('TradeTransaction', openFields(login, fields));
  const openFails = (login: number, fields: Record<string, unknown> = {}) => h.fails('TradeTransaction', openFields(login, fields));
  const tx = (type: string, fields: Record<string, unknown>) => h.call('TradeTransaction', { tradeTransactionType: type, ...fields });
  const txFails = (type: string, fields: Record<string, unknown>) => h.fails('TradeTransaction', { tradeTransactionType: type, ...fields });
  const history = (login: number, range: Record<string, unknown> = {}): Row[] => h.call('TradesUserHistory', { login, ...range });
  const openOrders = (login: number): number[] => h.call('TradesUserRequest', { login }).map((r: Row) => r.order);
  const margin = (login: number) => h.call('MarginLevelRequest', { login });
  const symbol = (name: string, record: Record<string, unknown>) => h.call('CfgUpdateSymbol', { symbol: name, record });
  const group = (name: string, record: Record<string, unknown>) => h.call('GroupRecordUpdate', { group: name, record });
  const journal = () => h.world.journalEntries().map((line) => line.message);
  const since = () => {
    const mark = h.events.length;
    return () => h.events.slice(mark);
  };
  return { h, tick, deposit, account, open, openFails, tx, txFails, history, openOrders, margin, symbol, group, journal, since };
}

describe('the history of an account', () => {
  it('answers an empty history and no balance difference for an account that never had an entry', () => {
    const { h, account, history } = setUp();
    const login = account(0);
    expect(history(login)).toEqual([]);
    expect(h.call('AdmBalanceCheck', { login })).toEqual({ login, diff: 0 });
  });

  it('filters by close time with both bounds included and sorts by close time, then by ticket', () => {
    const { h, account, open, tx, history } = setUp();
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
    const tickets = (rows: Row[]) => rows.map((r) => r.order);
    const deposit = history(login)[0].order;
    expect(tickets(history(login))).toEqual([deposit, b.order, a.order, c.order]);
    // b opened before the window and closed on its first instant; a and c closed on its last one.
    expect(tickets(history(login, { fromTime: at(T0 + 4 * MINUTE), toTime: at(T0 + 6 * MINUTE) }))).toEqual([b.order, a.order, c.order]);
    expect(tickets(history(login, { fromTime: at(T0 + 4 * MINUTE + 1), toTime: at(T0 + 6 * MINUTE) }))).toEqual([a.order, c.order]);
    expect(tickets(history(login, { fromTime: at(T0), toTime: at(T0 + 6 * MINUTE - 1) }))).toEqual([deposit, b.order]);
    expect(tickets(history(login, { fromTime: at(T0 + 5 * MINUTE), toTime: at(T0 + 5 * MINUTE) }))).toEqual([]);
  });

  it('sorts entries restored out of order by their close time, a balance entry by its time', () => {
    const { h, account, history } = setUp();
    const login = account(0);
    h.call('BackupRestoreOrders', { records: [
      { order: 900_001, login, symbol: 'EURUSD', tradeCommand: 'Buy', volume: 100, openPrice: 1.1, openTime: at(T0 - 10 * MINUTE),
        closeTime: at(T0 - 2 * MINUTE), closePrice: 1.101, profit: 100 },
      { order: 900_002, login, symbol: 'EURUSD', tradeCommand: 'Sell', volume: 100, openPrice: 1.1, openTime: at(T0 - 5 * MINUTE),
        closeTime: at(T0 - 3 * MINUTE), closePrice: 1.101, profit: -100 },
      { order: 900_003, login, tradeCommand: 'Balance', openTime: at(T0 - 4 * MINUTE), closeTime: at(T0 - 4 * MINUTE), profit: 50 },
    ] });
    expect(history(login).map((r) => r.order)).toEqual([900_003, 900_002, 900_001]);
    expect(history(login, { fromTime: at(T0 - 3 * MINUTE) }).map((r) => r.order)).toEqual([900_002, 900_001]);
    // Restored entries explain the balance like any other: 100 - 100 + 50 against a balance of 0.
    expect(h.call('AdmBalanceCheck', { login })).toEqual({ login, diff: -50 });
  });

  it('explains a balance by profit, commission and swaps of the closed trades', () => {
    const { h, account, open, tx, history } = setUp();
    // real\standard charges 3.5 USD per lot.
    const login = account(10_000, 'real\\standard');
    const trade = open(login, { volume: 200 });
    expect(trade.commission).toBe(-7);
    h.world.rollover(Date.UTC(2026, 5, 4)); // a Thursday: one day of EURUSD's -2.5 points long swap on 2 lots
    expect(h.call('TradeRecordRequest', { order: trade.order }).storage).toBe(-5);
    tx('BrOrderClose', { order: trade.order });
    const closed = history(login).at(-1) as Row;
    // Closed at the bid, 1 point under the ask it opened at: 2 lots lose 20 USD.
    expect(closed).toMatchObject({ profit: -20, commission: -7, storage: -5 });
    expect(h.call('UserRecordRequest', { login }).balance).toBe(9968);
    expect(h.call('AdmBalanceCheck', { login })).toEqual({ login, diff: 0 });
  });

  it('fixes nothing and announces nothing for an intact account', () => {
    const { h, account, open, since, journal } = setUp();
    const login = account();
    open(login);
    const after = since();
    expect(h.call('AdmBalanceFix', { logins: [login] })).toBe(true);
    expect(after()).toEqual([]);
    expect(journal().filter((m) => m.startsWith('balance of'))).toEqual([]);
  });

  it('fixes a balance the history does not explain, journals the correction and announces the account', () => {
    const { h, since, journal } = setUp();
    const login = 700_001;
    h.call('BackupRestoreUsers', { records: [{ login, group: 'real\\vip', name: 'Restored', balance: 2500 }] });
    expect(h.call('AdmBalanceCheck', { login })).toEqual({ login, diff: 2500 });
    const after = since();
    expect(h.call('AdmBalanceFix', { logins: [login] })).toBe(true);
    expect(h.call('UserRecordRequest', { login }).balance).toBe(0);
    expect(after()).toEqual([{ kind: 'users', op: 'update', record: h.call('UserRecordRequest', { login }) }]);
    expect(journal()).toContain(`balance of ${login} fixed by -2500`);
  });

  it('takes a rolled-back close out of the history, also when it was the account\'s first entry', () => {
    const { h, open, tick, history } = setUp();
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
    const { h, account, open, tick, history } = setUp();
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

describe('margin by calculation mode', () => {
  it('margins futures by the initial margin per lot in the symbol\'s currency', () => {
    const { symbol, account, open, margin } = setUp();
    symbol('EURUSD', { marginCalculationMode: 'Futures', marginInitial: 500 });
    const login = account();
    open(login, { volume: 200 });
    expect(margin(login).margin).toBe(1000);
  });

  it('margins futures without an initial margin on leverage at the open price', () => {
    const { symbol, account, open, margin } = setUp();
    symbol('EURUSD', { marginCalculationMode: 'Futures', marginInitial: 0 });
    const login = account();
    open(login, { volume: 100 });
    // 1 lot * 100000 * 1.1001 (the ask) / 100.
    expect(margin(login).margin).toBe(1100.1);
  });

  it('converts a futures margin from the symbol\'s currency, or from the profit currency when it names none', () => {
    const { symbol, account, open, margin, tick } = setUp();
    tick(150, 150.02, 'USDJPY');
    symbol('USDJPY', { marginCalculationMode: 'Futures', marginInitial: 7500.5, currency: 'USD' });
    const inUsd = account();
    open(inUsd, { symbol: 'USDJPY' });
    expect(margin(inUsd).margin).toBe(7500.5);
    symbol('USDJPY', { currency: '' });
    const inYen = account();
    open(inYen, { symbol: 'USDJPY' });
    // 7500.5 JPY at the USDJPY mid of 150.01.
    expect(margin(inYen).margin).toBe(50);
  });

  it('margins CFDs on leverage at the open price and ignores an initial margin', () => {
    const { symbol, account, open, margin, tick } = setUp();
    tick(2000, 2000.5, 'XAUUSD');
    symbol('XAUUSD', { marginInitial: 300 });
    const login = account();
    open(login, { symbol: 'XAUUSD', volume: 100 });
    // 1 lot * 100 oz * 2000.5 / 100, halved by real\vip's XAUUSD margin divider of 2.
    expect(margin(login).margin).toBe(1000.25);
  });

  it('converts a CFD margin from the symbol\'s currency, or from the profit currency when it names none', () => {
    const { symbol, account, open, margin, tick } = setUp();
    tick(150, 150.02, 'USDJPY');
    symbol('USDJPY', { marginCalculationMode: 'CFD', currency: '' });
    const inYen = account();
    open(inYen, { symbol: 'USDJPY', volume: 100 });
    // 1 lot * 100000 * 150.02 / 100 = 150020 JPY at the mid of 150.01.
    expect(margin(inYen).margin).toBe(1000.07);
    symbol('USDJPY', { currency: 'USD' });
    const inUsd = account();
    open(inUsd, { symbol: 'USDJPY', volume: 1 });
    expect(margin(inUsd).margin).toBe(1500.2);
  });
});

describe('what an open must pass', () => {
  it('names the unknown account and the unknown symbol', () => {
    const { account, openFails } = setUp();
    expect(openFails(42)).toEqual({ code: R.InvalidData, message: 'orderBy: login 42 not found' });
    expect(openFails(account(), { symbol: 'NOPE' })).toEqual({ code: R.InvalidData, message: 'symbol NOPE not found' });
  });

  it('refuses a symbol whose configuration was deleted and a hidden one', () => {
    const { h, account, openFails } = setUp();
    const login = account();
    h.call('CfgDeleteSymbol', { pos: h.world.symbols.indexOf('GBPUSD') });
    expect(openFails(login, { symbol: 'GBPUSD' })).toEqual({ code: R.InvalidData, message: 'symbol GBPUSD not found' });
    h.call('SymbolHide', { symbol: 'USDJPY' });
    expect(openFails(login, { symbol: 'USDJPY' })).toEqual({ code: R.TradeDisable, message: 'symbol USDJPY is not in the active set' });
  });

  it('refuses a disabled account', () => {
    const { h, account, openFails, open } = setUp();
    const login = account();
    h.call('UsersGroupOp', { record: { command: 'Disable', logins: [login] } });
    expect(openFails(login)).toEqual({ code: R.TradeDisable, message: `account ${login} is disabled` });
    h.call('UsersGroupOp', { record: { command: 'Enable', logins: [login] } });
    expect(open(login).tradeCommand).toBe('Buy');
  });

  it('refuses symbols whose trade mode is No or Close, each with its reason', () => {
    const { symbol, account, openFails } = setUp();
    const login = account();
    symbol('EURUSD', { tradeMode: 'No' });
    expect(openFails(login)).toEqual({ code: R.TradeDisable, message: 'trading EURUSD is disabled' });
    symbol('EURUSD', { tradeMode: 'Close' });
    expect(openFails(login)).toEqual({ code: R.TradeDisable, message: 'trading EURUSD is close-only' });
  });

  it('lets a long-only symbol be bought and refuses selling it', () => {
    const { symbol, account, open, openFails } = setUp();
    const login = account();
    symbol('EURUSD', { longOnly: 1 });
    expect(openFails(login, { tradeCommand: 'Sell' })).toEqual({ code: R.TradeLongOnly, message: 'EURUSD allows long positions only' });
    expect(openFails(login, { tradeCommand: 'SellLimit', price: 1.102 }).code).toBe(R.TradeLongOnly);
    expect(open(login, { tradeCommand: 'Buy' }).tradeCommand).toBe('Buy');
    expect(open(login, { tradeCommand: 'BuyLimit', price: 1.099 }).tradeCommand).toBe('BuyLimit');
  });

  it('counts open trades and pending orders against the group\'s maximum', () => {
    const { group, account, open, openFails, openOrders } = setUp();
    group('real\\vip', { maxPositions: 2 });
    const login = account();
    const first = open(login);
    const second = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    expect(openFails(login)).toEqual({ code: R.TradeTooManyOrders, message: `account ${login} has reached 2 orders` });
    expect(openOrders(login)).toEqual([first.order, second.order]);
    // Another account of the group has its own count.
    expect(open(account()).tradeCommand).toBe('Buy');
  });

  it('refuses an opposite market trade on the same symbol where the group prohibits hedging', () => {
    const { group, account, open, openFails } = setUp();
    group('real\\vip', { hedgeProhibited: 1 });
    const login = account();
    open(login);
    expect(openFails(login, { tradeCommand: 'Sell' }))
      .toEqual({ code: R.TradeHedgeProhibited, message: 'hedging EURUSD is prohibited in group real\\vip' });
    // The same direction, another symbol and a pending order are no hedge.
    expect(open(login).tradeCommand).toBe('Buy');
    expect(open(login, { tradeCommand: 'Sell', symbol: 'GBPUSD', volume: 10 }).tradeCommand).toBe('Sell');
    expect(open(login, { tradeCommand: 'SellLimit', price: 1.102 }).tradeCommand).toBe('SellLimit');
  });

  it('does not count pending orders as a position to hedge against', () => {
    const { group, account, open, openFails } = setUp();
    group('real\\vip', { hedgeProhibited: 1 });
    const login = account();
    open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    expect(open(login, { tradeCommand: 'Sell' }).tradeCommand).toBe('Sell');
    expect(openFails(login, { tradeCommand: 'Buy' }).code).toBe(R.TradeHedgeProhibited);
  });

  it('lets an account hedge in a group that allows it', () => {
    const { account, open } = setUp();
    const login = account();
    open(login);
    expect(open(login, { tradeCommand: 'Sell' }).tradeCommand).toBe('Sell');
  });

  it('takes a pending order\'s expiration from 10 minutes ahead on, and none for a time not after 1970', () => {
    const { account, open, openFails } = setUp();
    const login = account();
    const limit = { tradeCommand: 'SellLimit', price: 1.102 };
    expect(openFails(login, { ...limit, expiration: at(T0 + 10 * MINUTE - 1000) }))
      .toEqual({ code: R.TradeExpirationDenied, message: 'expiration must be at least 10 minutes ahead' });
    expect(open(login, { ...limit, expiration: at(T0 + 10 * MINUTE) }).expiration).toBe(at(T0 + 10 * MINUTE));
    expect('expiration' in open(login, { ...limit, expiration: '1970-01-01T00:00:00Z' })).toBe(false);
    expect('expiration' in open(login, limit)).toBe(false);
  });

  it('needs a price for a pending order', () => {
    const { account, openFails } = setUp();
    expect(openFails(account(), { tradeCommand: 'SellStop' }))
      .toEqual({ code: R.InvalidData, message: 'price is required for a pending order' });
  });

  it('refuses a symbol the group may not trade and volumes off the group\'s lot grid', () => {
    const { h, account, open, openFails } = setUp();
    const login = account();
    const sec = h.world.groupSecurities.get('real\\vip')![0];
    Object.assign(sec, { lotMin: 3, lotMax: 503, lotStep: 5 });
    expect(openFails(login, { volume: 5 }))
      .toEqual({ code: R.TradeBadVolume, message: 'volume 5 must be between 3 and 503 in steps of 5 (1/100 lot)' });
    expect(openFails(login, { volume: 2 }).code).toBe(R.TradeBadVolume);
    expect(openFails(login, { volume: 508 }).code).toBe(R.TradeBadVolume);
    expect([3, 8, 503].map((volume) => open(login, { volume }).volume)).toEqual([3, 8, 503]);
    // Without a grid of its own the group trades 1 to 100000 in steps of 1.
    Object.assign(sec, { lotMin: 0, lotMax: 0, lotStep: 0 });
    expect(openFails(login, { volume: 100_001 }))
      .toEqual({ code: R.TradeBadVolume, message: 'volume 100001 must be between 1 and 100000 in steps of 1 (1/100 lot)' });
    expect(openFails(login, { volume: 100_000 }).code).toBe(R.TradeNoMoney);
    expect(open(login, { volume: 1 }).volume).toBe(1);
    sec.trade = 0;
    expect(openFails(login, { volume: 15 })).toEqual({ code: R.TradeDisable, message: 'group real\\vip may not trade EURUSD' });
  });
});

describe('modifying a pending order', () => {
  it('moves its price, checked against the market like a new order, and keeps it for a price of 0', () => {
    const { account, open, tx, txFails } = setUp();
    const order = open(account(), { tradeCommand: 'BuyLimit', price: 1.099, sl: 1.098 });
    expect(tx('BrOrderModify', { order: order.order, price: 1.0985 })).toMatchObject({ openPrice: 1.0985, sl: 1.098 });
    expect(tx('BrOrderModify', { order: order.order, price: 0, tp: 1.1 })).toMatchObject({ openPrice: 1.0985, tp: 1.1 });
    expect(txFails('BrOrderModify', { order: order.order, price: 1.1005 }))
      .toEqual({ code: R.TradeBadPrices, message: 'price 1.1005 is on the wrong side of the market for BuyLimit' });
  });

  it('journals a modification and a deletion with the order they leave', () => {
    const { account, open, tx, journal } = setUp();
    const login = account();
    const order = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    tx('BrOrderModify', { order: order.order, price: 1.098 });
    tx('BrOrderDelete', { order: order.order });
    expect(journal().slice(-2)).toEqual([
      `'${login}': modify #${order.order} buylimit 1.00 EURUSD at 1.098`, `'${login}': #${order.order} buylimit 1.00 EURUSD at 1.098 deleted`]);
  });

  it('journals an administrator\'s edit of a trade', () => {
    const { h, account, open, journal } = setUp();
    const login = account();
    const trade = open(login);
    h.call('AdmTradeRecordModify', { ticket: trade.order, record: { comment: 'checked' } });
    expect(journal().at(-1)).toBe(`'${login}': #${trade.order} buy 1.00 EURUSD at 1.1001 modified by the administrator`);
  });

  it('keeps a market trade\'s open price whatever price the modification names', () => {
    const { account, open, tx } = setUp();
    const trade = open(account());
    expect(tx('BrOrderModify', { order: trade.order, price: 1.05, sl: 1.09 })).toMatchObject({ openPrice: 1.1001, sl: 1.09 });
  });

  it('sets an expiration at least 10 minutes ahead, and removes it with a time not after 1970', () => {
    const { account, open, tx, txFails, h } = setUp();
    const order = open(account(), { tradeCommand: 'SellLimit', price: 1.102 });
    const denied = { code: R.TradeExpirationDenied, message: 'expiration must be at least 10 minutes ahead' };
    expect(txFails('BrOrderModify', { order: order.order, expiration: at(T0 + 10 * MINUTE - 1000) })).toEqual(denied);
    expect(txFails('BrOrderModify', { order: order.order, expiration: at(T0 + 5 * MINUTE) })).toEqual(denied);
    expect(tx('BrOrderModify', { order: order.order, expiration: at(T0 + 10 * MINUTE) }).expiration).toBe(at(T0 + 10 * MINUTE));
    expect(tx('BrOrderModify', { order: order.order, expiration: at(T0 + 90 * 24 * 60 * MINUTE) }).expiration)
      .toBe(at(T0 + 90 * 24 * 60 * MINUTE));
    // A modification that names no expiration keeps it.
    expect(tx('BrOrderModify', { order: order.order, sl: 1.103 }).expiration).toBe(at(T0 + 90 * 24 * 60 * MINUTE));
    const cleared = tx('BrOrderModify', { order: order.order, expiration: '1970-01-01T00:00:00Z' });
    expect('expiration' in cleared).toBe(false);
    tx('BrOrderModify', { order: order.order, expiration: at(T0 + 20 * MINUTE) });
    const before1970 = tx('BrOrderModify', { order: order.order, expiration: '1969-12-31T23:59:59Z' });
    expect('expiration' in before1970).toBe(false);
    expect('expiration' in h.call('TradeRecordRequest', { order: order.order })).toBe(false);
  });

  it('gives a market trade no expiration', () => {
    const { account, open, tx } = setUp();
    const trade = open(account());
    expect('expiration' in tx('BrOrderModify', { order: trade.order, expiration: at(T0 + 5 * MINUTE) })).toBe(false);
  });
});

describe('unknown tickets and accounts', () => {
  it('names the order a transaction cannot find and the login a balance check cannot find', () => {
    const { h, txFails } = setUp();
    for (const type of ['BrOrderClose', 'BrOrderModify', 'BrOrderDelete', 'BrOrderActivate']) {
      expect(txFails(type, { order: 99 }), type).toEqual({ code: R.InvalidData, message: 'order 99 not found' });
    }
    expect(h.fails('AdmBalanceCheck', { login: 42 })).toEqual({ code: R.InvalidData, message: 'login 42 not found' });
  });
});

describe('closing', () => {
  it('refuses to close a pending order', () => {
    const { account, open, txFails } = setUp();
    const order = open(account(), { tradeCommand: 'BuyStop', price: 1.102 });
    expect(txFails('BrOrderClose', { order: order.order }))
      .toEqual({ code: R.TradeBadPrices, message: `order ${order.order} is pending: delete it instead` });
  });

  it('closes between 1 and the whole volume: all of it closes normally, a part leaves a remainder', () => {
    const { h, account, open, tx, txFails, openOrders } = setUp();
    const login = account();
    const trade = open(login);
    const bounds = { code: R.TradeBadVolume, message: 'volume must be between 1 and 100' };
    expect(txFails('BrOrderClose', { order: trade.order, volume: 101 })).toEqual(bounds);
    expect(txFails('BrOrderClose', { order: trade.order, volume: -5 })).toEqual(bounds);
    // The transaction reads a volume of 0 as the whole trade; the engine itself refuses 0 and fractions.
    expect(() => h.world.engine.close(trade.order, { volume: 0 })).toThrow('volume must be between 1 and 100');
    expect(() => h.world.engine.close(trade.order, { volume: 50.5 })).toThrow('volume must be between 1 and 100');
    expect(tx('BrOrderClose', { order: trade.order, volume: 1 })).toMatchObject({ tradeRecordState: 'ClosedPart', volume: 1 });
    const [rest] = openOrders(login);
    expect(tx('BrOrderClose', { order: rest, volume: 99 })).toMatchObject({ order: rest, tradeRecordState: 'ClosedNormal', volume: 99 });
    expect(openOrders(login)).toEqual([]);
  });
});

describe('activating a pending order', () => {
  it('activates at the market price on request and charges the commission', () => {
    const { account, open, tx, margin } = setUp();
    const login = account(10_000, 'real\\standard');
    const order = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    expect(margin(login).margin).toBe(0);
    vi.setSystemTime(T0 + MINUTE);
    const active = tx('BrOrderActivate', { order: order.order });
    expect(active).toMatchObject({ order: order.order, tradeCommand: 'Buy', openPrice: 1.1001, commission: -3.5,
      openTime: at(T0 + MINUTE), timeStamp: at(T0 + MINUTE) });
    expect('expiration' in active).toBe(false);
    expect(margin(login).margin).toBe(1100.05);
  });

  it('activates a sell order at the bid and holds nothing for a rollback', () => {
    const { h, account, open, tx } = setUp();
    const order = open(account(), { tradeCommand: 'SellStop', price: 1.099 });
    expect(tx('BrOrderActivate', { order: order.order })).toMatchObject({ tradeCommand: 'Sell', openPrice: 1.1 });
    // A dealer's own activation is not an automatic one: there is nothing to roll back.
    expect(h.call('TradeClearRollback', { order: order.order })).toBe(false);
  });

  it('refuses to activate a market trade', () => {
    const { account, open, txFails } = setUp();
    const trade = open(account());
    expect(txFails('BrOrderActivate', { order: trade.order }))
      .toEqual({ code: R.TradeBadPrices, message: `order ${trade.order} is not pending` });
  });

  it('leaves the order pending when the account cannot hold the margin', () => {
    const { h, account, open, txFails } = setUp();
    const login = account(500);
    const order = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    expect(txFails('BrOrderActivate', { order: order.order }))
      .toEqual({ code: R.TradeNoMoney, message: `not enough money to activate order ${order.order}` });
    expect(h.call('TradeRecordRequest', { order: order.order })).toMatchObject({ tradeCommand: 'BuyLimit', openPrice: 1.099 });
  });

  it('cancels an order the market reaches when the account cannot hold the margin', () => {
    const { h, account, open, tick, history, openOrders, journal } = setUp();
    const login = account(500);
    const order = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    tick(1.0988, 1.0989);
    expect(openOrders(login)).toEqual([]);
    expect(history(login).at(-1)).toMatchObject({ order: order.order, tradeCommand: 'BuyLimit', tradeRecordState: 'Deleted' });
    expect(journal()).toContain(`'${login}': pending #${order.order} cancelled [no money]`);
    expect(h.call('UserRecordRequest', { login }).balance).toBe(500);
  });

  it('rolls an automatic activation back to the pending order, freeing its margin', () => {
    const { h, account, open, tick, margin, since } = setUp();
    const login = account();
    const order = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    tick(1.0988, 1.0989);
    expect(h.call('TradeRecordRequest', { order: order.order })).toMatchObject({ tradeCommand: 'Buy', openPrice: 1.0989 });
    expect(margin(login).margin).toBe(1098.85);
    const after = since();
    expect(h.call('TradeClearRollback', { order: order.order })).toBe(true);
    const restored = h.call('TradeRecordRequest', { order: order.order });
    expect(restored).toMatchObject({ tradeCommand: 'BuyLimit', openPrice: 1.099, activationType: 'PendingRollback', timeStamp: at(T0) });
    expect(margin(login)).toMatchObject({ margin: 0, equity: 10_000 });
    expect(after().filter((e) => e.kind === 'trades')).toEqual([{ kind: 'trades', op: 'update', record: restored }]);
    // The dealer owns it now: the market reaching it again does not activate it.
    tick(1.0985, 1.0986);
    expect(h.call('TradeRecordRequest', { order: order.order }).tradeCommand).toBe('BuyLimit');
  });
});

describe('balance and credit entries', () => {
  it('refuses an amount of 0', () => {
    const { account, txFails } = setUp();
    expect(txFails('BrBalance', { tradeCommand: 'Balance', orderBy: account(), price: 0 }))
      .toEqual({ code: R.InvalidData, message: 'price (the amount) must be a non-zero number' });
  });

  it('names the unknown account', () => {
    const { txFails } = setUp();
    expect(txFails('BrBalance', { tradeCommand: 'Credit', orderBy: 42, price: 10 }))
      .toEqual({ code: R.InvalidData, message: 'orderBy: login 42 not found' });
  });

  it('writes a closed dealer entry without symbol, volume or prices', () => {
    const { account, deposit, history } = setUp();
    const login = account(0);
    const entry = deposit(login, 250.5);
    expect(entry).toEqual({
      order: entry.order, login, symbol: '', digits: 0, tradeCommand: 'Balance', volume: 0, volumeLots: 0, openPrice: 0, sl: 0,
      tp: 0, openTime: at(T0), closeTime: at(T0), closePrice: 0, commission: 0, commissionAgent: 0, storage: 0, profit: 250.5,
      taxes: 0, magic: 0, comment: 'Deposit', tradeRecordReason: 'Dealer', timeStamp: at(T0), tradeRecordState: 'ClosedNormal',
      activationType: 'None', marginRate: 1,
    });
    expect(history(login)).toEqual([entry]);
  });

  it('withdraws up to the free margin and no further', () => {
    const { h, account, open, deposit, txFails, margin } = setUp();
    const login = account(2000);
    open(login);
    // Equity 1990 (the trade is down the spread, 10 USD) less 1100.05 of margin.
    expect(margin(login).free).toBe(889.95);
    expect(txFails('BrBalance', { tradeCommand: 'Balance', orderBy: login, price: -889.96 }))
      .toEqual({ code: R.TradeNoMoney, message: 'free margin 889.95 does not cover 889.96' });
    deposit(login, -889.95);
    expect(h.call('UserRecordRequest', { login }).balance).toBe(1110.05);
    expect(margin(login).free).toBe(0);
  });

  it('takes a deposit into an account whose free margin is negative', () => {
    const { h, account, open, deposit, tick, margin } = setUp();
    const login = account(1500);
    open(login);
    tick(1.093, 1.0931); // 710 points under the open price: equity 790 on 1100.05 of margin, a margin call, no stop-out
    expect(margin(login)).toMatchObject({ equity: 790, free: -310.05, levelType: 'MarginCall' });
    deposit(login, 100);
    expect(h.call('UserRecordRequest', { login }).balance).toBe(1600);
    expect(margin(login)).toMatchObject({ equity: 890, free: -210.05 });
  });

  it('takes credit back only as far as the account has it', () => {
    const { h, account, deposit, txFails } = setUp();
    const login = account();
    deposit(login, 100, 'Credit');
    expect(txFails('BrBalance', { tradeCommand: 'Credit', orderBy: login, price: -150 }))
      .toEqual({ code: R.TradeNoMoney, message: 'credit 100 does not cover 150' });
    deposit(login, -40, 'Credit');
    deposit(login, -60, 'Credit');
    expect(h.call('UserRecordRequest', { login })).toMatchObject({ balance: 10_000, credit: 0 });
  });

  it('lets a withdrawal exceed the credit when the free margin covers it', () => {
    const { h, account, deposit } = setUp();
    const login = account();
    deposit(login, 100, 'Credit');
    deposit(login, -150);
    expect(h.call('UserRecordRequest', { login })).toMatchObject({ balance: 9850, credit: 100 });
  });

  it('names entries Deposit, Withdrawal or Credit unless given a comment', () => {
    const { account, deposit, history } = setUp();
    const login = account();
    deposit(login, -100);
    deposit(login, 50, 'Credit');
    deposit(login, 25, 'Balance', 'bonus');
    expect(history(login).map((r) => [r.tradeCommand, r.profit, r.comment])).toEqual([
      ['Balance', 10_000, 'Deposit'], ['Balance', -100, 'Withdrawal'], ['Credit', 50, 'Credit'], ['Balance', 25, 'bonus']]);
  });
});

describe('the open orders of an account', () => {
  it('lists them by ticket after an activation and a rollback have re-filed them', () => {
    const { account, open, tick, openOrders, h } = setUp();
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

describe('TradeCheckStops', () => {
  it('names an unknown symbol, and a symbol whose configuration was deleted', () => {
    const { h, account } = setUp();
    const check = (symbol: string) => h.fails('TradeCheckStops', { record: {
      tradeTransactionType: 'BrOrderOpen', orderBy: account(), symbol, tradeCommand: 'BuyLimit', volume: 100, price: 1 } });
    expect(check('NOPE')).toEqual({ code: R.InvalidData, message: 'symbol NOPE not found' });
    // The feed still quotes a deleted symbol; without its configuration there is nothing to check against.
    h.call('CfgDeleteSymbol', { pos: h.world.symbols.indexOf('GBPUSD') });
    expect(h.world.feed.quote('GBPUSD')).toBeDefined();
    expect(check('GBPUSD')).toEqual({ code: R.InvalidData, message: 'symbol GBPUSD not found' });
  });

  it('checks a pending order\'s expiration from 10 minutes ahead on, and takes a time not after 1970 for none', () => {
    const { h, account } = setUp();
    const limit = { tradeTransactionType: 'BrOrderOpen', orderBy: account(), symbol: 'EURUSD', tradeCommand: 'SellLimit', volume: 100, price: 1.102 };
    expect(h.fails('TradeCheckStops', { record: { ...limit, expiration: at(T0 + 10 * MINUTE - 1000) } }))
      .toEqual({ code: R.TradeExpirationDenied, message: 'expiration must be at least 10 minutes ahead' });
    expect(h.call('TradeCheckStops', { record: { ...limit, expiration: at(T0 + 10 * MINUTE) } })).toBe(true);
    expect(h.call('TradeCheckStops', { record: { ...limit, expiration: '1970-01-01T00:00:00Z' } })).toBe(true);
    expect(h.call('TradeCheckStops', { record: limit })).toBe(true);
  });

  it('needs a pending order\'s price when the engine is asked directly', () => {
    const { h, account } = setUp();
    expect(() => h.world.engine.checkRequestStops({ login: account(), symbol: 'EURUSD', command: 'SellStop', volume: 100, sl: 0, tp: 0,
      comment: '', reason: 'Dealer' }, undefined)).toThrow('price is required for a pending order');
  });
});

describe('the freeze level', () => {
  /** EURUSD at 1.10000/1.10100 (a 100-point spread) with a freeze level of 100 points (0.001). */
  function frozen() {
    const s = setUp();
    const login = s.account();
    const orders = {
      buyLimit: s.open(login, { tradeCommand: 'BuyLimit', price: 1.0995 }),
      buyStop: s.open(login, { tradeCommand: 'BuyStop', price: 1.1015 }),
      sellLimit: s.open(login, { tradeCommand: 'SellLimit', price: 1.1015 }),
      sellStop: s.open(login, { tradeCommand: 'SellStop', price: 1.0995 }),
    };
    s.tick(1.1, 1.101);
    s.symbol('EURUSD', { freezeLevel: 100 });
    return { ...s, login, orders };
  }

  it('measures buy orders from the ask: a buy limit 15 points under it may move, a buy stop 5 points over it may not', () => {
    const { tx, txFails, orders } = frozen();
    expect(tx('BrOrderModify', { order: orders.buyLimit.order, sl: 1.099 })).toMatchObject({ sl: 1.099 });
    expect(txFails('BrOrderModify', { order: orders.buyStop.order, sl: 1.1 }))
      .toEqual({ code: R.TradeModifyDenied, message: `order ${orders.buyStop.order} is frozen: price within the freeze level` });
  });

  it('measures sell orders from the bid: a sell limit 15 points over it may move, a sell stop 5 points under it may not', () => {
    const { tx, txFails, orders } = frozen();
    expect(tx('BrOrderModify', { order: orders.sellLimit.order, sl: 1.103 })).toMatchObject({ sl: 1.103 });
    expect(txFails('BrOrderModify', { order: orders.sellStop.order, sl: 1.1 }).code).toBe(R.TradeModifyDenied);
  });

  it('measures a market trade\'s stops from the price it would close at: a buy\'s from the bid, a sell\'s from the ask', () => {
    const { account, open, tx, txFails, symbol } = setUp();
    const login = account();
    // With a freeze level of 100 points (0.001) and the market at 1.10000/1.10010:
    const buyNear = open(login, { sl: 1.09905 }); // 9.5 points under the bid, 10.5 under the ask
    const buyFar = open(login, { sl: 1.09895 });
    const sellNear = open(login, { tradeCommand: 'Sell', sl: 1.10105 }); // 9.5 points over the ask, 10.5 over the bid
    const sellFar = open(login, { tradeCommand: 'Sell', sl: 1.10115 });
    symbol('EURUSD', { freezeLevel: 100 });
    expect(txFails('BrOrderModify', { order: buyNear.order, tp: 1.11 }).code).toBe(R.TradeModifyDenied);
    expect(txFails('BrOrderModify', { order: sellNear.order, tp: 1.09 }).code).toBe(R.TradeModifyDenied);
    expect(tx('BrOrderModify', { order: buyFar.order, tp: 1.11 }).tp).toBe(1.11);
    expect(tx('BrOrderModify', { order: sellFar.order, tp: 1.09 }).tp).toBe(1.09);
  });

  it('freezes a market trade whose take profit is near the closing price, not one whose take profit is far', () => {
    const { account, open, tx, txFails, symbol } = setUp();
    const login = account();
    const near = open(login, { tp: 1.1005 });
    const far = open(login, { tp: 1.11 });
    symbol('EURUSD', { freezeLevel: 100 });
    expect(txFails('BrOrderModify', { order: near.order, sl: 1.09 }))
      .toEqual({ code: R.TradeModifyDenied, message: `order ${near.order} is frozen: a stop is within the freeze level` });
    expect(tx('BrOrderModify', { order: far.order, sl: 1.09 })).toMatchObject({ sl: 1.09, tp: 1.11 });
  });
});

describe('account and group changes', () => {
  it('announces the margin level of an account whose credit a restore changes', () => {
    const { h, account, open, since } = setUp();
    const login = account();
    open(login);
    const after = since();
    h.call('BackupRestoreUsers', { records: [{ login, credit: 500 }] });
    const margins = after().filter((e) => e.kind === 'margin');
    expect(margins).toEqual([{ kind: 'margin', op: 'update', record: expect.objectContaining({ login, balance: 10_000, equity: 10_490 }) }]);
  });

  it('leaves the accounts of other groups alone when a group\'s levels change', () => {
    const { account, open, tick, group, since, margin } = setUp();
    tick(150, 150.02, 'USDJPY');
    tick(160, 160.02, 'EURJPY');
    const login = account(1500);
    open(login, { symbol: 'EURJPY' });
    // Down 50 points: 50000 JPY, 333.31 USD at the USDJPY mid; the level stays above 100%.
    tick(159.52, 159.54, 'EURJPY');
    expect(margin(login)).toMatchObject({ equity: 1166.69, levelType: 'Ok' });
    // A cheaper yen makes the same loss worth more: the account is at a margin call the last EURJPY tick did not see.
    tick(100, 100.02, 'USDJPY');
    expect(margin(login)).toMatchObject({ equity: 1000.05, levelType: 'MarginCall' });
    const after = since();
    group('real\\standard', { marginCall: 120 });
    expect(after().map((e) => e.kind)).toEqual(['groups']);
    // Its own group's change re-evaluates it.
    group('real\\vip', { marginCall: 110 });
    expect(after().filter((e) => e.kind === 'margin'))
      .toEqual([{ kind: 'margin', op: 'update', record: expect.objectContaining({ login, levelType: 'MarginCall' }) }]);
  });
});

describe('money, prices and stops at their limits', () => {
  it('opens when the margin equals the free margin and not a cent beyond', () => {
    const { account, open, openFails } = setUp();
    expect(openFails(account(1100.04)))
      .toEqual({ code: R.TradeNoMoney, message: 'not enough money: margin 1100.05 exceeds free margin 1100.04' });
    expect(open(account(1100.05)).tradeCommand).toBe('Buy');
  });

  it('counts the commission an open charges against the free margin', () => {
    const { account, open, openFails } = setUp();
    // real\\standard charges 3.5 USD for the lot.
    expect(openFails(account(1103.54, 'real\\standard')))
      .toEqual({ code: R.TradeNoMoney, message: 'not enough money: margin 1100.05 exceeds free margin 1103.54' });
    expect(open(account(1103.55, 'real\\standard')).commission).toBe(-3.5);
  });

  it('charges the group\'s commission per lot on the volume opened', () => {
    const { account, open } = setUp();
    const login = account(10_000, 'real\\standard');
    expect(open(login, { volume: 50 }).commission).toBe(-1.75);
    expect(open(login, { tradeCommand: 'SellLimit', price: 1.102 }).commission).toBe(0);
    // real\\vip charges none: exactly 0.
    expect(open(account(), { volume: 50 }).commission).toBe(0);
  });

  it('accepts a requested price up to the deviation away and requotes beyond it', () => {
    const { account, open, openFails, tx, txFails } = setUp();
    const login = account();
    // The ask is 1.1001: a request at 1.1 is 10 points away.
    expect(openFails(login, { price: 1.1, ieDeviation: 9 })).toEqual({ code: R.TradeRequote, message: 'price moved to 1.1001' });
    const trade = open(login, { price: 1.1, ieDeviation: 10 });
    expect(trade.openPrice).toBe(1.1001);
    // A price of 0 or no deviation asks for the market, whatever it is.
    expect(open(login, { price: 0, ieDeviation: 0 }).openPrice).toBe(1.1001);
    expect(open(login, { price: 1.05 }).openPrice).toBe(1.1001);
    // A close is checked against its closing price, the bid.
    expect(txFails('BrOrderClose', { order: trade.order, price: 1.10011, ieDeviation: 10 }))
      .toEqual({ code: R.TradeRequote, message: 'price moved to 1.1' });
    expect(tx('BrOrderClose', { order: trade.order, price: 1.1001, ieDeviation: 10 })).toMatchObject({ closePrice: 1.1 });
  });

  it('places pending orders exactly the stops level from the market and not closer', () => {
    const { account, open, openFails } = setUp();
    const login = account();
    // 10 points under the ask (1.1001), over the ask, over the bid (1.1) and under the bid.
    expect(open(login, { tradeCommand: 'BuyLimit', price: 1.1 }).openPrice).toBe(1.1);
    expect(open(login, { tradeCommand: 'BuyStop', price: 1.1002 }).openPrice).toBe(1.1002);
    expect(open(login, { tradeCommand: 'SellLimit', price: 1.1001 }).openPrice).toBe(1.1001);
    expect(open(login, { tradeCommand: 'SellStop', price: 1.0999 }).openPrice).toBe(1.0999);
    expect(openFails(login, { tradeCommand: 'BuyLimit', price: 1.10001 }))
      .toEqual({ code: R.TradeBadStops, message: 'price 1.10001 is closer to the market than the stops level' });
    expect(openFails(login, { tradeCommand: 'SellStop', price: 1.09991 }).code).toBe(R.TradeBadStops);
    expect(openFails(login, { tradeCommand: 'SellLimit', price: 1.0999 }))
      .toEqual({ code: R.TradeBadPrices, message: 'price 1.0999 is on the wrong side of the market for SellLimit' });
    expect(openFails(login, { tradeCommand: 'BuyStop', price: 1.1001 }).code).toBe(R.TradeBadPrices);
    expect(openFails(login, { tradeCommand: 'BuyLimit', price: 1.1001 }).code).toBe(R.TradeBadPrices);
    expect(openFails(login, { tradeCommand: 'SellStop', price: 1.1 }).code).toBe(R.TradeBadPrices);
  });

  it('sets stops exactly the stops level from the closing price, and refuses negative ones', () => {
    const { account, open, openFails } = setUp();
    const login = account();
    expect(open(login, { sl: 1.0999, tp: 1.1001 })).toMatchObject({ sl: 1.0999, tp: 1.1001 });
    expect(open(login, { tradeCommand: 'Sell', sl: 1.1002, tp: 1.1 })).toMatchObject({ sl: 1.1002, tp: 1.1 });
    expect(openFails(login, { tradeCommand: 'Sell', sl: 1.10019 }))
      .toEqual({ code: R.TradeBadStops, message: 'sl 1.10019 is too close to 1.1001 (stops level 10 points)' });
    expect(openFails(login, { tradeCommand: 'Sell', tp: 1.10001 }))
      .toEqual({ code: R.TradeBadStops, message: 'tp 1.10001 is too close to 1.1001 (stops level 10 points)' });
    expect(openFails(login, { sl: -1 })).toEqual({ code: R.TradeBadStops, message: 'sl -1 is too close to 1.1 (stops level 10 points)' });
    expect(openFails(login, { tp: -1 })).toEqual({ code: R.TradeBadStops, message: 'tp -1 is too close to 1.1 (stops level 10 points)' });
    expect(openFails(login, { tradeCommand: 'Sell', tp: -1 }))
      .toEqual({ code: R.TradeBadStops, message: 'tp -1 is too close to 1.1001 (stops level 10 points)' });
  });
});

describe('the quote feed at the trigger prices', () => {
  it('activates limit and stop orders when the side they buy or sell at reaches their price', () => {
    const { account, open, tick, h } = setUp();
    const login = account();
    const buyLimit = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    const buyStop = open(login, { tradeCommand: 'BuyStop', price: 1.102 });
    const sellLimit = open(login, { tradeCommand: 'SellLimit', price: 1.1025 });
    const sellStop = open(login, { tradeCommand: 'SellStop', price: 1.0985 });
    const state = () => [buyLimit, buyStop, sellLimit, sellStop].map((o) => {
      const row = h.call('TradeRecordRequest', { order: o.order });
      return `${row.tradeCommand} ${row.openPrice}`;
    });
    tick(1.0986, 1.0991); // the bid is past the buy limit and near the sell stop: neither counts
    expect(state()).toEqual(['BuyLimit 1.099', 'BuyStop 1.102', 'SellLimit 1.1025', 'SellStop 1.0985']);
    tick(1.0985, 1.099);
    expect(state()).toEqual(['Buy 1.099', 'BuyStop 1.102', 'SellLimit 1.1025', 'Sell 1.0985']);
    tick(1.1015, 1.102);
    expect(state()).toEqual(['Buy 1.099', 'Buy 1.102', 'SellLimit 1.1025', 'Sell 1.0985']);
    tick(1.102, 1.1025); // the ask reaches the sell limit, the bid does not
    expect(state()).toEqual(['Buy 1.099', 'Buy 1.102', 'SellLimit 1.1025', 'Sell 1.0985']);
    tick(1.1025, 1.103);
    expect(state()).toEqual(['Buy 1.099', 'Buy 1.102', 'Sell 1.1025', 'Sell 1.0985']);
  });

  it('closes at a stop loss or take profit the closing price has just reached', () => {
    const { account, open, tick, history } = setUp();
    const login = account();
    const buySl = open(login, { sl: 1.099 });
    const buyTp = open(login, { tp: 1.102 });
    const sellSl = open(login, { tradeCommand: 'Sell', sl: 1.1025 });
    const sellTp = open(login, { tradeCommand: 'Sell', tp: 1.0985 });
    const closes = () => history(login).slice(1).map((r) => [r.order, r.activationType, r.closePrice]);
    tick(1.099, 1.0991);
    expect(closes()).toEqual([[buySl.order, 'SL', 1.099]]);
    tick(1.102, 1.1021);
    expect(closes()).toEqual([[buySl.order, 'SL', 1.099], [buyTp.order, 'TP', 1.102]]);
    tick(1.1024, 1.1025);
    expect(closes().at(-1)).toEqual([sellSl.order, 'SL', 1.1025]);
    tick(1.0984, 1.0985);
    expect(closes().at(-1)).toEqual([sellTp.order, 'TP', 1.0985]);
  });

  it('calls a close with both stops reached a stop loss', () => {
    const { h, account, open, tick, history } = setUp();
    const login = account();
    const trade = open(login);
    // An administrator's edit is not checked against the market: both stops lie beyond the price.
    h.call('AdmTradeRecordModify', { ticket: trade.order, record: { sl: 1.2, tp: 1.0 } });
    tick(1.1, 1.1001);
    expect(history(login).at(-1)).toMatchObject({ order: trade.order, activationType: 'SL', closePrice: 1.1 });
  });

  it('triggers a stop loss set by a modification on the next tick', () => {
    const { account, open, tx, tick, history, journal } = setUp();
    const login = account();
    const trade = open(login);
    tx('BrOrderModify', { order: trade.order, sl: 1.099 });
    tick(1.0989, 1.099);
    expect(history(login).at(-1)).toMatchObject({ order: trade.order, activationType: 'SL', closePrice: 1.0989, profit: -120 });
    expect(journal()).toContain(`'${login}': close #${trade.order} buy 1.00 EURUSD at 1.1001 at 1.0989 [sl]`);
  });

  it('journals a dealer\'s close without an activation mark and an activation with its price', () => {
    const { account, open, tx, tick, journal } = setUp();
    const login = account();
    const trade = open(login);
    tx('BrOrderClose', { order: trade.order });
    expect(journal()).toContain(`'${login}': close #${trade.order} buy 1.00 EURUSD at 1.1001 at 1.1`);
    const order = open(login, { tradeCommand: 'BuyLimit', price: 1.099 });
    tick(1.0985, 1.0987);
    expect(journal()).toContain(`'${login}': pending #${order.order} activated at 1.0987`);
    expect(journal()).toContain(`'${login}': balance 10000 (#${trade.order - 1})`);
  });

  it('activates an order with an expiration into a trade without one', () => {
    const { account, open, tx } = setUp();
    const order = open(account(), { tradeCommand: 'BuyLimit', price: 1.099, expiration: at(T0 + 60 * MINUTE) });
    expect(order.expiration).toBe(at(T0 + 60 * MINUTE));
    expect('expiration' in tx('BrOrderActivate', { order: order.order })).toBe(false);
  });
});

describe('the rollback buffer', () => {
  it('holds an automatic close until the rollback time has passed', () => {
    const { h, account, open, tick } = setUp();
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
    const { h, account, open, tick } = setUp();
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
    const { h, account, open, tx, tick, history } = setUp();
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
    const { h, account, open, tick } = setUp({ rollbackMs: 0 });
    const trade = open(account(), { sl: 1.099 });
    tick(1.0989, 1.099);
    expect(h.call('TradeClearRollback', { order: trade.order })).toBe(false);
  });

  it('restores a take-profit close as TPRollback and journals the rollback', () => {
    const { h, account, open, tick, journal } = setUp();
    const login = account();
    const trade = open(login, { tp: 1.101 });
    tick(1.101, 1.1011);
    vi.setSystemTime(T0 + 1000);
    const after = h.events.length;
    expect(h.call('TradeClearRollback', { order: trade.order })).toBe(true);
    const restored = h.call('TradeRecordRequest', { order: trade.order });
    expect(restored).toMatchObject({ activationType: 'TPRollback', tp: 1.101, timeStamp: at(T0 + 1000) });
    expect(h.events.slice(after).filter((e) => e.kind === 'trades')).toEqual([{ kind: 'trades', op: 'add', record: restored }]);
    expect(journal()).toContain(`'${login}': TP activation of #${trade.order} rolled back`);
  });

  it('restores a stopped-out trade as StopOutRollback and does not stop it out again', () => {
    const { h, account, open, tick, openOrders, history } = setUp();
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

describe('expiry', () => {
  it('deletes a pending order on the sweep at its expiration, not before, and journals it', () => {
    const { h, account, open, history, openOrders, journal } = setUp();
    const login = account();
    const trade = open(login);
    const order = open(login, { tradeCommand: 'SellLimit', price: 1.105, expiration: at(T0 + 11 * MINUTE) });
    h.world.engine.sweep(T0 + 11 * MINUTE - 1);
    expect(openOrders(login)).toEqual([trade.order, order.order]);
    h.world.engine.sweep(T0 + 11 * MINUTE);
    expect(openOrders(login)).toEqual([trade.order]);
    expect(history(login).at(-1)).toMatchObject({ order: order.order, tradeRecordState: 'Deleted', closeTime: at(T0 + 11 * MINUTE) });
    expect(journal()).toContain(`'${login}': pending #${order.order} expired`);
  });
});

describe('swaps at rollover', () => {
  const THURSDAY = Date.UTC(2026, 5, 4);

  it('charges the symbol\'s long and short swaps for one day, converted to USD, and skips pending orders', () => {
    const { h, account, open, tick, journal } = setUp();
    tick(150, 150.02, 'USDJPY');
    const login = account(10_000, 'real\\standard');
    const buy = open(login);
    const sell = open(login, { tradeCommand: 'Sell' });
    const yen = open(login, { symbol: 'USDJPY' });
    const pending = open(login, { tradeCommand: 'BuyLimit', price: 1.09 });
    expect(h.world.rollover(THURSDAY)).toBe(3);
    const storage = (order: number) => h.call('TradeRecordRequest', { order }).storage;
    // -2.5 and -1.2 points of 0.00001 on 100000; -2.5 points of 0.001 on 100000 JPY at the USDJPY mid of 150.01.
    expect([storage(buy.order), storage(sell.order), storage(yen.order), storage(pending.order)]).toEqual([-2.5, -1.2, -1.67, 0]);
    expect(journal()).toContain('rollover: swaps charged on 3 trades');
  });

  it('takes the group\'s short swap override and triples the swap on the symbol\'s triple-swap day', () => {
    const { h, account, open } = setUp();
    const sell = open(account(), { tradeCommand: 'Sell' });
    h.world.rollover(Date.UTC(2026, 5, 3)); // a Wednesday
    expect(h.call('TradeRecordRequest', { order: sell.order }).storage).toBe(-1.5);
  });

  it('takes a group\'s override only for the symbol it names', () => {
    const { h, account, open, tick } = setUp();
    tick(1.25, 1.2501, 'GBPUSD');
    // real\\vip overrides EURUSD (-1.5 long) and XAUUSD, not GBPUSD: the symbol's -2.5 points apply.
    const buy = open(account(), { symbol: 'GBPUSD' });
    h.world.rollover(THURSDAY);
    expect(h.call('TradeRecordRequest', { order: buy.order }).storage).toBe(-2.5);
  });

  it('charges nothing in a group without swaps, on a symbol without swaps, or at a swap of 0 points', () => {
    const { h, account, open, group, symbol } = setUp();
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
    const { h, account, open, tick, margin } = setUp();
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

describe('closing part of a trade', () => {
  it('splits commission, swaps and margin in proportion between the closed part and the remainder', () => {
    const { h, account, open, tx, tick, margin, since } = setUp();
    const login = account(10_000, 'real\\standard');
    const trade = open(login, { volume: 300 });
    h.world.rollover(Date.UTC(2026, 5, 4));
    expect(h.call('TradeRecordRequest', { order: trade.order })).toMatchObject({ commission: -10.5, storage: -7.5 });
    expect(margin(login).margin).toBe(3300.15);
    tick(1.12, 1.1201); // the euro is dearer: a margin taken now would be larger
    vi.setSystemTime(T0 + MINUTE);
    const after = since();
    const part = tx('BrOrderClose', { order: trade.order, volume: 100 });
    const [rest] = h.call('TradesUserRequest', { login });
    expect(part).toMatchObject({ order: trade.order, volume: 100, commission: -3.5, storage: -2.5, profit: 1990, closePrice: 1.12,
      comment: `to #${rest.order}`, tradeRecordState: 'ClosedPart', activationType: 'None', closeTime: at(T0 + MINUTE) });
    expect(rest).toMatchObject({ volume: 200, commission: -7, storage: -5, comment: `from #${trade.order}`, timeStamp: at(T0 + MINUTE),
      openPrice: 1.1001, openTime: at(T0) });
    expect(h.call('UserRecordRequest', { login }).balance).toBe(10_000 + 1990 - 3.5 - 2.5);
    expect(after().filter((e) => e.kind === 'trades').map((e) => [e.op, e.record.order])).toEqual([['delete', trade.order], ['add', rest.order]]);
    // The remainder keeps two thirds of what the trade held.
    expect(margin(login).margin).toBe(2200.1);
  });
});

describe('the margin level the broker is told', () => {
  it('announces a margin call and the way back, once each, and a delete when the last trade closes', () => {
    const { h, account, open, tick, tx, since, deposit } = setUp();
    const login = account(1500);
    const trade = open(login);
    const margins = since();
    const seen = () => margins().filter((e) => e.kind === 'margin').map((e) => [e.op, e.record.levelType]);
    tick(1.093, 1.0931);
    expect(seen()).toEqual([['update', 'MarginCall']]);
    tick(1.0932, 1.0933);
    expect(seen()).toEqual([['update', 'MarginCall']]);
    tick(1.1, 1.1001);
    expect(seen()).toEqual([['update', 'MarginCall'], ['update', 'Ok']]);
    tx('BrOrderClose', { order: trade.order });
    expect(margins().filter((e) => e.kind === 'margin').at(-1)).toEqual({ kind: 'margin', op: 'delete', record: { login } });
    const quiet = since();
    deposit(login, 10);
    expect(quiet().filter((e) => e.kind === 'margin')).toEqual([]);
  });

  it('counts credit towards the level a tick checks', () => {
    const { account, open, tick, deposit, since } = setUp();
    const login = account(600);
    deposit(login, 1000, 'Credit');
    open(login);
    const after = since();
    tick(1.095, 1.0951); // 510 down: equity 1090 on 1100.05 of margin is 99 %, not the 8 % the balance alone would give
    expect(after().filter((e) => e.kind === 'margin').map((e) => [e.record.equity, e.record.levelType])).toEqual([[1090, 'MarginCall']]);
  });

  it('forgets the level of an account whose last trade closed at a margin call: a group change announces nothing for it', () => {
    const { account, open, tick, tx, group, since } = setUp();
    const login = account(1500);
    const trade = open(login);
    tick(1.093, 1.0931);
    tx('BrOrderClose', { order: trade.order });
    const after = since();
    group('real\\vip', { marginCall: 90 });
    expect(after().map((e) => e.kind)).toEqual(['groups']);
  });

  it('answers the level record with the account\'s group, leverage, market volume and the time it was computed', () => {
    const { account, open, margin } = setUp();
    const login = account(3000);
    open(login, { volume: 100 });
    open(login, { volume: 50, tradeCommand: 'Sell' });
    open(login, { tradeCommand: 'BuyLimit', price: 1.09 });
    vi.setSystemTime(T0 + 1500);
    // Margin 1100.05 + 550.03; the trades are down the spread: 10 + 5.
    expect(margin(login)).toEqual({
      login, group: 'real\\vip', leverage: 100, updated: T0 / 1000 + 1, balance: 3000, equity: 2985, volume: 150, margin: 1650.08,
      free: 1334.92, level: 180.9, controllingType: 'Percent', levelType: 'Ok',
    });
  });
});

describe('the margin-call and stop-out levels themselves', () => {
  /** XAUUSD at 2000 without a spread; real\\vip halves its margin: 1 lot holds 1000. */
  function gold() {
    const s = setUp();
    s.tick(2000, 2000, 'XAUUSD');
    const login = s.account(1000);
    const trade = s.open(login, { symbol: 'XAUUSD' });
    return { ...s, login, trade };
  }

  it('is at a margin call when equity equals the margin', () => {
    const { h, login, margin, since, tick } = gold();
    expect(margin(login)).toMatchObject({ margin: 1000, equity: 1000, level: 100, levelType: 'MarginCall' });
    const after = since();
    tick(2000, 2000, 'XAUUSD');
    expect(after().filter((e) => e.kind === 'margin')).toEqual([]);
    expect(h.call('MarginsRequest', {}).find((l: { login: number }) => l.login === login).levelType).toBe('MarginCall');
  });

  it('stops out when equity is half the margin', () => {
    const { h, login, trade, margin, tick, openOrders } = gold();
    tick(1995, 1995, 'XAUUSD'); // 500 down: level 50 %
    expect(openOrders(login)).toEqual([]);
    h.call('TradeClearRollback', { order: trade.order });
    expect(margin(login)).toMatchObject({ equity: 500, level: 50, levelType: 'StopOut' });
  });
});

describe('stop-out', () => {
  it('counts the balance a close realised when it checks the trades left open', () => {
    const { account, open, tick, tx, openOrders, history } = setUp();
    const login = account(3000);
    const closed = open(login);
    const kept = open(login);
    tick(1.0951, 1.0952); // each trade 500 down
    tx('BrOrderClose', { order: closed.order }); // the balance is 2500 now
    // 2000 down: equity 500 on 1100.05 of margin is 45.5 %.
    tick(1.0801, 1.0802);
    expect(openOrders(login)).toEqual([]);
    expect(history(login).find((r) => r.order === kept.order)).toMatchObject({ activationType: 'Stopout', profit: -2000 });
  });


  it('closes the older of two equally losing trades first and journals the level', () => {
    const { h, account, open, tick, openOrders, history, journal } = setUp();
    const login = account(3000);
    const first = open(login);
    const second = open(login);
    // 100 points under the open price: equity 1000 on 2200.1 of margin is 45.45 %; one close doubles the level.
    tick(1.0901, 1.0902);
    expect(history(login).filter((r) => r.activationType === 'Stopout').map((r) => r.order)).toEqual([first.order]);
    expect(openOrders(login)).toEqual([second.order]);
    expect(journal()).toContain(`'${login}': stop out at level 45.45%`);
    // The engine's lines are journalled as trade lines; the account's creation is not one.
    expect(h.world.journalEntries().filter((line) => line.message.startsWith(`'${login}': `)).map((line) => [line.code, line.message]))
      .toEqual([
        ['Standard', `'${login}': account created in real\\vip`],
        ['Trades', `'${login}': balance 3000 (#${first.order - 1})`],
        ['Trades', `'${login}': #${first.order} buy 1.00 EURUSD at 1.1001 opened`],
        ['Trades', `'${login}': #${second.order} buy 1.00 EURUSD at 1.1001 opened`],
        ['Trades', `'${login}': stop out at level 45.45%`],
        ['Trades', `'${login}': close #${first.order} buy 1.00 EURUSD at 1.1001 at 1.0901 [stopout]`],
      ]);
  });
});

describe('stop-out after a change of conversion rates', () => {
  it('stops an account out on a tick of another of its symbols once a manager action has re-anchored its figures', () => {
    const { account, open, tick, deposit, openOrders, history } = setUp();
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
    expect(history(login).find((r) => r.order === yen.order)).toMatchObject({ activationType: 'Stopout', profit: -1000 });
  });

  it('stops an account out on the tick that takes it below the level, after a manager action re-anchored its figures', () => {
    const { h, account, open, tick, deposit, openOrders, history, margin } = setUp();
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
    expect(history(login).find((r) => r.order === trade.order)).toMatchObject({ activationType: 'Stopout', closePrice: 158.5, profit: -750 });
    expect(h.call('UserRecordRequest', { login }).balance).toBe(501);
  });
});
