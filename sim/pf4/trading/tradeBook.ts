/**
 * The open trades as the engine tracks them: indexed by symbol (a tick walks only its symbol's trades, never the large
 * tables) and by login, each with the margin it has held since it opened and its result at its symbol's last tick, and
 * each account's running sums of both, so an account's equity is known without walking its other trades. Margin per
 * trade is fixed when the trade opens (at the open price), as PF4 does.
 */
import { toUsd } from '../../feed/valuation.js';
import { isBuyCommand, isPending, type PF4TradeRow, type PF4UserRecord } from '../pf4Records.js';
import type { Pf4World } from '../pf4World.js';
import { requiredMargin, type MarginLevelType } from './marginLevels.js';

export interface AccountState {
  login: number;
  margin: number;
  /** Profit, swaps and commissions of the open market trades, as of each trade's last tick. */
  floating: number;
  /** Balance plus credit, kept current through onUserChanged. */
  fixed: number;
  /** The group's stop-out and margin-call levels in percent. */
  stopout: number;
  call: number;
  levelType: MarginLevelType;
}

/** An open trade as the engine tracks it: the current row, what it holds and its result at its symbol's last tick. */
export interface TradeSlot {
  row: PF4TradeRow;
  margin: number;
  result: number;
  account: AccountState;
}

/**
 * What every trade of a symbol needs to value itself at the current quote, worked out once per tick rather than once
 * per trade: the quote and contract size times the profit currency's USD rate.
 */
export interface SymbolMarket {
  bid: number;
  ask: number;
  contractRate: number;
}

export class TradeBook {
  private readonly bySymbol = new Map<string, Map<number, TradeSlot>>();
  private readonly slots = new Map<number, TradeSlot>();
  private readonly byLogin = new Map<number, Set<number>>();
  private readonly pendingOrders = new Set<number>();
  private readonly accountStates = new Map<number, AccountState>();
  private readonly quotes = (symbol: string) => this.world.feed.quote(symbol);

  constructor(private readonly world: Pf4World) {}

  slot(order: number): TradeSlot | undefined {
    return this.slots.get(order);
  }

  /** The open trades and orders of a symbol, by ticket. */
  slotsOf(symbol: string): ReadonlyMap<number, TradeSlot> | undefined {
    return this.bySymbol.get(symbol);
  }

  /** The tickets of an account's open trades and orders; undefined when it has none. */
  ordersOf(login: number): ReadonlySet<number> | undefined {
    return this.byLogin.get(login);
  }

  /** Logins with open trades or orders (MarginsRequest), ascending. */
  loginsWithTrades(): number[] {
    return [...this.byLogin.keys()].filter((login) => (this.byLogin.get(login)?.size ?? 0) > 0).sort((a, b) => a - b);
  }

  openOrdersOf(login: number): number[] {
    return [...(this.byLogin.get(login) ?? [])].sort((a, b) => a - b);
  }

  /** The tickets of the pending orders, as a copy the caller may delete from the book while it walks it. */
  pending(): number[] {
    return [...this.pendingOrders];
  }

  /** The accounts with open trades or orders. */
  accounts(): IterableIterator<AccountState> {
    return this.accountStates.values();
  }

  accountOf(login: number): AccountState | undefined {
    return this.accountStates.get(login);
  }

  /** Keeps the cached balance and group levels of an account with trades in step with its record. */
  onUserChanged(user: PF4UserRecord): void {
    const state = this.accountStates.get(user.login);
    if (!state) return;
    const group = this.world.groups.find(user.group);
    state.fixed = user.balance + user.credit;
    state.stopout = group?.marginStopout ?? 50;
    state.call = group?.marginCall ?? 100;
  }

  /** Starts tracking an open trade; a market trade holds `margin` when given (it keeps what it held), else its margin now. */
  track(row: PF4TradeRow, margin?: number): void {
    let symbolSlots = this.bySymbol.get(row.symbol);
    if (!symbolSlots) this.bySymbol.set(row.symbol, (symbolSlots = new Map<number, TradeSlot>()));
    let loginSet = this.byLogin.get(row.login);
    if (!loginSet) this.byLogin.set(row.login, (loginSet = new Set()));
    loginSet.add(row.order);
    const account = this.account(row.login);
    const slot: TradeSlot = { row, margin: 0, result: 0, account };
    symbolSlots.set(row.order, slot);
    this.slots.set(row.order, slot);
    if (isPending(row.tradeCommand)) {
      this.pendingOrders.add(row.order);
      return;
    }
    const user = this.world.users.get(row.login);
    slot.margin = margin ?? (user ? requiredMargin(this.world, row, user) : 0);
    slot.result = this.currentResult(row);
    account.margin += slot.margin;
    account.floating += slot.result;
  }

