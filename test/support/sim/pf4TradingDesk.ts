/**
 * A PF4 world for the trading engine's tests (sim/pf4/trading/*.test.ts), driven by manual ticks: EURUSD at
 * 1.10000/1.10010, accounts made on demand (default real\vip: no commission, 1:100), and short ways to send the
 * transactions and read back what they changed. The test files fix the clock at T0 themselves (vi.useFakeTimers in
 * the file, so vitest runs it in a process of its own).
 */
import { pf4Harness } from './worldHarness.js';

/** Wednesday 3 June 2026, noon UTC: every symbol trades round the clock, and no check reads the real clock. */
export const T0 = Date.UTC(2026, 5, 3, 12, 0);
export const MINUTE = 60_000;
export const at = (ms: number) => new Date(ms).toISOString();

export type TradeRow = { order: number; login: number; tradeCommand: string; [field: string]: unknown };

export function pf4Desk(overrides: Record<string, unknown> = {}) {
  const h = pf4Harness(overrides);
  const tick = (bid: number, ask: number, symbol = 'EURUSD') => h.call('SymbolSendTick', { symbol, bid, ask });
  tick(1.1, 1.1001);
  const deposit = (login: number, amount: number, tradeCommand = 'Balance', comment?: string) =>
    h.call('TradeTransaction', {
      tradeTransactionType: 'BrBalance',
      tradeCommand,
      orderBy: login,
      price: amount,
      ...(comment === undefined ? {} : { comment }),
    });
  const account = (money = 10_000, group = 'real\\vip', leverage = 100): number => {
    const { login } = h.call('UserRecordNew', { record: { group, name: 'Rule Tester', leverage } });
    if (money > 0) deposit(login, money);
    return login;
  };
  const openFields = (login: number, fields: Record<string, unknown>) => ({
    tradeTransactionType: 'BrOrderOpen',
    orderBy: login,
    symbol: 'EURUSD',
    tradeCommand: 'Buy',
    volume: 100,
    ...fields,
  });
  const open = (login: number, fields: Record<string, unknown> = {}): TradeRow =>
    h.call('TradeTransaction', openFields(login, fields));
  const openFails = (login: number, fields: Record<string, unknown> = {}) =>
    h.fails('TradeTransaction', openFields(login, fields));
  const tx = (type: string, fields: Record<string, unknown>) =>
    h.call('TradeTransaction', { tradeTransactionType: type, ...fields });
  const txFails = (type: string, fields: Record<string, unknown>) =>
    h.fails('TradeTransaction', { tradeTransactionType: type, ...fields });
  const history = (login: number, range: Record<string, unknown> = {}): TradeRow[] =>
    h.call('TradesUserHistory', { login, ...range });
  const openOrders = (login: number): number[] => h.call('TradesUserRequest', { login }).map((r: TradeRow) => r.order);
  const margin = (login: number) => h.call('MarginLevelRequest', { login });
  const symbol = (name: string, record: Record<string, unknown>) => h.call('CfgUpdateSymbol', { symbol: name, record });
  const group = (name: string, record: Record<string, unknown>) => h.call('GroupRecordUpdate', { group: name, record });
  const journal = () => h.world.journalEntries().map((line) => line.message);
  const since = () => {
    const mark = h.events.length;
    return () => h.events.slice(mark);
  };
  return {
    h,
    tick,
    deposit,
    account,
    open,
    openFails,
    tx,
    txFails,
    history,
    openOrders,
    margin,
    symbol,
    group,
    journal,
    since,
  };
}

/** One account in real\vip (no commission, 1:100) with `deposit` on it, trading EURUSD at 1.10000/1.10010. */
export function pf4Trader(deposit = 10_000, overrides: Record<string, unknown> = {}) {
  const desk = pf4Desk(overrides);
  const login = desk.account(deposit);
  return {
    h: desk.h,
    login,
    open: (fields: Record<string, unknown>) => desk.open(login, fields),
    openFails: (fields: Record<string, unknown>) => desk.openFails(login, fields),
    tick: (bid: number, ask: number) => desk.tick(bid, ask),
  };
}
