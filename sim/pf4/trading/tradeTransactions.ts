/**
 * The trade transactions a manager sends, each checked (tradeChecks.ts) before it changes anything: open, modify,
 * close (all or part), delete, activate a pending order, balance and credit entries, an administrator's edit and a
 * restore; and the close and activation the market triggers use. Each moves money between the trade and the balance,
 * writes the history, sends the trade events and the account's new margin level, and journals what it did.
 */
import { PF4_RESULT } from '../../../shared/resultCodes.js';
import type { Instrument } from '../../feed/instruments.js';
import { roundTo } from '../../feed/instruments.js';
import type { Quote } from '../../feed/quoteFeed.js';
import { closingPrice, profitAt } from '../../feed/valuation.js';
import { CommandError } from '../../world/commandError.js';
import { cents, iso } from '../../world/people.js';
import {
  isBuyCommand,
  isPending,
  type PF4ActivationType,
  type PF4TradeRecord,
  type PF4TradeRow,
  type PF4TradeState,
  type PF4UserRecord,
} from '../pf4Records.js';
import type { Pf4World } from '../pf4World.js';
import { commission } from './charges.js';
import { requiredMargin, type MarginLevels } from './marginLevels.js';
import type { TradeBook } from './tradeBook.js';
import {
  checkDeviation,
  checkExpiration,
  checkFreeze,
  checkMayOpen,
  checkMoney,
  checkPendingPrice,
  checkStops,
  pendingOpenPrice,
  requireOpen,
  requireUser,
  tradable,
  type OpenRequest,
} from './tradeChecks.js';
import type { TradeHistory } from './tradeHistory.js';
import { describeTrade, journalTrade } from './tradeJournal.js';

const R = PF4_RESULT;

/** A close: the history record it wrote and what it added to the balance. */
export interface Closed {
  record: PF4TradeRecord;
  balanceDelta: number;
}

export class TradeTransactions {
  constructor(
    private readonly world: Pf4World,
    private readonly book: TradeBook,
    private readonly margins: MarginLevels,
    private readonly history: TradeHistory,
  ) {}

  open(request: OpenRequest, now: number): PF4TradeRow {
    const user = requireUser(this.world, request.login, 'orderBy: ');
    const { instrument, config, quote } = tradable(this.world, request.symbol, now);
    checkMayOpen(this.world, user, config, request, this.book.ordersOf(user.login) ?? new Set<number>());
    const pending = isPending(request.command);
    let openPrice: number;
    if (pending) {
      openPrice = pendingOpenPrice(instrument, config, request, quote, now);
    } else {
      openPrice = isBuyCommand(request.command) ? quote.ask : quote.bid;
      checkDeviation(instrument, request.price, request.ieDeviation, openPrice);
    }
    checkStops(instrument, config, request.command, openPrice, request.sl, request.tp, quote);
    const row: PF4TradeRow = {
      order: this.world.allocateOrder(),
      login: user.login,
      symbol: request.symbol,
      digits: instrument.digits,
      tradeCommand: request.command,
      volume: request.volume,
      openPrice,
      sl: request.sl,
      tp: request.tp,
      openTime: iso(now),
      ...(pending && request.expiration ? { expiration: iso(request.expiration) } : {}),
      commission: pending ? 0 : commission(this.world, user, config, request.volume),
      storage: 0,
      magic: request.magic ?? 0,
      comment: request.comment,
      tradeRecordReason: request.reason,
      timeStamp: iso(now),
    };
    if (!pending) this.checkMoney(user, row);
    this.book.add(row);
    journalTrade(this.world, `'${user.login}': ${describeTrade(row)} opened`);
    this.margins.accountChanged(user.login);
    return row;
  }

  modify(
    order: number,
    change: { price?: number; sl?: number; tp?: number; expiration?: number },
    now: number,
  ): PF4TradeRow {
    const row = requireOpen(this.world, order);
    const { instrument, config, quote } = tradable(this.world, row.symbol, now);
    checkFreeze(instrument, config, row, quote);
    let openPrice = row.openPrice;
    if (change.price !== undefined && change.price !== 0 && isPending(row.tradeCommand)) {
      openPrice = roundTo(change.price, instrument.digits);
      checkPendingPrice(instrument, config, row.tradeCommand, openPrice, quote);
    }
    const sl = change.sl ?? row.sl;
    const tp = change.tp ?? row.tp;
    checkStops(instrument, config, row.tradeCommand, openPrice, sl, tp, quote);
    let expiration = row.expiration;
    if (change.expiration !== undefined && isPending(row.tradeCommand)) {
      checkExpiration(change.expiration, now);
      expiration = change.expiration > 0 ? iso(change.expiration) : undefined;
    }
    const next: PF4TradeRow = { ...row, openPrice, sl, tp, timeStamp: iso(now) };
    delete next.activationType;
    if (expiration === undefined) delete next.expiration;
    else next.expiration = expiration;
    this.book.replace(next);
    journalTrade(this.world, `'${row.login}': modify ${describeTrade(next)}`);
    return next;
  }