  untrack(row: PF4TradeRow): void {
    const slot = this.slots.get(row.order);
    this.slots.delete(row.order);
    this.bySymbol.get(row.symbol)?.delete(row.order);
    const loginSet = this.byLogin.get(row.login);
    loginSet?.delete(row.order);
    if (loginSet?.size === 0) this.byLogin.delete(row.login);
    this.pendingOrders.delete(row.order);
    if (slot) {
      slot.account.margin -= slot.margin;
      slot.account.floating -= slot.result;
    }
    if (!loginSet || loginSet.size === 0) this.accountStates.delete(row.login);
  }

  /** Puts a trade among the open trades, tracks it and sends the add. */
  add(row: PF4TradeRow, margin?: number): void {
    this.world.trades.set(row.order, row);
    this.track(row, margin);
    this.world.emit('trades', 'add', this.world.tradeToWire(row));
  }

  /** Takes a trade out of the open trades (a close or delete sends its own event). */
  remove(row: PF4TradeRow): void {
    this.untrack(row);
    this.world.trades.delete(row.order);
  }

  /** Stores a changed open trade and sends the update. */
  replace(row: PF4TradeRow, retrack = false): void {
    const before = this.world.trades.get(row.order);
    if (
      before &&
      (retrack ||
        before.tradeCommand !== row.tradeCommand ||
        before.storage !== row.storage ||
        before.commission !== row.commission)
    ) {
      // New swaps or commission change the trade's result, not the margin it has held since it opened.
      const held = !retrack && before.tradeCommand === row.tradeCommand ? this.slots.get(row.order)?.margin : undefined;
      this.untrack(before);
      this.world.trades.set(row.order, row);
      this.track(row, held);
    } else {
      this.world.trades.set(row.order, row);
      const slot = this.slots.get(row.order);
      if (slot) slot.row = row;
    }
    this.world.emit('trades', 'update', this.world.tradeToWire(row));
  }

  /**
   * Re-anchors the cached results of an account on the current quotes, each trade's as well as the account's sum: a
   * trade whose cached result is older (its profit currency's rate moved since its symbol's last tick) would otherwise
   * count the difference twice on its next tick. Every order of the login has a slot; a pending order's result is 0.
   */
  reanchor(account: AccountState): void {
    let floating = 0;
    for (const order of this.byLogin.get(account.login) as Set<number>) {
      const slot = this.slots.get(order) as TradeSlot;
      slot.result = this.currentResult(slot.row);
      floating += slot.result;
    }
    account.floating = floating;
  }

  /** Floating result of an open market trade now: profit plus swaps and commission. */
  currentResult(row: PF4TradeRow, market = this.market(row.symbol)): number {
    if (isPending(row.tradeCommand) || !market) return 0;
    const buy = isBuyCommand(row.tradeCommand);
    const move = buy ? market.bid - row.openPrice : row.openPrice - market.ask;
    return Math.round(move * market.contractRate * row.volume) / 100 + row.storage + row.commission;
  }

  market(symbol: string): SymbolMarket | undefined {
    const instrument = this.world.instrumentBySymbol.get(symbol);
    const quote = this.world.feed.quote(symbol);
    if (!instrument || !quote) return undefined;
    // Per 1/100 lot and in cents: volume * contractSize * rate * move / 100 lots, rounded to cents (x100).
    return {
      bid: quote.bid,
      ask: quote.ask,
      contractRate: instrument.contractSize * toUsd(1, instrument.profitCurrency, this.quotes),
    };
  }

  private account(login: number): AccountState {
    let state = this.accountStates.get(login);
    if (!state) {
      state = { login, margin: 0, floating: 0, fixed: 0, stopout: 50, call: 100, levelType: 'Ok' };
      this.accountStates.set(login, state);
      const user = this.world.users.get(login);
      if (user) this.onUserChanged(user);
    }
    return state;
  }
}
