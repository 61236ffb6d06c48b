/**
 * What the market does to the trades without a manager asking: per tick of a symbol, pending orders activate when the
 * side they buy or sell at reaches their price, stop losses and take profits close on the closing price, the floating
 * results of the symbol's trades move, and an account the tick takes to its stop-out level is stopped out, most losing
 * trade first. Every automatic activation is held in the rollback buffer. The sweep expires pending orders and commits
 * the held activations whose time has come.
 */
import type { Quote } from '../../feed/quoteFeed.js';
import { closingPrice } from '../../feed/valuation.js';
import { isBuyCommand, isPending, type PF4TradeRow } from '../pf4Records.js';
import type { Pf4World } from '../pf4World.js';
import { levelTypeOf, type MarginLevels } from './marginLevels.js';
import type { RollbackBuffer } from './rollbackBuffer.js';
import type { AccountState, TradeBook } from './tradeBook.js';
import { journalTrade } from './tradeJournal.js';
import type { TradeTransactions } from './tradeTransactions.js';

export class MarketTriggers {
  constructor(
    private readonly world: Pf4World,
    private readonly book: TradeBook,
    private readonly margins: MarginLevels,
    private readonly transactions: TradeTransactions,
    private readonly rollback: RollbackBuffer,
  ) {}

  /** A tick of one symbol: pending activation, SL/TP triggers, floating results and stop-out of the accounts touched. */
  onTick(quote: Quote, now: number): void {
    const slots = this.book.slotsOf(quote.symbol);
    if (!slots || slots.size === 0) return;
    const triggered: Array<[PF4TradeRow, 'Pending' | 'SL' | 'TP']> = [];
    const touched = new Set<AccountState>();
    const market = this.book.market(quote.symbol);
    for (const slot of slots.values()) {
      const row = slot.row;
      // A dealer who rolled an activation back has taken the trade over: the server does not trigger it again.
      const automatic = row.activationType === undefined || !row.activationType.endsWith('Rollback');
      if (isPending(row.tradeCommand)) {
        if (automatic && pendingTriggered(row, quote)) triggered.push([row, 'Pending']);
        continue;
      }
      const buy = row.tradeCommand === 'Buy';
      if (automatic && (row.sl > 0 || row.tp > 0)) {
        const price = buy ? quote.bid : quote.ask;
        if (row.sl > 0 && (buy ? price <= row.sl : price >= row.sl)) triggered.push([row, 'SL']);
        else if (row.tp > 0 && (buy ? price >= row.tp : price <= row.tp)) triggered.push([row, 'TP']);
      }
      const result = this.book.currentResult(row, market);
      slot.account.floating += result - slot.result;
      slot.result = result;
      touched.add(slot.account);
    }
    for (const [row, kind] of triggered) {
      if (!this.world.trades.has(row.order)) continue;
      if (kind === 'Pending') {
        this.activate(row, quote, now);
      } else {
        const price = closingPrice(quote, isBuyCommand(row.tradeCommand));
        const { record, balanceDelta } = this.transactions.closeAt(row, price, 'ClosedNormal', kind, now);
        this.rollback.hold({ order: row.order, kind, before: row, closed: record, balanceDelta }, now);
      }
    }
    for (const account of touched) this.checkLevel(account, now);
  }

  /** Expires pending orders and commits rollback entries whose time has come. */
  sweep(now: number): void {
    for (const order of this.book.pending()) {
      const row = this.world.trades.get(order);
      if (row?.expiration && Date.parse(row.expiration) <= now) {
        this.transactions.delete(order, now);
        journalTrade(this.world, `'${row.login}': pending #${order} expired`);
      }
    }
    this.rollback.commitDue(now);
  }

  /** The market reached a pending order: it activates, or without free margin for it it is cancelled. */
  private activate(row: PF4TradeRow, quote: Quote, now: number): void {
    if (this.transactions.activatePending(row, quote, now)) {
      this.rollback.hold({ order: row.order, kind: 'Pending', before: row, balanceDelta: 0 }, now);
      return;
    }
    this.transactions.delete(row.order, now);
    journalTrade(this.world, `'${row.login}': pending #${row.order} cancelled [no money]`);
  }

  /** Level check from the cached figures; the exact level is computed only when the cached one crosses a line. */
  private checkLevel(account: AccountState, now: number): void {
    if (account.margin <= 0) return;
    const type = levelTypeOf(
      ((account.fixed + account.floating) / account.margin) * 100,
      account.stopout,
      account.call,
    );
    if (type === 'StopOut') {
      this.stopOut(account.login, now);
      return;
    }
    if (type !== account.levelType) {
      account.levelType = type;
      this.margins.announce(this.margins.level(account.login));
    }
  }

  /** Closes the most losing trades of an account until its level is above the stop-out level again. */
  private stopOut(login: number, now: number): void {
    for (let guard = 0; guard < 10_000; guard++) {
      const level = this.margins.level(login);
      if (level.levelType !== 'StopOut') return;
      let worst: PF4TradeRow | undefined;
      let worstResult = Number.POSITIVE_INFINITY;
      for (const order of this.book.ordersOf(login) ?? []) {
        const row = this.world.trades.get(order);
        if (!row || isPending(row.tradeCommand) || row.activationType === 'StopOutRollback') continue;
        const result = this.book.currentResult(row);
        if (result < worstResult) {
          worst = row;
          worstResult = result;
        }
      }
      const quote = worst && this.world.feed.quote(worst.symbol);
      if (!worst || !quote) return;
      journalTrade(this.world, `'${login}': stop out at level ${level.level}%`);
      const { record, balanceDelta } = this.transactions.closeAt(
        worst,
        closingPrice(quote, isBuyCommand(worst.tradeCommand)),
        'ClosedNormal',
        'Stopout',
        now,
      );
      this.rollback.hold({ order: worst.order, kind: 'Stopout', before: worst, closed: record, balanceDelta }, now);
    }
  }
}

function pendingTriggered(row: PF4TradeRow, quote: Quote): boolean {
  switch (row.tradeCommand) {
    case 'BuyLimit':
      return quote.ask <= row.openPrice;
    case 'BuyStop':
      return quote.ask >= row.openPrice;
    case 'SellLimit':
      return quote.bid >= row.openPrice;
    case 'SellStop':
      return quote.bid <= row.openPrice;
    default:
      return false;
  }
}