  /** Closes a market trade, all of it or `volume` of it, at the current price. */
  close(
    order: number,
    options: { volume?: number; price?: number; ieDeviation?: number },
    now: number,
  ): PF4TradeRecord {
    const row = requireOpen(this.world, order);
    if (isPending(row.tradeCommand))
      throw new CommandError(R.TradeBadPrices, `order ${order} is pending: delete it instead`);
    const { instrument, config, quote } = tradable(this.world, row.symbol, now);
    checkFreeze(instrument, config, row, quote);
    const price = closingPrice(quote, isBuyCommand(row.tradeCommand));
    checkDeviation(instrument, options.price, options.ieDeviation, price);
    const volume = options.volume ?? row.volume;
    if (!Number.isInteger(volume) || volume <= 0 || volume > row.volume) {
      throw new CommandError(R.TradeBadVolume, `volume must be between 1 and ${row.volume}`);
    }
    if (volume < row.volume) return this.closePart(row, volume, price, now);
    return this.closeAt(row, price, 'ClosedNormal', 'None', now).record;
  }

  /** Removes an open trade. Pending orders are cancelled; a market trade is removed without touching the balance. */
  delete(order: number, now: number): PF4TradeRecord {
    const row = requireOpen(this.world, order);
    const record: PF4TradeRecord = {
      ...this.world.tradeToWire(row),
      tradeRecordState: 'Deleted',
      closeTime: iso(now),
      timeStamp: iso(now),
    };
    this.book.remove(row);
    this.history.add(record);
    // The delete carries the final record, as the history keeps it.
    this.world.emit('trades', 'delete', record);
    journalTrade(this.world, `'${row.login}': ${describeTrade(row)} deleted`);
    this.margins.accountChanged(row.login);
    return record;
  }

  /** Activates a pending order now at the market price (BrOrderActivate). */
  activate(order: number, now: number): PF4TradeRow {
    const row = requireOpen(this.world, order);
    if (!isPending(row.tradeCommand)) throw new CommandError(R.TradeBadPrices, `order ${order} is not pending`);
    const { quote } = tradable(this.world, row.symbol, now);
    const activated = this.activatePending(row, quote, now);
    if (!activated) throw new CommandError(R.TradeNoMoney, `not enough money to activate order ${order}`);
    return activated;
  }

  /** A deposit, withdrawal or credit entry; answers the history record it wrote. */
  balance(login: number, command: 'Balance' | 'Credit', amount: number, comment: string, now: number): PF4TradeRecord {
    const user = requireUser(this.world, login, 'orderBy: ');
    if (amount === 0 || !Number.isFinite(amount))
      throw new CommandError(R.InvalidData, 'price (the amount) must be a non-zero number');
    if (amount < 0) {
      const free = this.margins.level(login).free;
      if (free + amount < 0) throw new CommandError(R.TradeNoMoney, `free margin ${free} does not cover ${-amount}`);
      if (command === 'Credit' && user.credit + amount < 0) {
        throw new CommandError(R.TradeNoMoney, `credit ${user.credit} does not cover ${-amount}`);
      }
    }
    const time = iso(now);
    const record: PF4TradeRecord = {
      order: this.world.allocateOrder(),
      login,
      symbol: '',
      digits: 0,
      tradeCommand: command,
      volume: 0,
      volumeLots: 0,
      openPrice: 0,
      sl: 0,
      tp: 0,
      openTime: time,
      closeTime: time,
      closePrice: 0,
      commission: 0,
      commissionAgent: 0,
      storage: 0,
      profit: cents(amount),
      taxes: 0,
      magic: 0,
      comment: comment || (command === 'Balance' ? (amount > 0 ? 'Deposit' : 'Withdrawal') : 'Credit'),
      tradeRecordReason: 'Dealer',
      timeStamp: time,
      tradeRecordState: 'ClosedNormal',
      activationType: 'None',
      marginRate: 1,
    };
    this.history.add(record);
    this.world.replaceUser(
      command === 'Balance'
        ? { ...user, balance: cents(user.balance + amount) }
        : { ...user, credit: cents(user.credit + amount) },
    );
    journalTrade(this.world, `'${login}': ${command.toLowerCase()} ${amount} (#${record.order})`);
    this.margins.accountChanged(login);
    return record;
  }

