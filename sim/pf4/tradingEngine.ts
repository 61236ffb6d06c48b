/**
 * The PF4 trading engine: trade transactions checked against the current quote, the symbol's stops and freeze
 * levels, its trade sessions and the holidays, the group's security settings and the account's free margin; pending
 * activation, stop-loss and take-profit triggers and stop-out driven by the quote feed; swaps at rollover; the
 * history of closed trades with balance check and fix; and the rollback buffer behind TradeClearRollback.
 *
 * Per tick only the trades of the ticking symbol are looked at: their floating results are kept per trade and per
 * account, so an account's equity is known without walking its other trades, and stop-out is detected on the tick
 * that causes it. Margin per trade is fixed when the trade opens (at the open price), as PF4 does.
 */
import { PF4_RESULT } from '../../shared/resultCodes.js';
import type { Instrument } from '../feed/instruments.js';
import { pointOf, roundTo } from '../feed/instruments.js';
import type { Quote } from '../feed/quoteFeed.js';
import { closingPrice, profitAt, toUsd } from '../feed/valuation.js';
import { atEveryMidnight } from '../world/daily.js';
import { cents, iso } from '../world/people.js';
import { CommandError } from '../world/commandError.js';
import {
  isBuyCommand, isPending,
  type PF4ActivationType, type PF4Command, type PF4TradeRecord, type PF4TradeRow, type PF4TradeState, type PF4UserRecord,
} from './pf4Records.js';
import type { Pf4World } from './pf4World.js';

const R = PF4_RESULT;
const MINUTE_MS = 60_000;
/** A pending order's expiration must be at least this far ahead (TradeCheckStops). */
const MIN_EXPIRATION_MS = 10 * MINUTE_MS;

export type MarginLevelType = 'Ok' | 'MarginCall' | 'StopOut';

export interface PF4MarginLevelRecord {
  login: number;
  group: string;
  leverage: number;
  updated: number;
  balance: number;
  equity: number;
  volume: number;
  margin: number;
  free: number;
  level: number;
  controllingType: 'Percent' | 'Currency';
  levelType: MarginLevelType;
}

/** What a trade transaction asks for, read from PF4TradeTransaction fields. */
export interface OpenRequest {
  login: number;
  symbol: string;
  command: PF4Command;
  volume: number;
  price?: number;
  sl: number;
  tp: number;
  expiration?: number;
  ieDeviation?: number;
  comment: string;
  reason: PF4TradeRow['tradeRecordReason'];
  magic?: number;
}

interface AccountState {
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
interface TradeSlot {
  row: PF4TradeRow;
  margin: number;
  result: number;
  account: AccountState;
}

/** An automatic activation held until it commits; TradeClearRollback undoes it before then. */
interface RollbackEntry {
  order: number;
  kind: 'Pending' | 'SL' | 'TP' | 'Stopout';
  before: PF4TradeRow;
  /** For closes: the history record it wrote and what it added to the balance. */
  closed?: PF4TradeRecord;
  balanceDelta: number;
  commitsAt: number;
}

export class Pf4TradingEngine {
  /** The open trades of each symbol, as slots: a tick walks these without touching the large tables. */
  private readonly bySymbol = new Map<string, Map<number, TradeSlot>>();
  private readonly slots = new Map<number, TradeSlot>();
  private readonly byLogin = new Map<number, Set<number>>();
  private readonly pending = new Set<number>();
  private readonly accounts = new Map<number, AccountState>();
  private readonly historyByLogin = new Map<number, PF4TradeRecord[]>();
  private readonly historyByOrder = new Map<number, PF4TradeRecord>();
  private readonly rollback = new Map<number, RollbackEntry>();
  /** Logins a broker holds a margin level for: those with open trades or orders, as the resync and events tell it. */
  private readonly announcedMargins = new Set<number>();
  private timer: NodeJS.Timeout | null = null;
  private cancelRollover: (() => void) | null = null;
  historyCount = 0;

  constructor(private readonly world: Pf4World, private readonly rollbackMs: number) {}

  // ---- set-up and timers ----------------------------------------------------------------------------------------

