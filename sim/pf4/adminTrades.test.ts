/**
 * The administrator's trade commands and the trade reads around them on a small PF4 world driven by manual ticks:
 * direct edits of an open trade without market checks, batch deletes, the trades of a group, the open trades of one
 * account, the open-trades snapshot and every account's margin level.
 */
import { describe, expect, it } from 'vitest';
import { PF4_RESULT as R } from '../../shared/resultCodes.js';
import * as records from '../../shared/records/contract.js';
import { pf4Harness } from '../../test/support/sim/worldHarness.js';

type Trade = { order: number; login: number; tradeCommand: string; [field: string]: unknown };
const orders = (trades: Trade[]) => trades.map((t) => t.order);

/** Two funded real\vip accounts (no commission), EURUSD at 1.10000/1.10010 and GBPUSD at 1.25000/1.25010. */
function setUp(overrides: Record<string, unknown> = {}) {
  const h = pf4Harness({ accounts: 10, trades: 0, ...overrides });
  h.call('SymbolSendTick', { symbol: 'EURUSD', bid: 1.1, ask: 1.1001 });
  h.call('SymbolSendTick', { symbol: 'GBPUSD', bid: 1.25, ask: 1.2501 });
  const account = (name: string, deposit: number, group = 'real\\vip') => {
    const { login } = h.call('UserRecordNew', { record: { group, name, leverage: 100 } });
    h.call('TradeTransaction', {
      tradeTransactionType: 'BrBalance',
      tradeCommand: 'Balance',
      orderBy: login,
      price: deposit,
    });
    return login as number;
  };
  const open = (login: number, fields: Record<string, unknown> = {}): Trade =>
    h.call('TradeTransaction', {
      tradeTransactionType: 'BrOrderOpen',
      orderBy: login,
      symbol: 'EURUSD',
      tradeCommand: 'Buy',
      volume: 100,
      ...fields,
    });
  const tick = (bid: number, ask: number, symbol = 'EURUSD') => h.call('SymbolSendTick', { symbol, bid, ask });
  const since = () => {
    const mark = h.events.length;
    return () => h.events.slice(mark);
  };
  return { h, account, open, tick, since };
}