  /** Direct edit of an open trade's fields by an administrator: no market checks (AdmTradeRecordModify). */
  adminModify(
    order: number,
    fields: Partial<Pick<PF4TradeRow, 'sl' | 'tp' | 'magic' | 'comment' | 'commission' | 'storage'>>,
    now: number,
  ): PF4TradeRow {
    const row = requireOpen(this.world, order);
    const next: PF4TradeRow = { ...row, ...fields, timeStamp: iso(now) };
    this.book.replace(next);
    journalTrade(this.world, `'${row.login}': ${describeTrade(next)} modified by the administrator`);
    // Swaps and commission count towards equity.
    this.margins.accountChanged(row.login);
    return next;
  }

  /** Puts a trade restored from a backup among the open trades, without market checks. */
  restoreOpen(row: PF4TradeRow): void {
    this.book.add(row);
    this.margins.accountChanged(row.login);
  }

  /** Closes a whole trade at `price`: the history gets the final record, the balance the result. */
  closeAt(row: PF4TradeRow, price: number, state: PF4TradeState, activation: PF4ActivationType, now: number): Closed {
    const instrument = this.world.instrumentBySymbol.get(row.symbol) as Instrument;
    const profit = profitAt(instrument, isBuyCommand(row.tradeCommand), row.openPrice, price, row.volume / 100, (s) =>
      this.world.feed.quote(s),
    );
    const time = iso(now);
    const record: PF4TradeRecord = {
      ...this.world.tradeToWire(row),
      closePrice: price,
      profit,
      closeTime: time,
      timeStamp: time,
      tradeRecordState: state,
      activationType: activation,
    };
    this.book.remove(row);
    this.history.add(record);
    const balanceDelta = cents(profit + row.commission + row.storage);
    const user = this.world.users.get(row.login);
    if (user) this.world.replaceUser({ ...user, balance: cents(user.balance + balanceDelta) });
    // The delete carries the final record (state, close time and price), as the history keeps it.
    this.world.emit('trades', 'delete', record);
    journalTrade(
      this.world,
      `'${row.login}': close ${describeTrade(row)} at ${price}${activation === 'None' ? '' : ` [${activation.toLowerCase()}]`}`,
    );
    this.margins.accountChanged(row.login);
    return { record, balanceDelta };
  }

  /**
   * Turns a pending order into a market trade at the current price; answers undefined, changing nothing, when the
   * account cannot hold its margin.
   */
  activatePending(row: PF4TradeRow, quote: Quote, now: number): PF4TradeRow | undefined {
    const buy = isBuyCommand(row.tradeCommand);
    const active: PF4TradeRow = {
      ...row,
      tradeCommand: buy ? 'Buy' : 'Sell',
      openPrice: buy ? quote.ask : quote.bid,
      openTime: iso(now),
      timeStamp: iso(now),
    };
    delete active.expiration;
    const user = requireUser(this.world, row.login);
    const config = this.world.symbolConfig(row.symbol);
    active.commission = config ? commission(this.world, user, config, row.volume) : 0;
    try {
      this.checkMoney(user, active);
    } catch {
      return undefined;
    }
    this.book.replace(active);
    journalTrade(this.world, `'${row.login}': pending #${row.order} activated at ${active.openPrice}`);
    this.margins.accountChanged(row.login);
    return active;
  }

  /** The closed part keeps the ticket; the rest stays open under a new one, as PF4 does. */
  private closePart(row: PF4TradeRow, volume: number, price: number, now: number): PF4TradeRecord {
    const share = volume / row.volume;
    const remainderOrder = this.world.allocateOrder();
    const part: PF4TradeRow = {
      ...row,
      volume,
      commission: cents(row.commission * share),
      storage: cents(row.storage * share),
      comment: `to #${remainderOrder}`,
    };
    const remainder: PF4TradeRow = {
      ...row,
      order: remainderOrder,
      volume: row.volume - volume,
      commission: cents(row.commission - part.commission),
      storage: cents(row.storage - part.storage),
      comment: `from #${row.order}`,
      timeStamp: iso(now),
    };
    // Swap the row for the part being closed so margin and floating leave the account in proportion; the remainder
    // keeps the rest of the margin the trade held.
    const held = this.book.slot(row.order)?.margin ?? 0;
    const partMargin = cents(held * share);
    this.book.untrack(row);
    this.world.trades.set(row.order, part);
    this.book.track(part, partMargin);
    const { record } = this.closeAt(part, price, 'ClosedPart', 'None', now);
    this.book.add(remainder, cents(held - partMargin));
    this.margins.accountChanged(row.login);
    return record;
  }

  private checkMoney(user: PF4UserRecord, row: PF4TradeRow): void {
    checkMoney(requiredMargin(this.world, row, user), this.margins.level(user.login).free, row.commission);
  }
}