  /** Indexes the generated trades and computes every account's margin and floating result. */
  indexAll(): void {
    for (const row of this.world.trades.values()) this.track(row);
    for (const login of this.byLogin.keys()) this.announcedMargins.add(login);
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

  // ---- history ---------------------------------------------------------------------------------------------------

  /** Appends a closed trade or a balance/credit entry to the history (generation, closes, restores). */
  addHistory(record: PF4TradeRecord): void {
    let list = this.historyByLogin.get(record.login);
    if (!list) this.historyByLogin.set(record.login, (list = []));
    list.push(record);
    this.historyByOrder.set(record.order, record);
    this.historyCount++;
  }

  private removeHistory(record: PF4TradeRecord): void {
    const list = this.historyByLogin.get(record.login);
    const at = list ? list.indexOf(record) : -1;
    if (list && at >= 0) list.splice(at, 1);
    this.historyByOrder.delete(record.order);
    this.historyCount--;
  }

  historyRecord(order: number): PF4TradeRecord | undefined {
    return this.historyByOrder.get(order);
  }

  /** Closed trades and balance entries of an account with close time in [from, to], oldest first. */
  history(login: number, from = 0, to = Number.MAX_SAFE_INTEGER): PF4TradeRecord[] {
    const list = this.historyByLogin.get(login) ?? [];
    return list.filter((r) => {
      const t = Date.parse(r.closeTime ?? r.openTime);
      return t >= from && t <= to;
    }).sort((a, b) => Date.parse(a.closeTime ?? a.openTime) - Date.parse(b.closeTime ?? b.openTime) || a.order - b.order);
  }

  /** The balance the history explains: every entry but credit and deleted trades. */
  recomputedBalance(login: number): number {
    let sum = 0;
    for (const r of this.historyByLogin.get(login) ?? []) {
      if (r.tradeCommand === 'Credit' || r.tradeRecordState === 'Deleted') continue;
      sum += r.profit + r.commission + r.storage + r.taxes;
    }
    return cents(sum);
  }

  /** Recorded balance minus the balance the history explains; 0 means intact. */
  balanceDiff(login: number): number {
    const user = this.requireUser(login);
    return cents(user.balance - this.recomputedBalance(login));
  }

  /** Writes the recomputed balance to the account; answers the difference it removed. */
  fixBalance(login: number): number {
    const diff = this.balanceDiff(login);
    if (diff !== 0) {
      const user = this.requireUser(login);
      this.world.replaceUser({ ...user, balance: cents(user.balance - diff) });
      this.log(`balance of ${login} fixed by ${-diff}`);
      this.afterAccountChange(login);
    }
    return diff;
  }

  // ---- margin ----------------------------------------------------------------------------------------------------

  /** The margin a trade holds, in USD, at its open price. Pending orders hold none. */
  requiredMargin(row: Pick<PF4TradeRow, 'symbol' | 'tradeCommand' | 'volume' | 'openPrice'>, user: PF4UserRecord): number {
    if (isPending(row.tradeCommand)) return 0;
    const instrument = this.world.instrumentBySymbol.get(row.symbol);
    const config = this.world.symbolConfig(row.symbol);
    if (!instrument || !config) return 0;
    const lots = row.volume / 100;
    const leverage = Math.max(1, user.leverage);
    const mode = config.marginCalculationMode as string;
    const contract = (config.contractSize as number) ?? instrument.contractSize;
    let amount: number;
    let currency: string;
    if (mode === 'Forex') {
      amount = lots * contract / leverage;
      currency = (config.marginCurrency as string) || instrument.marginCurrency;
    } else if (mode === 'Futures') {
      amount = lots * ((config.marginInitial as number) || contract * row.openPrice / leverage);
      currency = (config.currency as string) || instrument.profitCurrency;
    } else {
      // CFDs are margined on leverage here (CFD-leverage style) so demo accounts hold sensible margins.
      amount = lots * contract * row.openPrice / leverage;
      currency = (config.currency as string) || instrument.profitCurrency;
    }
    amount *= ((config.percentage as number) ?? 100) / 100;
    const override = this.world.groupMargins.get(user.group)?.find((m) => m.symbol === row.symbol);
    const divider = override?.marginDivider || (config.marginDivider as number) || 1;
    return cents(toUsd(amount / divider, currency, (s) => this.world.feed.quote(s)));
  }

  /** Floating result of an open market trade now: profit plus swaps and commission. */
  private currentResult(row: PF4TradeRow, market = this.market(row.symbol)): number {
    if (isPending(row.tradeCommand) || !market) return 0;
    const buy = isBuyCommand(row.tradeCommand);
    const move = buy ? market.bid - row.openPrice : row.openPrice - market.ask;
    return Math.round(move * market.contractRate * row.volume) / 100 + row.storage + row.commission;
  }

  /**
   * What every trade of a symbol needs to value itself at the current quote, worked out once per tick rather than
   * once per trade: the quote and contract size times the profit currency's USD rate.
   */
  private market(symbol: string): { bid: number; ask: number; contractRate: number } | undefined {
    const instrument = this.world.instrumentBySymbol.get(symbol);
    const quote = this.world.feed.quote(symbol);
    if (!instrument || !quote) return undefined;
    // Per 1/100 lot and in cents: volume * contractSize * rate * move / 100 lots, rounded to cents (x100).
    return { bid: quote.bid, ask: quote.ask, contractRate: instrument.contractSize * toUsd(1, instrument.profitCurrency, this.quotes) };
  }

  private readonly quotes = (symbol: string) => this.world.feed.quote(symbol);

  private account(login: number): AccountState {
    let state = this.accounts.get(login);
    if (!state) {
      state = { login, margin: 0, floating: 0, fixed: 0, stopout: 50, call: 100, levelType: 'Ok' };
      this.accounts.set(login, state);
      const user = this.world.users.get(login);
      if (user) this.onUserChanged(user);
    }
    return state;
  }

  /** Keeps the cached balance and group levels of an account with trades in step with its record. */
  onUserChanged(user: PF4UserRecord): void {
    const state = this.accounts.get(user.login);
    if (!state) return;
    const group = this.world.groups.find(user.group);
    state.fixed = user.balance + user.credit;
    state.stopout = group?.marginStopout ?? 50;
    state.call = group?.marginCall ?? 100;
  }

  /**
   * A group's levels changed: accounts of the group with trades pick them up, and the broker learns the margin level of
   * each account whose level type the new levels change. A stop-out it now calls for happens on the next tick.
   */
  onGroupChanged(group: string): void {
    for (const state of this.accounts.values()) {
      const user = this.world.users.get(state.login);
      if (user?.group !== group) continue;
      this.onUserChanged(user);
      const level = this.marginLevel(state.login);
      if (level.levelType !== state.levelType) {
        state.levelType = level.levelType;
        this.announceMargin(level);
      }
    }
  }

  /** A manager edited an account: when a figure of its margin record changed, the broker gets the new level. */
  onAccountEdited(before: PF4UserRecord, after: PF4UserRecord): void {
    if (before.balance !== after.balance || before.credit !== after.credit || before.leverage !== after.leverage
      || before.group !== after.group) {
      this.afterAccountChange(after.login);
    }
  }

  /** The margin level of an account computed afresh from its trades and the current quotes. */
  marginLevel(login: number): PF4MarginLevelRecord {
    const user = this.requireUser(login);
    const group = this.world.groups.find(user.group);
    let margin = 0;
    let floating = 0;
    let volume = 0;
    for (const order of this.byLogin.get(login) ?? []) {
      const row = this.world.trades.get(order);
      if (!row || isPending(row.tradeCommand)) continue;
      margin += this.slots.get(order)?.margin ?? 0;
      floating += this.currentResult(row);
      volume += row.volume;
    }
    const equity = cents(user.balance + user.credit + floating);
    margin = cents(margin);
    const level = margin > 0 ? cents(equity / margin * 100) : 0;
    const stopout = group?.marginStopout ?? 50;
    const call = group?.marginCall ?? 100;
    const levelType: MarginLevelType = margin <= 0 ? 'Ok' : level <= stopout ? 'StopOut' : level <= call ? 'MarginCall' : 'Ok';
    return {
      login, group: user.group, leverage: user.leverage, updated: Math.floor(Date.now() / 1000), balance: user.balance,
      equity, volume, margin, free: cents(equity - margin), level, controllingType: group?.marginControllingType ?? 'Percent',
      levelType,
    };
  }

  /** Logins with open trades (MarginsRequest). */
  loginsWithTrades(): number[] {
    return [...this.byLogin.keys()].filter((login) => (this.byLogin.get(login)?.size ?? 0) > 0).sort((a, b) => a - b);
  }

  openOrdersOf(login: number): number[] {
    return [...(this.byLogin.get(login) ?? [])].sort((a, b) => a - b);
  }

  // ---- trade transactions ----------------------------------------------------------------------------------------

  open(request: OpenRequest, now = Date.now()): PF4TradeRow {
    const user = this.requireUser(request.login, 'orderBy: ');
    const { instrument, config, quote } = this.tradable(request.symbol, now);
    if (user.enableFlags === 0) throw new CommandError(R.TradeDisable, `account ${user.login} is disabled`);
    if (config.tradeMode === 'No' || config.tradeMode === 'Close') {
      throw new CommandError(R.TradeDisable, `trading ${request.symbol} is ${config.tradeMode === 'No' ? 'disabled' : 'close-only'}`);
    }
    this.checkVolume(user, config, request.volume);
    const buy = isBuyCommand(request.command);
    if (!buy && config.longOnly === 1) throw new CommandError(R.TradeLongOnly, `${request.symbol} allows long positions only`);
    const group = this.world.groups.find(user.group);
    const mine = this.byLogin.get(user.login) ?? new Set<number>();
    if (group && group.maxPositions > 0 && mine.size >= group.maxPositions) {
      throw new CommandError(R.TradeTooManyOrders, `account ${user.login} has reached ${group.maxPositions} orders`);
    }
    if (group?.hedgeProhibited === 1 && !isPending(request.command)) {
      for (const order of mine) {
        const other = this.world.trades.get(order);
        if (other && other.symbol === request.symbol && !isPending(other.tradeCommand) && isBuyCommand(other.tradeCommand) !== buy) {
          throw new CommandError(R.TradeHedgeProhibited, `hedging ${request.symbol} is prohibited in group ${user.group}`);
        }
      }
    }
    let openPrice: number;
    if (isPending(request.command)) {
      if (request.price === undefined) throw new CommandError(R.InvalidData, 'price is required for a pending order');
      openPrice = roundTo(request.price, instrument.digits);
      this.checkPendingPrice(instrument, config, request.command, openPrice, quote);
      if (request.expiration !== undefined && request.expiration > 0 && request.expiration < now + MIN_EXPIRATION_MS) {
        throw new CommandError(R.TradeExpirationDenied, 'expiration must be at least 10 minutes ahead');
      }
    } else {
      openPrice = buy ? quote.ask : quote.bid;
      this.checkDeviation(instrument, request.price, request.ieDeviation, openPrice);
    }
    this.checkStops(instrument, config, request.command, openPrice, request.sl, request.tp, quote);
    const row: PF4TradeRow = {
      order: this.world.allocateOrder(), login: user.login, symbol: request.symbol, digits: instrument.digits,
      tradeCommand: request.command, volume: request.volume, openPrice, sl: request.sl, tp: request.tp, openTime: iso(now),
      ...(isPending(request.command) && request.expiration ? { expiration: iso(request.expiration) } : {}),
      commission: isPending(request.command) ? 0 : this.commission(user, config, request.volume), storage: 0,
      magic: request.magic ?? 0, comment: request.comment, tradeRecordReason: request.reason, timeStamp: iso(now),
    };
    if (!isPending(row.tradeCommand)) this.checkMoney(user, row);
    this.world.trades.set(row.order, row);
    this.track(row);
    this.world.emit('trades', 'add', this.world.tradeToWire(row));
    this.log(`'${user.login}': ${describe(row)} opened`);
    this.afterAccountChange(user.login);
    return row;
  }

  modify(order: number, change: { price?: number; sl?: number; tp?: number; expiration?: number }, now = Date.now()): PF4TradeRow {
    const row = this.requireOpen(order);
    const { instrument, config, quote } = this.tradable(row.symbol, now);
    this.checkFreeze(instrument, config, row, quote);
    let openPrice = row.openPrice;
    if (change.price !== undefined && change.price !== 0 && isPending(row.tradeCommand)) {
      openPrice = roundTo(change.price, instrument.digits);
      this.checkPendingPrice(instrument, config, row.tradeCommand, openPrice, quote);
    }
    const sl = change.sl ?? row.sl;
    const tp = change.tp ?? row.tp;
    this.checkStops(instrument, config, row.tradeCommand, openPrice, sl, tp, quote);
    let expiration = row.expiration;
    if (change.expiration !== undefined && isPending(row.tradeCommand)) {
      if (change.expiration > 0 && change.expiration < now + MIN_EXPIRATION_MS) {
        throw new CommandError(R.TradeExpirationDenied, 'expiration must be at least 10 minutes ahead');
      }
      expiration = change.expiration > 0 ? iso(change.expiration) : undefined;
    }
    const next: PF4TradeRow = { ...row, openPrice, sl, tp, timeStamp: iso(now) };
    delete next.activationType;
    if (expiration === undefined) delete next.expiration;
    else next.expiration = expiration;
    this.replaceOpen(next);
    this.log(`'${row.login}': modify ${describe(next)}`);
    return next;
  }

  /** Closes a market trade, all of it or `volume` of it, at the current price. */
  close(order: number, options: { volume?: number; price?: number; ieDeviation?: number } = {}, now = Date.now()): PF4TradeRecord {
    const row = this.requireOpen(order);
    if (isPending(row.tradeCommand)) throw new CommandError(R.TradeBadPrices, `order ${order} is pending: delete it instead`);
    const { instrument, config, quote } = this.tradable(row.symbol, now);
    this.checkFreeze(instrument, config, row, quote);
    const price = closingPrice(quote, isBuyCommand(row.tradeCommand));
    this.checkDeviation(instrument, options.price, options.ieDeviation, price);
    const volume = options.volume ?? row.volume;
    if (!Number.isInteger(volume) || volume <= 0 || volume > row.volume) {
      throw new CommandError(R.TradeBadVolume, `volume must be between 1 and ${row.volume}`);
    }
    if (volume < row.volume) return this.closePart(row, volume, price, now);
    return this.closeAt(row, price, 'ClosedNormal', 'None', now).record;
  }

  /** Removes an open trade. Pending orders are cancelled; a market trade is removed without touching the balance. */
  delete(order: number, now = Date.now()): PF4TradeRecord {
    const row = this.requireOpen(order);
    const record: PF4TradeRecord = {
      ...this.world.tradeToWire(row), tradeRecordState: 'Deleted', closeTime: iso(now), timeStamp: iso(now),
    };
    this.untrack(row);
    this.world.trades.delete(order);
    this.addHistory(record);
    // The delete carries the final record, as the history keeps it.
    this.world.emit('trades', 'delete', record);
    this.log(`'${row.login}': ${describe(row)} deleted`);
    this.afterAccountChange(row.login);
    return record;
  }

  /** Activates a pending order now at the market price (BrOrderActivate). */
  activate(order: number, now = Date.now()): PF4TradeRow {
    const row = this.requireOpen(order);
    if (!isPending(row.tradeCommand)) throw new CommandError(R.TradeBadPrices, `order ${order} is not pending`);
    const { quote } = this.tradable(row.symbol, now);
    const activated = this.activatePending(row, quote, now, false);
    if (!activated) throw new CommandError(R.TradeNoMoney, `not enough money to activate order ${order}`);
    return activated;
  }

  /** A deposit, withdrawal or credit entry; answers the history record it wrote. */
  balance(login: number, command: 'Balance' | 'Credit', amount: number, comment: string, now = Date.now()): PF4TradeRecord {
    const user = this.requireUser(login, 'orderBy: ');
    if (amount === 0 || !Number.isFinite(amount)) throw new CommandError(R.InvalidData, 'price (the amount) must be a non-zero number');
    if (amount < 0) {
      const free = this.marginLevel(login).free;
      if (free + amount < 0) throw new CommandError(R.TradeNoMoney, `free margin ${free} does not cover ${-amount}`);
      if (command === 'Credit' && user.credit + amount < 0) {
        throw new CommandError(R.TradeNoMoney, `credit ${user.credit} does not cover ${-amount}`);
      }
    }
    const time = iso(now);
    const record: PF4TradeRecord = {
      order: this.world.allocateOrder(), login, symbol: '', digits: 0, tradeCommand: command, volume: 0, volumeLots: 0,
      openPrice: 0, sl: 0, tp: 0, openTime: time, closeTime: time, closePrice: 0, commission: 0, commissionAgent: 0,
      storage: 0, profit: cents(amount), taxes: 0, magic: 0, comment: comment || (command === 'Balance' ? (amount > 0 ? 'Deposit' : 'Withdrawal') : 'Credit'),
      tradeRecordReason: 'Dealer', timeStamp: time, tradeRecordState: 'ClosedNormal', activationType: 'None', marginRate: 1,
    };
    this.addHistory(record);
    this.world.replaceUser(command === 'Balance'
      ? { ...user, balance: cents(user.balance + amount) }
      : { ...user, credit: cents(user.credit + amount) });
    this.log(`'${login}': ${command.toLowerCase()} ${amount} (#${record.order})`);
    this.afterAccountChange(login);
    return record;
  }

  /** Direct edit of an open trade's fields by an administrator: no market checks (AdmTradeRecordModify). */
  adminModify(order: number, fields: Partial<Pick<PF4TradeRow, 'sl' | 'tp' | 'magic' | 'comment' | 'commission' | 'storage'>>, now = Date.now()): PF4TradeRow {
    const row = this.requireOpen(order);
    const next: PF4TradeRow = { ...row, ...fields, timeStamp: iso(now) };
    this.replaceOpen(next);
    this.log(`'${row.login}': ${describe(next)} modified by the administrator`);
    // Swaps and commission count towards equity.
    this.afterAccountChange(row.login);
    return next;
  }

  /** Puts a trade restored from a backup among the open trades, without market checks. */
  restoreOpen(row: PF4TradeRow): void {
    this.world.trades.set(row.order, row);
    this.track(row);
    this.world.emit('trades', 'add', this.world.tradeToWire(row));
    this.afterAccountChange(row.login);
  }

  /**
   * Throws the result code a transaction with these prices and stops would get. `reference` replaces the market price
   * (bid and ask half the current spread either side of it). A pending order's open price is measured from the market
   * and its stops from the open price; a market order's stops from the price it would close at.
   */
  checkRequestStops(request: OpenRequest, reference: number | undefined, now = Date.now()): void {
    const instrument = this.world.instrumentBySymbol.get(request.symbol);
    const config = this.world.symbolConfig(request.symbol);
    const live = this.world.feed.quote(request.symbol);
    if (!instrument || !config || !live) throw new CommandError(R.InvalidData, `symbol ${request.symbol} not found`);
    const half = (live.ask - live.bid) / 2;
    // Half a spread of whole points is a multiple of half a point: one more digit holds it exactly.
    const quote = reference === undefined ? live
      : { ...live, bid: roundTo(reference - half, instrument.digits + 1), ask: roundTo(reference + half, instrument.digits + 1) };
    const buy = isBuyCommand(request.command);
    let openPrice = buy ? quote.ask : quote.bid;
    if (isPending(request.command)) {
      if (request.price === undefined) throw new CommandError(R.InvalidData, 'price is required for a pending order');
      openPrice = roundTo(request.price, instrument.digits);
      this.checkPendingPrice(instrument, config, request.command, openPrice, quote);
      if (request.expiration !== undefined && request.expiration > 0 && request.expiration < now + MIN_EXPIRATION_MS) {
        throw new CommandError(R.TradeExpirationDenied, 'expiration must be at least 10 minutes ahead');
      }
    }
    this.checkStops(instrument, config, request.command, openPrice, request.sl, request.tp, quote);
  }

  // ---- the rollback buffer ---------------------------------------------------------------------------------------

  /**
   * Undoes an activation still held in the rollback buffer. Answers false when the ticket is known but nothing is
   * held for it (already committed or rolled back: harmless); throws for a ticket the server never had.
   */
  clearRollback(order: number, now = Date.now()): boolean {
    const entry = this.rollback.get(order);
    if (!entry || entry.commitsAt <= now) {
      if (entry) this.rollback.delete(order);
      if (this.world.trades.has(order) || this.historyByOrder.has(order)) return false;
      throw new CommandError(R.InvalidData, `order ${order} not found`);
    }
    this.rollback.delete(order);
    const kind = `${entry.kind === 'Stopout' ? 'StopOut' : entry.kind}Rollback` as PF4ActivationType;
    const restored: PF4TradeRow = { ...entry.before, activationType: kind, timeStamp: iso(now) };
    if (entry.closed) {
      this.removeHistory(entry.closed);
      const user = this.requireUser(entry.before.login);
      this.world.replaceUser({ ...user, balance: cents(user.balance - entry.balanceDelta) });
      this.world.trades.set(order, restored);
      this.track(restored);
      this.world.emit('trades', 'add', this.world.tradeToWire(restored));
    } else {
      this.replaceOpen(restored, true);
    }
    this.log(`'${entry.before.login}': ${entry.kind} activation of #${order} rolled back`);
    this.afterAccountChange(entry.before.login);
    return true;
  }

  private hold(entry: Omit<RollbackEntry, 'commitsAt'>, now: number): void {
    if (this.rollbackMs > 0) this.rollback.set(entry.order, { ...entry, commitsAt: now + this.rollbackMs });
  }

  // ---- the market moves ------------------------------------------------------------------------------------------

  /** A tick of one symbol: pending activation, SL/TP triggers, floating results and stop-out of the accounts touched. */
  onTick(quote: Quote, now = quote.time): void {
    const slots = this.bySymbol.get(quote.symbol);
    if (!slots || slots.size === 0) return;
    const triggered: Array<[PF4TradeRow, 'Pending' | 'SL' | 'TP']> = [];
    const touched = new Set<AccountState>();
    const market = this.market(quote.symbol);
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
      const result = this.currentResult(row, market);
      slot.account.floating += result - slot.result;
      slot.result = result;
      touched.add(slot.account);
    }
    for (const [row, kind] of triggered) {
      if (!this.world.trades.has(row.order)) continue;
      if (kind === 'Pending') {
        this.activatePending(row, quote, now, true);
      } else {
        const price = closingPrice(quote, isBuyCommand(row.tradeCommand));
        const { record, balanceDelta } = this.closeAt(row, price, 'ClosedNormal', kind, now);
        this.hold({ order: row.order, kind, before: row, closed: record, balanceDelta }, now);
      }
    }
    for (const account of touched) this.checkLevel(account, now);
  }