describe('AdmTradeRecordModify', () => {
  it('writes stops, magic, comment, swaps and commission of an open trade and answers the trade as stored', () => {
    const { h, account, open, since } = setUp();
    const login = account('Edited', 10_000);
    const trade = open(login);
    const after = since();
    const edited = h.call('AdmTradeRecordModify', {
      ticket: trade.order,
      record: { sl: 1.09, tp: 1.12, magic: 77, comment: 'desk fix', storage: -12.5, commission: -3 },
    });
    records.PF4Trade.parse(edited);
    expect(edited).toMatchObject({
      order: trade.order,
      login,
      openPrice: 1.1001,
      volume: 100,
      tradeCommand: 'Buy',
      sl: 1.09,
      tp: 1.12,
      magic: 77,
      comment: 'desk fix',
      storage: -12.5,
      commission: -3,
      tradeRecordState: 'OpenNormal',
    });
    expect(h.call('TradeRecordRequest', { order: trade.order })).toEqual(edited);
    const events = after();
    expect(events.filter((e) => e.kind === 'trades')).toEqual([{ kind: 'trades', op: 'update', record: edited }]);
    // Swaps and commission count towards equity (10 000 - 10 spread - 12.5 - 3): the broker is told the new level.
    const margin = events.filter((e) => e.kind === 'margin').at(-1);
    expect(margin?.record).toMatchObject({ login, balance: 10_000, equity: 9974.5 });
    expect(h.call('MarginLevelRequest', { login }).equity).toBe(margin?.record.equity);
  });

  it('skips the market checks a trade transaction makes, and the feed then acts on the stops it wrote', () => {
    const { h, account, open, tick } = setUp();
    const login = account('Stops', 10_000);
    const trade = open(login);
    // A stop loss 5 points under the bid is inside the 10-point stops level: a dealer's modify is refused...
    expect(
      h.fails('TradeTransaction', { tradeTransactionType: 'BrOrderModify', order: trade.order, sl: 1.09995 }).code,
    ).toBe(R.TradeBadStops);
    // ...but the administrator writes the record directly.
    expect(h.call('AdmTradeRecordModify', { ticket: trade.order, record: { sl: 1.09995 } }).sl).toBe(1.09995);
    tick(1.0999, 1.1);
    expect(h.fails('TradeRecordRequest', { order: trade.order }).code).toBe(R.InvalidData);
    expect(h.call('TradesUserHistory', { login }).at(-1)).toMatchObject({
      order: trade.order,
      activationType: 'SL',
      closePrice: 1.0999,
    });
  });

  it('keeps the fields the server derives: floating profit, taxes and agent commission', () => {
    const { h, account, open, tick } = setUp();
    const trade = open(account('Derived', 10_000));
    tick(1.1011, 1.1012);
    const edited = h.call('AdmTradeRecordModify', {
      ticket: trade.order,
      record: { profit: 999, taxes: 5, commissionAgent: 7, magic: 1 },
    });
    expect(edited).toMatchObject({ magic: 1, profit: 100, taxes: 0, commissionAgent: 0 });
  });

  it('refuses an unknown ticket, a mismatched order and a bad record, naming the field', () => {
    const { h, account, open } = setUp();
    const trade = open(account('Refused', 10_000));
    expect(h.fails('AdmTradeRecordModify', { ticket: 42, record: { sl: 1 } })).toEqual({
      code: R.InvalidData,
      message: 'order 42 not found',
    });
    expect(
      h.fails('AdmTradeRecordModify', { ticket: trade.order, record: { order: trade.order + 1, sl: 1 } }).message,
    ).toBe('record.order must match ticket');
    expect(h.fails('AdmTradeRecordModify', { ticket: trade.order, record: { openPrice: 1.2 } }).message).toMatch(
      /^record\.openPrice: /,
    );
    expect(h.fails('AdmTradeRecordModify', { ticket: trade.order, record: { magic: 1.5 } }).message).toMatch(
      /^record\.magic: /,
    );
    expect(h.fails('AdmTradeRecordModify', { ticket: trade.order, record: { sl: -1 } }).message).toBe(
      'record.sl must be 0 or positive',
    );
    expect(h.fails('AdmTradeRecordModify', { ticket: trade.order, record: { tp: -0.5 } }).message).toBe(
      'record.tp must be 0 or positive',
    );
    expect(h.fails('AdmTradeRecordModify', { ticket: trade.order, record: { comment: 'x'.repeat(32) } }).message).toBe(
      'record.comment must be at most 31 characters',
    );
    expect(h.fails('AdmTradeRecordModify', { ticket: 0, record: {} }).message).toMatch(/^ticket must be between 1 and/);
    expect(h.fails('AdmTradeRecordModify', { ticket: trade.order }).message).toBe('record must be an object');
    expect(h.call('TradeRecordRequest', { order: trade.order })).toMatchObject({ sl: 0, tp: 0, magic: 0, comment: '' });
  });

  it('needs the admin right', () => {
    const { h, account, open } = setUp();
    const trade = open(account('Rights', 10_000));
    expect(h.fails('AdmTradeRecordModify', { ticket: trade.order, record: { sl: 1 } }, ['trades', 'manager'])).toEqual({
      code: R.NotEnoughRights,
      message: 'AdmTradeRecordModify needs the admin right',
    });
  });
});

