/**
 * The PF4 trading engine, the one door the commands and the world use: it builds its parts, runs their timers and
 * passes each call to the part that does the work. The parts, in `trading/`: the open trades and their cached
 * valuations (tradeBook.ts), margin and the levels the broker is told (marginLevels.ts), the checks a transaction
 * must pass (tradeChecks.ts), the transactions (tradeTransactions.ts), what the quote feed triggers
 * (marketTriggers.ts), swaps and commission (charges.ts), the history and its balance check (tradeHistory.ts), and the
 * rollback buffer behind TradeClearRollback (rollbackBuffer.ts).
 */
import type { Quote } from '../feed/quoteFeed.js';
import { atEveryMidnight } from '../world/daily.js';
import type { PF4TradeRecord, PF4TradeRow, PF4UserRecord } from './pf4Records.js';
import type { Pf4World } from './pf4World.js';
import { chargeSwaps } from './trading/charges.js';
import { MarginLevels, type PF4MarginLevelRecord } from './trading/marginLevels.js';
import { MarketTriggers } from './trading/marketTriggers.js';
import { RollbackBuffer } from './trading/rollbackBuffer.js';
import { TradeBook } from './trading/tradeBook.js';
import { checkRequestStops, type OpenRequest } from './trading/tradeChecks.js';
import { TradeHistory } from './trading/tradeHistory.js';
import { TradeTransactions } from './trading/tradeTransactions.js';

export class Pf4TradingEngine {
  private readonly book: TradeBook;
  private readonly margins: MarginLevels;
  private readonly trades: TradeHistory;
  private readonly transactions: TradeTransactions;
  private readonly rollback: RollbackBuffer;
  private readonly triggers: MarketTriggers;
  private timer: NodeJS.Timeout | null = null;
  private cancelRollover: (() => void) | null = null;

  constructor(
    private readonly world: Pf4World,
    rollbackMs: number,
  ) {
    this.book = new TradeBook(world);
    this.margins = new MarginLevels(world, this.book);
    this.trades = new TradeHistory(world, this.margins);
    this.transactions = new TradeTransactions(world, this.book, this.margins, this.trades);
    this.rollback = new RollbackBuffer(world, this.book, this.margins, this.trades, rollbackMs);
    this.triggers = new MarketTriggers(world, this.book, this.margins, this.transactions, this.rollback);
  }

  // ---- set-up and timers ----------------------------------------------------------------------------------------

  /** Indexes the generated trades and computes every account's margin and floating result. */
  indexAll(): void {
    for (const row of this.world.trades.values()) this.book.track(row);
    this.margins.indexed();
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.sweep(Date.now()), 1000);
    this.timer.unref();
    this.cancelRollover = atEveryMidnight((now) => this.world.rollover(now));
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.cancelRollover?.();
    this.timer = null;
    this.cancelRollover = null;
  }

  // ---- the history and the balance check --------------------------------------------------------------------------

  get historyCount(): number {
    return this.trades.count;
  }

  addHistory(record: PF4TradeRecord): void {
    this.trades.add(record);
  }

  historyRecord(order: number): PF4TradeRecord | undefined {
    return this.trades.record(order);
  }

  history(login: number, from?: number, to?: number): PF4TradeRecord[] {
    return this.trades.of(login, from, to);
  }

  balanceDiff(login: number): number {
    return this.trades.balanceDiff(login);
  }

  fixBalance(login: number): number {
    return this.trades.fixBalance(login);
  }

  // ---- accounts and margin ----------------------------------------------------------------------------------------

  onUserChanged(user: PF4UserRecord): void {
    this.book.onUserChanged(user);
  }

  onGroupChanged(group: string): void {
    this.margins.onGroupChanged(group);
  }

  onAccountEdited(before: PF4UserRecord, after: PF4UserRecord): void {
    this.margins.onAccountEdited(before, after);
  }

  marginLevel(login: number): PF4MarginLevelRecord {
    return this.margins.level(login);
  }

  loginsWithTrades(): number[] {
    return this.book.loginsWithTrades();
  }

  openOrdersOf(login: number): number[] {
    return this.book.openOrdersOf(login);
  }

  // ---- trade transactions -----------------------------------------------------------------------------------------

  open(request: OpenRequest, now = Date.now()): PF4TradeRow {
    return this.transactions.open(request, now);
  }

  modify(
    order: number,
    change: { price?: number; sl?: number; tp?: number; expiration?: number },
    now = Date.now(),
  ): PF4TradeRow {
    return this.transactions.modify(order, change, now);
  }

  close(
    order: number,
    options: { volume?: number; price?: number; ieDeviation?: number } = {},
    now = Date.now(),
  ): PF4TradeRecord {
    return this.transactions.close(order, options, now);
  }

  delete(order: number, now = Date.now()): PF4TradeRecord {
    return this.transactions.delete(order, now);
  }

  activate(order: number, now = Date.now()): PF4TradeRow {
    return this.transactions.activate(order, now);
  }

  balance(
    login: number,
    command: 'Balance' | 'Credit',
    amount: number,
    comment: string,
    now = Date.now(),
  ): PF4TradeRecord {
    return this.transactions.balance(login, command, amount, comment, now);
  }

  adminModify(order: number, fields: Parameters<TradeTransactions['adminModify']>[1], now = Date.now()): PF4TradeRow {
    return this.transactions.adminModify(order, fields, now);
  }

  restoreOpen(row: PF4TradeRow): void {
    this.transactions.restoreOpen(row);
  }

  checkRequestStops(request: OpenRequest, reference: number | undefined, now = Date.now()): void {
    checkRequestStops(this.world, request, reference, now);
  }

  clearRollback(order: number, now = Date.now()): boolean {
    return this.rollback.clear(order, now);
  }

  // ---- the market moves -------------------------------------------------------------------------------------------

  onTick(quote: Quote, now = quote.time): void {
    this.triggers.onTick(quote, now);
  }

  sweep(now: number): void {
    this.triggers.sweep(now);
  }

  chargeSwaps(now: number): number {
    return chargeSwaps(this.world, this.book, now);
  }
}
