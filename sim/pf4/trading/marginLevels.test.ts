/**
 * Margin: by calculation mode, the levels after account and group changes, the margin level the broker is told and
 * the margin-call and stop-out levels themselves.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pf4Desk, T0 } from '../../../test/support/sim/pf4TradingDesk.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'], now: T0 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('margin by calculation mode', () => {
  it("margins futures by the initial margin per lot in the symbol's currency", () => {
    const { symbol, account, open, margin } = pf4Desk();
    symbol('EURUSD', { marginCalculationMode: 'Futures', marginInitial: 500 });
    const login = account();
    open(login, { volume: 200 });
    expect(margin(login).margin).toBe(1000);
  });

  it('margins futures without an initial margin on leverage at the open price', () => {
    const { symbol, account, open, margin } = pf4Desk();
    symbol('EURUSD', { marginCalculationMode: 'Futures', marginInitial: 0 });
    const login = account();
    open(login, { volume: 100 });
    // 1 lot * 100000 * 1.1001 (the ask) / 100.
    expect(margin(login).margin).toBe(1100.1);
  });

  it("converts a futures margin from the symbol's currency, or from the profit currency when it names none", () => {
    const { symbol, account, open, margin, tick } = pf4Desk();
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
    const { symbol, account, open, margin, tick } = pf4Desk();
    tick(2000, 2000.5, 'XAUUSD');
    symbol('XAUUSD', { marginInitial: 300 });
    const login = account();
    open(login, { symbol: 'XAUUSD', volume: 100 });
    // 1 lot * 100 oz * 2000.5 / 100, halved by real\vip's XAUUSD margin divider of 2.
    expect(margin(login).margin).toBe(1000.25);
  });

  it("converts a CFD margin from the symbol's currency, or from the profit currency when it names none", () => {
    const { symbol, account, open, margin, tick } = pf4Desk();
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

describe('account and group changes', () => {
  it('announces the margin level of an account whose credit a restore changes', () => {
    const { h, account, open, since } = pf4Desk();
    const login = account();
    open(login);
    const after = since();
    h.call('BackupRestoreUsers', { records: [{ login, credit: 500 }] });
    const margins = after().filter((e) => e.kind === 'margin');
    expect(margins).toEqual([
      { kind: 'margin', op: 'update', record: expect.objectContaining({ login, balance: 10_000, equity: 10_490 }) },
    ]);
  });

  it("leaves the accounts of other groups alone when a group's levels change", () => {
    const { account, open, tick, group, since, margin } = pf4Desk();
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
    expect(after().filter((e) => e.kind === 'margin')).toEqual([
      { kind: 'margin', op: 'update', record: expect.objectContaining({ login, levelType: 'MarginCall' }) },
    ]);
  });
});

describe('the margin level the broker is told', () => {
  it('announces a margin call and the way back, once each, and a delete when the last trade closes', () => {
    const { account, open, tick, tx, since, deposit } = pf4Desk();
    const login = account(1500);
    const trade = open(login);
    const margins = since();
    const seen = () =>
      margins()
        .filter((e) => e.kind === 'margin')
        .map((e) => [e.op, e.record.levelType]);
    tick(1.093, 1.0931);
    expect(seen()).toEqual([['update', 'MarginCall']]);
    tick(1.0932, 1.0933);
    expect(seen()).toEqual([['update', 'MarginCall']]);
    tick(1.1, 1.1001);
    expect(seen()).toEqual([
      ['update', 'MarginCall'],
      ['update', 'Ok'],
    ]);
    tx('BrOrderClose', { order: trade.order });
    expect(
      margins()
        .filter((e) => e.kind === 'margin')
        .at(-1),
    ).toEqual({ kind: 'margin', op: 'delete', record: { login } });
    const quiet = since();
    deposit(login, 10);
    expect(quiet().filter((e) => e.kind === 'margin')).toEqual([]);
  });

  it('counts credit towards the level a tick checks', () => {
    const { account, open, tick, deposit, since } = pf4Desk();
    const login = account(600);
    deposit(login, 1000, 'Credit');
    open(login);
    const after = since();
    tick(1.095, 1.0951); // 510 down: equity 1090 on 1100.05 of margin is 99 %, not the 8 % the balance alone would give
    expect(
      after()
        .filter((e) => e.kind === 'margin')
        .map((e) => [e.record.equity, e.record.levelType]),
    ).toEqual([[1090, 'MarginCall']]);
  });

  it('forgets the level of an account whose last trade closed at a margin call: a group change announces nothing for it', () => {
    const { account, open, tick, tx, group, since } = pf4Desk();
    const login = account(1500);
    const trade = open(login);
    tick(1.093, 1.0931);
    tx('BrOrderClose', { order: trade.order });
    const after = since();
    group('real\\vip', { marginCall: 90 });
    expect(after().map((e) => e.kind)).toEqual(['groups']);
  });

  it("answers the level record with the account's group, leverage, market volume and the time it was computed", () => {
    const { account, open, margin } = pf4Desk();
    const login = account(3000);
    open(login, { volume: 100 });
    open(login, { volume: 50, tradeCommand: 'Sell' });
    open(login, { tradeCommand: 'BuyLimit', price: 1.09 });
    vi.setSystemTime(T0 + 1500);
    // Margin 1100.05 + 550.03; the trades are down the spread: 10 + 5.
    expect(margin(login)).toEqual({
      login,
      group: 'real\\vip',
      leverage: 100,
      updated: T0 / 1000 + 1,
      balance: 3000,
      equity: 2985,
      volume: 150,
      margin: 1650.08,
      free: 1334.92,
      level: 180.9,
      controllingType: 'Percent',
      levelType: 'Ok',
    });
  });
});

describe('the margin-call and stop-out levels themselves', () => {
  /** XAUUSD at 2000 without a spread; real\\vip halves its margin: 1 lot holds 1000. */
  function gold() {
    const s = pf4Desk();
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