describe('the margin a trade holds', () => {
  it('stays as fixed when the trade opened through administrator edits, swaps and a partial close', () => {
    const { h, account, open } = setUp();
    const login = account('Fixed', 10_000);
    const trade = open(login, { volume: 200 });
    // 2 lots at 1:100 hold 2000 EUR at the mid 1.10005.
    expect(h.call('MarginLevelRequest', { login }).margin).toBe(2200.1);
    h.call('UserRecordUpdate', { login, record: { leverage: 400 } });
    h.call('AdmTradeRecordModify', { ticket: trade.order, record: { storage: -2, commission: -1 } });
    expect(h.call('MarginLevelRequest', { login }).margin).toBe(2200.1);
    h.world.rollover(Date.UTC(2026, 0, 5));
    expect(h.call('MarginLevelRequest', { login }).margin).toBe(2200.1);
    h.call('TradeTransaction', { tradeTransactionType: 'BrOrderClose', order: trade.order, volume: 50 });
    // A quarter closed: the remaining 1.5 lots keep three quarters of the margin.
    expect(h.call('MarginLevelRequest', { login })).toMatchObject({ margin: 1650.07, volume: 150 });
    // A trade opened now is margined at the new leverage: 1 lot at 1:400 holds 250 EUR, 275.01 USD.
    open(login, { volume: 100 });
    expect(h.call('MarginLevelRequest', { login }).margin).toBe(1925.08);
  });
});

describe('AdmTradesDelete', () => {
  it('removes market trades and pending orders without touching the balance, and says so to the broker', () => {
    const { h, account, open, tick, since } = setUp();
    const login = account('Deleted', 10_000);
    const market = open(login);
    const pending = open(login, { tradeCommand: 'SellLimit', price: 1.11 });
    const kept = open(login, { volume: 10 });
    tick(1.095, 1.0951);
    const after = since();
    expect(h.call('AdmTradesDelete', { orders: [pending.order, market.order] })).toBe(true);
    expect(orders(h.call('TradesUserRequest', { login }))).toEqual([kept.order]);
    expect(h.fails('TradeRecordRequest', { order: market.order }).message).toBe(`order ${market.order} not found`);
    // The market trade stood at a loss of 510; deleting it realises nothing.
    expect(h.call('UserRecordRequest', { login }).balance).toBe(10_000);
    expect(h.call('AdmBalanceCheck', { login })).toEqual({ login, diff: 0 });
    const deleted = h.call('TradesUserHistory', { login }).filter((r: Trade) => r.tradeRecordState === 'Deleted');
    expect(orders(deleted).sort()).toEqual([market.order, pending.order].sort());
    const events = after();
    // Each delete carries the trade's final record, as the history has it.
    const history = (order: number) => deleted.find((r: Trade) => r.order === order);
    expect(events.filter((e) => e.kind === 'trades')).toEqual([
      { kind: 'trades', op: 'delete', record: history(pending.order) },
      { kind: 'trades', op: 'delete', record: history(market.order) },
    ]);
    expect(events.some((e) => e.kind === 'users')).toBe(false);
    const margin = events.filter((e) => e.kind === 'margin').at(-1)?.record;
    expect(margin).toMatchObject({ login, margin: h.call('MarginLevelRequest', { login }).margin, volume: 10 });
  });

  it('deletes nothing when one of the orders is unknown, and a ticket named twice once', () => {
    const { h, account, open } = setUp();
    const login = account('Batch', 10_000);
    const [a, b] = [open(login), open(login)];
    expect(h.fails('AdmTradesDelete', { orders: [a.order, 4242, b.order] })).toEqual({
      code: R.InvalidData,
      message: 'order 4242 not found',
    });
    expect(orders(h.call('TradesUserRequest', { login }))).toEqual([a.order, b.order]);
    expect(h.call('AdmTradesDelete', { orders: [a.order, a.order] })).toBe(true);
    expect(orders(h.call('TradesUserRequest', { login }))).toEqual([b.order]);
    expect(h.events.filter((e) => e.kind === 'trades' && e.op === 'delete')).toHaveLength(1);
  });

  it('refuses an empty or malformed list and a manager without the admin right', () => {
    const { h, account, open } = setUp();
    const trade = open(account('Malformed', 10_000));
    expect(h.fails('AdmTradesDelete', { orders: [] }).message).toBe('orders must not be empty');
    expect(h.fails('AdmTradesDelete', {}).message).toBe('orders must be an array of integers');
    expect(h.fails('AdmTradesDelete', { orders: [trade.order, 0] }).message).toMatch(
      /^orders must contain integers between 1 and/,
    );
    expect(h.fails('AdmTradesDelete', { orders: [trade.order] }, ['trades']).code).toBe(R.NotEnoughRights);
    expect(h.call('TradeRecordRequest', { order: trade.order }).order).toBe(trade.order);
  });
});