  /** Expires pending orders and commits rollback entries whose time has come. */
  sweep(now: number): void {
    for (const order of [...this.pending]) {
      const row = this.world.trades.get(order);
      if (row?.expiration && Date.parse(row.expiration) <= now) {
        this.delete(order, now);
        this.log(`'${row.login}': pending #${order} expired`);
      }
    }
    for (const [order, entry] of this.rollback) if (entry.commitsAt <= now) this.rollback.delete(order);
  }

  /** Charges a day's swaps to every open market trade (three days' on the symbol's triple-swap weekday). */
  chargeSwaps(now: number): number {
    const weekday = new Date(now).getUTCDay();
    let charged = 0;
    for (const row of this.world.trades.values()) {
      if (isPending(row.tradeCommand)) continue;
      const user = this.world.users.get(row.login);
      const group = user ? this.world.groups.find(user.group) : undefined;
      const config = this.world.symbolConfig(row.symbol);
      const instrument = this.world.instrumentBySymbol.get(row.symbol);
      if (!user || !config || !instrument || group?.useSwap === 0 || config.swapEnable === 0) continue;
      const override = this.world.groupMargins.get(user.group)?.find((m) => m.symbol === row.symbol);
      const buy = isBuyCommand(row.tradeCommand);
      const points = buy ? (override?.swapLong ?? (config.swapLong as number)) : (override?.swapShort ?? (config.swapShort as number));
      const days = weekday === config.swapRollover3Days ? 3 : 1;
      const raw = points * pointOf(instrument) * instrument.contractSize * (row.volume / 100) * days;
      const swap = cents(toUsd(raw, instrument.profitCurrency, (s) => this.world.feed.quote(s)));
      if (swap === 0) continue;
      this.replaceOpen({ ...row, storage: cents(row.storage + swap), timeStamp: iso(now) });
      charged++;
    }
    return charged;
  }