describe('AdmTradesRequest', () => {
  it('answers the open trades of every account of the group in ticket order, other groups left out', () => {
    const h = pf4Harness({ accounts: 40, trades: 120 }, 5);
    const groupOf = new Map(
      h.call('UserRecordsRequest').map((u: { login: number; group: string }) => [u.login, u.group]),
    );
    const all: Trade[] = h.call('TradesRequest').items;
    for (const group of ['real\\standard', 'demo\\forex']) {
      const expected = all.filter((t) => groupOf.get(t.login) === group);
      expect(expected.length, group).toBeGreaterThan(0);
      const answered: Trade[] = h.call('AdmTradesRequest', { group });
      expect(answered).toEqual(expected);
      for (const trade of answered) records.PF4Trade.parse(trade);
      expect(h.call('AdmTradesRequest', { group, openOnly: true })).toEqual(expected);
    }
  });

  it("adds the closed trades of the group's accounts when openOnly is false, leaving balance entries out", () => {
    const { h, account, open, tick } = setUp();
    const vip = account('Vip', 10_000);
    const ecn = account('Ecn', 10_000, 'real\\ecn');
    const closed = open(vip);
    const stillOpen = open(vip, { symbol: 'GBPUSD' });
    const pending = open(vip, { tradeCommand: 'BuyLimit', price: 1.09 });
    open(ecn);
    tick(1.1011, 1.1012);
    h.call('TradeTransaction', { tradeTransactionType: 'BrOrderClose', order: closed.order });
    expect(orders(h.call('AdmTradesRequest', { group: 'real\\vip' }))).toEqual([stillOpen.order, pending.order]);
    const withHistory: Trade[] = h.call('AdmTradesRequest', { group: 'real\\vip', openOnly: false });
    expect(orders(withHistory)).toEqual([stillOpen.order, pending.order, closed.order]);
    expect(withHistory[2]).toMatchObject({ tradeRecordState: 'ClosedNormal', closePrice: 1.1011, profit: 100 });
    expect(withHistory.some((t) => t.tradeCommand === 'Balance')).toBe(false);
  });

  it('refuses an unknown group, a name over 16 characters and an openOnly that is not a boolean', () => {
    const { h } = setUp();
    expect(h.fails('AdmTradesRequest', { group: 'real\\nope' })).toEqual({
      code: R.InvalidData,
      message: 'group real\\nope not found',
    });
    // Group names are case sensitive.
    expect(h.fails('AdmTradesRequest', { group: 'REAL\\vip' }).message).toBe('group REAL\\vip not found');
    expect(h.fails('AdmTradesRequest', { group: 'x'.repeat(17) }).message).toBe('group must be at most 16 characters');
    expect(h.fails('AdmTradesRequest', { group: 'real\\vip', openOnly: 'no' }).message).toBe(
      'openOnly must be a boolean',
    );
    expect(h.fails('AdmTradesRequest', { group: 'real\\vip' }, ['manager', 'seeTrades']).code).toBe(R.NotEnoughRights);
  });
});

describe('TradesUserRequest', () => {
  it("answers the account's open trades and pending orders in ticket order, valued at the current quote", () => {
    const { h, account, open, tick } = setUp();
    const login = account('Mine', 10_000);
    const other = account('Other', 10_000);
    const sell = open(login, { tradeCommand: 'Sell', volume: 50 });
    open(other);
    const pending = open(login, { tradeCommand: 'BuyStop', price: 1.11 });
    const buy = open(login, { volume: 200 });
    tick(1.1021, 1.1022);
    const answered: Trade[] = h.call('TradesUserRequest', { login });
    expect(orders(answered)).toEqual([sell.order, pending.order, buy.order]);
    for (const trade of answered) records.PF4Trade.parse(trade);
    // Sell 0.5 lot at 1.10000 closes at the ask 1.10220; buy 2 lots at 1.10010 closes at the bid 1.10210. The pending
    // buy stop shows the bid too, and no profit.
    expect(answered.map((t) => [t.closePrice, t.profit])).toEqual([
      [1.1022, -110],
      [1.1021, 0],
      [1.1021, 400],
    ]);
    h.call('TradeTransaction', { tradeTransactionType: 'BrOrderClose', order: buy.order });
    expect(orders(h.call('TradesUserRequest', { login }))).toEqual([sell.order, pending.order]);
  });

  it('answers an empty list for an account without trades and refuses an unknown login', () => {
    const { h, account } = setUp();
    expect(h.call('TradesUserRequest', { login: account('Idle', 100) })).toEqual([]);
    expect(h.fails('TradesUserRequest', { login: 4242 })).toEqual({
      code: R.InvalidData,
      message: 'login 4242 not found',
    });
    expect(h.fails('TradesUserRequest', { login: 0 }).message).toMatch(/^login must be between 1 and/);
    expect(h.fails('TradesUserRequest', {}).message).toBe('login must be an integer');
  });
});

describe('TradesSnapshot', () => {
  it('answers every open trade in ticket order as TradesRequest does, the first `limit` of them when asked', () => {
    const h = pf4Harness({ accounts: 20, trades: 40 }, 2);
    const all: Trade[] = h.call('TradesRequest').items;
    expect(all).toHaveLength(40);
    expect(h.call('TradesSnapshot')).toEqual(all);
    expect(h.call('TradesSnapshot', { limit: 7 })).toEqual(all.slice(0, 7));
    expect(h.call('TradesSnapshot', { limit: 1000 })).toEqual(all);
    expect(h.fails('TradesSnapshot', { limit: 0 }).message).toMatch(/^limit must be between 1 and/);
    expect(h.fails('TradesSnapshot', { limit: 'all' }).message).toBe('limit must be an integer');
  });

  it('answers at most 100 000 trades without a limit, the contract default, and refuses a limit above 1 000 000', () => {
    const h = pf4Harness({ accounts: 50, trades: 100_003 }, 5);
    const tickets = h.world.trades.keys();
    expect(tickets).toHaveLength(100_003);
    const snapshot: Trade[] = h.call('TradesSnapshot');
    expect(snapshot).toHaveLength(100_000);
    expect([snapshot[0].order, snapshot[99_999].order]).toEqual([tickets[0], tickets[99_999]]);
    expect(h.call('TradesSnapshot', { limit: 2 }).map((t: Trade) => t.order)).toEqual(tickets.slice(0, 2));
    expect(h.fails('TradesSnapshot', { limit: 1_000_001 })).toEqual({
      code: R.InvalidData,
      message: 'limit must be between 1 and 1000000',
    });
  });

  it('values the trades at the quote of the moment and follows opens and closes', () => {
    const { h, account, open, tick } = setUp();
    const login = account('Snap', 10_000);
    const a = open(login);
    const b = open(login, { volume: 10 });
    tick(1.1006, 1.1007);
    expect(h.call('TradesSnapshot').map((t: Trade) => [t.order, t.profit])).toEqual([
      [a.order, 50],
      [b.order, 5],
    ]);
    h.call('TradeTransaction', { tradeTransactionType: 'BrOrderClose', order: a.order });
    expect(orders(h.call('TradesSnapshot'))).toEqual([b.order]);
  });
});