  // ---- internals -------------------------------------------------------------------------------------------------

  private log(message: string): void {
    this.world.journal(message, '127.0.0.1', 'Trades');
  }

  /** Starts tracking an open trade; a market trade holds `margin` when given (it keeps what it held), else its margin now. */
  private track(row: PF4TradeRow, margin?: number): void {
    let symbolSlots = this.bySymbol.get(row.symbol);
    if (!symbolSlots) this.bySymbol.set(row.symbol, (symbolSlots = new Map()));
    let loginSet = this.byLogin.get(row.login);
    if (!loginSet) this.byLogin.set(row.login, (loginSet = new Set()));
    loginSet.add(row.order);
    const account = this.account(row.login);
    const slot: TradeSlot = { row, margin: 0, result: 0, account };
    symbolSlots.set(row.order, slot);
    this.slots.set(row.order, slot);
    if (isPending(row.tradeCommand)) {
      this.pending.add(row.order);
      return;
    }
    const user = this.world.users.get(row.login);
    slot.margin = margin ?? (user ? this.requiredMargin(row, user) : 0);
    slot.result = this.currentResult(row);
    account.margin += slot.margin;
    account.floating += slot.result;
  }

  private untrack(row: PF4TradeRow): void {
    const slot = this.slots.get(row.order);
    this.slots.delete(row.order);
    this.bySymbol.get(row.symbol)?.delete(row.order);
    const loginSet = this.byLogin.get(row.login);
    loginSet?.delete(row.order);
    if (loginSet?.size === 0) this.byLogin.delete(row.login);
    this.pending.delete(row.order);
    if (slot) {
      slot.account.margin -= slot.margin;
      slot.account.floating -= slot.result;
    }
    if (!loginSet || loginSet.size === 0) this.accounts.delete(row.login);
  }