describe('TradesSyncStart and TradesSyncRead', () => {
  it("reserve the open trades changed since the start's timestamp, read in ticket order until drained; [] without a start", () => {
    const { h, account, open } = setUp();
    expect(h.call('TradesSyncRead')).toEqual([]);
    const login = account('Sync', 10_000);
    const first = open(login);
    const second = open(login, { volume: 10 });
    const third = open(login, { volume: 20 });
    const all: Trade[] = h.call('TradesSnapshot');
    expect(orders(all)).toEqual([first.order, second.order, third.order]);
    expect(h.call('TradesSyncStart', { timestamp: 0 })).toBe(true);
    expect(h.call('TradesSyncRead', { limit: 2 })).toEqual(all.slice(0, 2));
    // A start replaces the snapshot: a timestamp past every trade reserves none.
    expect(h.call('TradesSyncStart', { timestamp: 2147483647 })).toBe(true);
    expect(h.call('TradesSyncRead')).toEqual([]);
    h.call('TradesSyncStart', { timestamp: 0 });
    expect(orders(h.call('TradesSyncRead', { limit: 1 }))).toEqual([first.order]);
    expect(orders(h.call('TradesSyncRead', { limit: 5 }))).toEqual([second.order, third.order]);
    expect(h.call('TradesSyncRead', { limit: 5 })).toEqual([]);
  });
});

describe('MarginsRequest', () => {
  it('answers one margin level per account with open trades, ascending by login, as MarginLevelRequest computes it', () => {
    const h = pf4Harness({ accounts: 30, trades: 50 }, 4);
    const withTrades = [...new Set(h.call('TradesRequest').items.map((t: Trade) => t.login))].sort(
      (x, y) => (x as number) - (y as number),
    );
    const levels = h.call('MarginsRequest');
    expect(levels.map((l: { login: number }) => l.login)).toEqual(withTrades);
    for (const level of levels) {
      records.PF4MarginLevel.parse(level);
      const { updated: _u, ...live } = h.call('MarginLevelRequest', { login: level.login });
      expect(level).toMatchObject(live);
    }
  });

  it('computes balance, equity, margin, free margin and level, and classifies a margin call', () => {
    const { h, account, open, tick } = setUp();
    const idle = account('Idle', 500);
    const login = account('Levels', 2000);
    open(login, { volume: 150 });
    const level = () => h.call('MarginsRequest').find((l: { login: number }) => l.login === login);
    expect(h.call('MarginsRequest').some((l: { login: number }) => l.login === idle)).toBe(false);
    // 1.5 lots of EURUSD at 1:100 hold 1500 EUR valued at the mid 1.10005; equity is down 1.5 points of spread.
    expect(level()).toMatchObject({
      login,
      group: 'real\\vip',
      leverage: 100,
      balance: 2000,
      equity: 1985,
      margin: 1650.08,
      free: 334.92,
      volume: 150,
      levelType: 'Ok',
      controllingType: 'Percent',
    });
    expect(level().level).toBeCloseTo((1985 / 1650.08) * 100, 2);
    const mark = h.events.length;
    tick(1.0968, 1.0969);
    // Equity 2000 - 150 000 * 0.0033 = 1505: 91% is under the 100% margin call level and over the 50% stop-out.
    expect(level()).toMatchObject({ equity: 1505, levelType: 'MarginCall' });
    expect(
      h.events
        .slice(mark)
        .filter((e) => e.kind === 'margin')
        .map((e) => [e.record.login, e.record.levelType]),
    ).toEqual([[login, 'MarginCall']]);
  });

  it('drops an account once its last trade is closed', () => {
    const { h, account, open } = setUp();
    const login = account('Closer', 10_000);
    const trade = open(login);
    expect(h.call('MarginsRequest').map((l: { login: number }) => l.login)).toEqual([login]);
    h.call('TradeTransaction', { tradeTransactionType: 'BrOrderClose', order: trade.order });
    expect(h.call('MarginsRequest')).toEqual([]);
  });
});