  /** Stores a changed open trade and sends the update. */
  private replaceOpen(row: PF4TradeRow, retrack = false): void {
    const before = this.world.trades.get(row.order);
    if (before && (retrack || before.tradeCommand !== row.tradeCommand || before.storage !== row.storage || before.commission !== row.commission)) {
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

  private closeAt(row: PF4TradeRow, price: number, state: PF4TradeState, activation: PF4ActivationType, now: number):
    { record: PF4TradeRecord; balanceDelta: number } {
    const instrument = this.world.instrumentBySymbol.get(row.symbol) as Instrument;
    const profit = profitAt(instrument, isBuyCommand(row.tradeCommand), row.openPrice, price, row.volume / 100,
      (s) => this.world.feed.quote(s));
    const time = iso(now);
    const record: PF4TradeRecord = {
      ...this.world.tradeToWire(row), closePrice: price, profit, closeTime: time, timeStamp: time,
      tradeRecordState: state, activationType: activation,
    };
    this.untrack(row);
    this.world.trades.delete(row.order);
    this.addHistory(record);
    const balanceDelta = cents(profit + row.commission + row.storage);
    const user = this.world.users.get(row.login);
    if (user) this.world.replaceUser({ ...user, balance: cents(user.balance + balanceDelta) });
    // The delete carries the final record (state, close time and price), as the history keeps it.
    this.world.emit('trades', 'delete', record);
    this.log(`'${row.login}': close ${describe(row)} at ${price}${activation === 'None' ? '' : ` [${activation.toLowerCase()}]`}`);
    this.afterAccountChange(row.login);
    return { record, balanceDelta };
  }

  /** The closed part keeps the ticket; the rest stays open under a new one, as PF4 does. */
  private closePart(row: PF4TradeRow, volume: number, price: number, now: number): PF4TradeRecord {
    const share = volume / row.volume;
    const remainderOrder = this.world.allocateOrder();
    const part: PF4TradeRow = {
      ...row, volume, commission: cents(row.commission * share), storage: cents(row.storage * share),
      comment: `to #${remainderOrder}`,
    };
    const remainder: PF4TradeRow = {
      ...row, order: remainderOrder, volume: row.volume - volume, commission: cents(row.commission - part.commission),
      storage: cents(row.storage - part.storage), comment: `from #${row.order}`, timeStamp: iso(now),
    };
    // Swap the row for the part being closed so margin and floating leave the account in proportion; the remainder
    // keeps the rest of the margin the trade held.
    const held = this.slots.get(row.order)?.margin ?? 0;
    const partMargin = cents(held * share);
    this.untrack(row);
    this.world.trades.set(row.order, part);
    this.track(part, partMargin);
    const { record } = this.closeAt(part, price, 'ClosedPart', 'None', now);
    this.world.trades.set(remainder.order, remainder);
    this.track(remainder, cents(held - partMargin));
    this.world.emit('trades', 'add', this.world.tradeToWire(remainder));
    this.afterAccountChange(row.login);
    return record;
  }

  /** Turns a pending order into a market trade at the current price; without free margin it is cancelled. */
  private activatePending(row: PF4TradeRow, quote: Quote, now: number, automatic: boolean): PF4TradeRow | undefined {
    const buy = isBuyCommand(row.tradeCommand);
    const active: PF4TradeRow = {
      ...row, tradeCommand: buy ? 'Buy' : 'Sell', openPrice: buy ? quote.ask : quote.bid, openTime: iso(now), timeStamp: iso(now),
    };
    delete active.expiration;
    const user = this.requireUser(row.login);
    const config = this.world.symbolConfig(row.symbol);
    active.commission = config ? this.commission(user, config, row.volume) : 0;
    try {
      this.checkMoney(user, active);
    } catch {
      if (automatic) {
        const cancelled = this.delete(row.order, now);
        this.log(`'${row.login}': pending #${row.order} cancelled [no money]`);
        void cancelled;
      }
      return undefined;
    }
    this.replaceOpen(active);
    if (automatic) this.hold({ order: row.order, kind: 'Pending', before: row, balanceDelta: 0 }, now);
    this.log(`'${row.login}': pending #${row.order} activated at ${active.openPrice}`);
    this.afterAccountChange(row.login);
    return active;
  }

  /**
   * Re-evaluates an account after a change of its trades or balance and tells the broker its margin: the level while
   * the account has open trades or orders, a delete when its last one has gone.
   */
  private afterAccountChange(login: number): void {
    if (!this.world.users.has(login)) return;
    if (!this.byLogin.has(login)) {
      if (this.announcedMargins.delete(login)) this.world.emit('margin', 'delete', { login });
      return;
    }
    const level = this.marginLevel(login);
    const account = this.accounts.get(login);
    if (account) {
      account.levelType = level.levelType;
      // Re-anchor the cached results on the current quotes, each trade's as well as the account's sum: a trade whose
      // cached result is older (its profit currency's rate moved since its symbol's last tick) would otherwise count
      // the difference twice on its next tick. Every order of the login has a slot; a pending order's result is 0.
      let floating = 0;
      for (const order of this.byLogin.get(login) as Set<number>) {
        const slot = this.slots.get(order) as TradeSlot;
        slot.result = this.currentResult(slot.row);
        floating += slot.result;
      }
      account.floating = floating;
    }
    this.announceMargin(level);
  }

  private announceMargin(level: PF4MarginLevelRecord): void {
    this.announcedMargins.add(level.login);
    this.world.emit('margin', 'update', level);
  }

  /** Level check from the cached figures; the exact level is computed only when the cached one crosses a line. */
  private checkLevel(account: AccountState, now: number): void {
    if (account.margin <= 0) return;
    const level = (account.fixed + account.floating) / account.margin * 100;
    const type: MarginLevelType = level <= account.stopout ? 'StopOut' : level <= account.call ? 'MarginCall' : 'Ok';
    if (type === 'StopOut') {
      this.stopOut(account.login, now);
      return;
    }
    if (type !== account.levelType) {
      account.levelType = type;
      this.announceMargin(this.marginLevel(account.login));
    }
  }

  /** Closes the most losing trades of an account until its level is above the stop-out level again. */
  private stopOut(login: number, now: number): void {
    for (let guard = 0; guard < 10_000; guard++) {
      const level = this.marginLevel(login);
      if (level.levelType !== 'StopOut') return;
      let worst: PF4TradeRow | undefined;
      let worstResult = Number.POSITIVE_INFINITY;
      for (const order of this.byLogin.get(login) ?? []) {
        const row = this.world.trades.get(order);
        if (!row || isPending(row.tradeCommand) || row.activationType === 'StopOutRollback') continue;
        const result = this.currentResult(row);
        if (result < worstResult) {
          worst = row;
          worstResult = result;
        }
      }
      const quote = worst && this.world.feed.quote(worst.symbol);
      if (!worst || !quote) return;
      this.log(`'${login}': stop out at level ${level.level}%`);
      const { record, balanceDelta } = this.closeAt(worst, closingPrice(quote, isBuyCommand(worst.tradeCommand)), 'ClosedNormal', 'Stopout', now);
      this.hold({ order: worst.order, kind: 'Stopout', before: worst, closed: record, balanceDelta }, now);
    }
  }

  private commission(user: PF4UserRecord, config: Record<string, unknown>, volume: number): number {
    const sec = this.world.groupSecurities.get(user.group)?.[config.type as number];
    const perLot = (sec?.standardCommission as number | undefined) ?? 0;
    return perLot > 0 ? -cents(perLot * volume / 100) : 0;
  }

  private checkMoney(user: PF4UserRecord, row: PF4TradeRow): void {
    const margin = this.requiredMargin(row, user);
    const free = this.marginLevel(user.login).free;
    if (margin > free + row.commission) {
      throw new CommandError(R.TradeNoMoney, `not enough money: margin ${margin} exceeds free margin ${free}`);
    }
  }

  private checkVolume(user: PF4UserRecord, config: Record<string, unknown>, volume: number): void {
    const sec = this.world.groupSecurities.get(user.group)?.[config.type as number];
    if (sec && sec.trade === 0) throw new CommandError(R.TradeDisable, `group ${user.group} may not trade ${config.symbol as string}`);
    const min = (sec?.lotMin as number | undefined) || 1;
    const max = (sec?.lotMax as number | undefined) || 100_000;
    const step = (sec?.lotStep as number | undefined) || 1;
    if (!Number.isInteger(volume) || volume < min || volume > max || (volume - min) % step !== 0) {
      throw new CommandError(R.TradeBadVolume, `volume ${volume} must be between ${min} and ${max} in steps of ${step} (1/100 lot)`);
    }
  }

  /** The symbol is known, active, quoted and inside a trade session that no holiday closes. */
  private tradable(symbol: string, now: number): { instrument: Instrument; config: Record<string, unknown>; quote: Quote } {
    const instrument = this.world.instrumentBySymbol.get(symbol);
    const config = this.world.symbolConfig(symbol);
    const quote = this.world.feed.quote(symbol);
    if (!instrument || !config || !quote) throw new CommandError(R.InvalidData, `symbol ${symbol} not found`);
    if (this.world.hiddenSymbols.has(symbol)) throw new CommandError(R.TradeDisable, `symbol ${symbol} is not in the active set`);
    if (!this.world.marketOpen(symbol, now)) throw new CommandError(R.TradeMarketClosed, `market for ${symbol} is closed`);
    return { instrument, config, quote };
  }

  private checkDeviation(instrument: Instrument, requested: number | undefined, deviation: number | undefined, price: number): void {
    if (requested === undefined || requested === 0 || deviation === undefined) return;
    if (Math.abs(requested - price) > deviation * pointOf(instrument) + pointOf(instrument) / 10) {
      throw new CommandError(R.TradeRequote, `price moved to ${price}`);
    }
  }

  private checkPendingPrice(instrument: Instrument, config: Record<string, unknown>, command: PF4Command, price: number, quote: Quote): void {
    const level = ((config.stopsLevel as number) ?? 0) * pointOf(instrument);
    const epsilon = pointOf(instrument) / 10;
    const belowMarket = command === 'BuyLimit' || command === 'SellStop';
    const market = command === 'BuyLimit' || command === 'BuyStop' ? quote.ask : quote.bid;
    const rightSide = belowMarket ? price < market : price > market;
    if (!rightSide) throw new CommandError(R.TradeBadPrices, `price ${price} is on the wrong side of the market for ${command}`);
    if (Math.abs(price - market) + epsilon < level) {
      throw new CommandError(R.TradeBadStops, `price ${price} is closer to the market than the stops level`);
    }
  }

  private checkStops(instrument: Instrument, config: Record<string, unknown>, command: PF4Command, openPrice: number, sl: number,
    tp: number, quote: Quote): void {
    const level = ((config.stopsLevel as number) ?? 0) * pointOf(instrument);
    const epsilon = pointOf(instrument) / 10;
    const buy = isBuyCommand(command);
    // Market trades measure from the price they would close at; pending orders from their own price.
    const reference = isPending(command) ? openPrice : buy ? quote.bid : quote.ask;
    const badSl = sl !== 0 && (buy ? sl > reference - level + epsilon : sl < reference + level - epsilon);
    const badTp = tp !== 0 && (buy ? tp < reference + level - epsilon : tp > reference - level + epsilon);
    if (sl < 0 || tp < 0 || badSl || badTp) {
      throw new CommandError(R.TradeBadStops, `${badSl || sl < 0 ? `sl ${sl}` : `tp ${tp}`} is too close to ${reference} (stops level ${config.stopsLevel as number} points)`);
    }
  }

  private checkFreeze(instrument: Instrument, config: Record<string, unknown>, row: PF4TradeRow, quote: Quote): void {
    const freeze = ((config.freezeLevel as number) ?? 0) * pointOf(instrument);
    if (freeze <= 0) return;
    const buy = isBuyCommand(row.tradeCommand);
    const near = (a: number, b: number) => Math.abs(a - b) < freeze;
    if (isPending(row.tradeCommand)) {
      const market = row.tradeCommand === 'BuyLimit' || row.tradeCommand === 'BuyStop' ? quote.ask : quote.bid;
      if (near(row.openPrice, market)) throw new CommandError(R.TradeModifyDenied, `order ${row.order} is frozen: price within the freeze level`);
      return;
    }
    const price = buy ? quote.bid : quote.ask;
    if ((row.sl !== 0 && near(row.sl, price)) || (row.tp !== 0 && near(row.tp, price))) {
      throw new CommandError(R.TradeModifyDenied, `order ${row.order} is frozen: a stop is within the freeze level`);
    }
  }

  private requireUser(login: number, prefix = ''): PF4UserRecord {
    const user = this.world.users.get(login);
    if (!user) throw new CommandError(R.InvalidData, `${prefix}login ${login} not found`);
    return user;
  }

  private requireOpen(order: number): PF4TradeRow {
    const row = this.world.trades.get(order);
    if (!row) throw new CommandError(R.InvalidData, `order ${order} not found`);
    return row;
  }
}

function pendingTriggered(row: PF4TradeRow, quote: Quote): boolean {
  switch (row.tradeCommand) {
    case 'BuyLimit': return quote.ask <= row.openPrice;
    case 'BuyStop': return quote.ask >= row.openPrice;
    case 'SellLimit': return quote.bid >= row.openPrice;
    case 'SellStop': return quote.bid <= row.openPrice;
    default: return false;
  }
}

function describe(row: PF4TradeRow): string {
  return `#${row.order} ${row.tradeCommand.toLowerCase()} ${(row.volume / 100).toFixed(2)} ${row.symbol} at ${row.openPrice}`;
}
