/**
 * The PF5 trading engine: dealer requests that place orders and turn them into deals and positions, for hedging
 * accounts (every fill opens its own position, closes name the position) and netting accounts (one position per
 * symbol that grows, shrinks and reverses); pending orders, checked for margin at their price when placed and again
 * when the quote feed fills them (rejected into the history without the money); stop-loss, take-profit and
 * stop-out closes; balance and credit deals; commissions from the group; and the batch deletes with their
 * not-main and not-found rules. Deleting positions or deals never touches the other records or the balance.
 *
 * Per tick only the positions of the ticking symbol are valued: each position's margin and floating result are kept
 * in a slot and summed per account, so an account's margin level is known without walking its other positions. When
 * those running figures put an account near its stop-out level, the exact figures (every position valued at the
 * current quotes) decide, so the running sums never close a position on their own.
 *
 * An account's margin level is also placed against its group's `marginCall` and `marginStopOut` levels, and each
 * crossing is announced as a `margin` change event (`PF5MarginCallEvent`): going below a level is `Enter`, coming back
 * above it `Leave`, the stop-out level's crossings after (entering) or before (leaving) the margin call's. Ticks use
 * the running figures to find the accounts near a level or past one; the exact level decides.
 */
import { PF5_RESULT } from '../../shared/resultCodes.js';
import { roundTo } from '../feed/instruments.js';
import type { Quote } from '../feed/quoteFeed.js';
import { closingPrice, floatingProfit, profitAt, toUsd } from '../feed/valuation.js';
import { KeyedRecords } from '../world/keyedRecords.js';
import { cents, iso } from '../world/people.js';
import { CommandError } from '../world/commandError.js';
import {
  PF5_LOT,
  type PF5DealReason,
  type PF5DealRecord,
  type PF5MarginCallEvent,
  type PF5OrderRow,
  type PF5OrderType,
  type PF5PositionReason,
  type PF5PositionRow,
  type PF5UserRecord,
} from './pf5Records.js';
import type { Pf5World } from './pf5World.js';
import { compareInt64 } from '../../shared/int64.js';

const R = PF5_RESULT;

export interface DealerRequest {
  login: number;
  symbol: string;
  type: PF5OrderType;
  volume: number;
  price?: number;
  priceSL: number;
  priceTP: number;
  /** Hedging: the position a market order closes. */
  position?: number;
  expiration?: number;
  comment: string;
}

export interface DealerResult {
  order: number;
  deal?: number;
  position?: number;
}

/** Running figures of an account with open positions: sums over its position slots. */
interface AccountFigures {
  login: number;
  margin: number;
  floating: number;
}

/** An open position as the engine tracks it: the current row, the margin it holds and its result at its last tick. */
interface PositionSlot {
  row: PF5PositionRow;
  margin: number;
  result: number;
  figures: AccountFigures;
}

/** The running figures may lag the exact ones a little (cross-currency rates move on other symbols' ticks), so the
 *  exact check starts this far above the stop-out level. */
const STOP_OUT_MARGIN = 1.02;

/** Where an account's margin level stands against its group's levels, from the healthiest; absent from the map: Ok. */
const MARGIN_STATES = ['Ok', 'MarginCall', 'StopOut'] as const;
type MarginState = (typeof MARGIN_STATES)[number];

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

const isBuy = (type: PF5OrderType) => type === 'Buy' || type === 'BuyLimit' || type === 'BuyStop';
const isMarket = (type: PF5OrderType) => type === 'Buy' || type === 'Sell';

export class Pf5TradingEngine {
  readonly historyOrders = new KeyedRecords<PF5OrderRow>();
  private readonly positionsBySymbol = new Map<string, Set<number>>();
  private readonly ordersBySymbol = new Map<string, Set<number>>();
  private readonly positionsByLogin = new Map<number, Set<number>>();
  private readonly slots = new Map<number, PositionSlot>();
  private readonly figures = new Map<number, AccountFigures>();
  /** Accounts at or below their group's margin-call level (StopOut: at or below the stop-out level too). */
  private readonly marginStates = new Map<number, Exclude<MarginState, 'Ok'>>();
  private readonly quotes = (symbol: string) => this.world.feed.quote(symbol);

  constructor(private readonly world: Pf5World) {}

  indexAll(): void {
    for (const p of this.world.positions.values()) this.trackPosition(p);
    for (const o of this.world.orders.values()) this.index(this.ordersBySymbol, o.symbol, o.order);
  }

  /** Places every account with positions against its group's levels without announcing it (the starting state). */
  initMarginStates(): void {
    this.marginStates.clear();
    for (const login of this.positionsByLogin.keys()) {
      const user = this.world.users.get(login);
      if (!user) continue;
      const state = this.account(login);
      const where = this.marginState(user.group, state.margin, state.marginLevel);
      if (where !== 'Ok') this.marginStates.set(login, where);
    }
  }

  /** Whether an account is in margin call or stop-out now, as last announced. */
  marginStateOf(login: number): MarginState {
    return this.marginStates.get(login) ?? 'Ok';
  }

  private marginState(group: string, margin: number, level: number): MarginState {
    if (margin <= 0) return 'Ok';
    const g = this.world.groups.get(group);
    const stopOut = (g?.marginStopOut as number | undefined) ?? 50;
    const call = (g?.marginCall as number | undefined) ?? 100;
    return level <= stopOut ? 'StopOut' : level <= call ? 'MarginCall' : 'Ok';
  }

  /**
   * Places an account's exact margin level against its group's levels and announces each level it crossed since the
   * last announcement: entering from the margin call down to the stop-out, leaving from the stop-out up.
   */
  settleMargin(login: number, now = Date.now()): void {
    const user = this.world.users.get(login);
    const before = this.marginStates.get(login) ?? 'Ok';
    if (!user) {
      this.marginStates.delete(login);
      return;
    }
    const state = this.account(login);
    const after = this.marginState(user.group, state.margin, state.marginLevel);
    if (after === before) return;
    if (after === 'Ok') this.marginStates.delete(login);
    else this.marginStates.set(login, after);
    const from = MARGIN_STATES.indexOf(before);
    const to = MARGIN_STATES.indexOf(after);
    const announce = (index: number, direction: 'Enter' | 'Leave') => {
      const event: PF5MarginCallEvent = {
        login,
        group: user.group,
        type: MARGIN_STATES[index] as 'MarginCall' | 'StopOut',
        direction,
        time: iso(now),
        marginLevel: state.marginLevel,
        equity: state.equity,
        margin: state.margin,
      };
      this.world.emit('margin', 'add', event);
    };
    if (to > from) for (let i = from + 1; i <= to; i++) announce(i, 'Enter');
    else for (let i = from; i > to; i--) announce(i, 'Leave');
  }

  /** A group's margin-call or stop-out level may have changed: its accounts with positions are placed again. */
  onGroupChanged(group: string, now = Date.now()): void {
    for (const login of [...this.positionsByLogin.keys(), ...this.marginStates.keys()]) {
      if (this.world.users.get(login)?.group === group) this.settleMargin(login, now);
    }
  }

  hedging(login: number): boolean {
    const user = this.world.users.get(login);
    return this.world.groups.get(user?.group ?? '')?.marginMode === 'RetailHedged';
  }

  /** Places an order; market orders fill at once at the current price. */
  send(request: DealerRequest, now = Date.now()): DealerResult {
    const user = this.world.users.get(request.login);
    if (!user) throw new CommandError(R.ErrNotfound, `login ${request.login} not found`);
    const symbol = this.world.symbolRecord(request.symbol);
    const quote = this.world.feed.quote(request.symbol);
    const instrument = this.world.instrumentBySymbol.get(request.symbol);
    if (!symbol || !quote || !instrument) throw new CommandError(R.ErrNotfound, `symbol ${request.symbol} not found`);
    if (symbol.tradeMode === 'Disabled')
      throw new CommandError(R.TradeOrderProhibited, `trading ${request.symbol} is disabled`);
    const min = symbol.volumeMin as number;
    const max = symbol.volumeMax as number;
    const step = symbol.volumeStep as number;
    if (
      !Number.isInteger(request.volume) ||
      request.volume < min ||
      request.volume > max ||
      (request.volume - min) % step !== 0
    ) {
      throw new CommandError(R.ErrParams, `volume must be between ${min} and ${max} in steps of ${step} (1/10000 lot)`);
    }
    const buy = isBuy(request.type);
    let position: PF5PositionRow | undefined;
    if (request.position !== undefined) {
      position = this.world.positions.get(request.position);
      if (!position || position.login !== request.login || position.symbol !== request.symbol) {
        throw new CommandError(R.ErrNotfound, `position ${request.position} not found`);
      }
      if ((position.action === 'Buy') === buy)
        throw new CommandError(R.ErrParams, 'a close must trade against the position');
      if (request.volume > position.volume)
        throw new CommandError(R.ErrParams, `volume exceeds position ${position.position}`);
    }
    const netted =
      position ??
      (this.hedging(request.login)
        ? undefined
        : this.positionsOf(request.login).find((p) => p.symbol === request.symbol));
    const closing =
      isMarket(request.type) &&
      netted !== undefined &&
      (netted.action === 'Buy') !== buy &&
      request.volume <= netted.volume;
    this.checkTradeable(symbol, request, buy, closing, now);
    this.checkStops(symbol, quote, request, buy);
    const order: PF5OrderRow = {
      order: this.world.allocateOrder(),
      externalID: '',
      login: user.login,
      symbol: request.symbol,
      digits: instrument.digits,
      digitsCurrency: 2,
      contractSize: instrument.contractSize,
      state: 'Placed',
      reason: 'Dealer',
      timeSetup: iso(now),
      type: request.type,
      typeFill: 'Return',
      typeTime: request.expiration ? 'Specified' : 'GtC',
      ...(request.expiration ? { timeExpiration: iso(request.expiration) } : {}),
      priceOrder: 0,
      priceTrigger: 0,
      priceSL: request.priceSL,
      priceTP: request.priceTP,
      volumeInitial: request.volume,
      volumeCurrent: request.volume,
      expertID: 0,
      positionID: position?.position ?? 0,
      comment: request.comment,
    };
    if (isMarket(request.type)) {
      const price = buy ? quote.ask : quote.bid;
      this.checkMargin(user, request.symbol, buy, request.volume, price, position);
      const filled = this.fill({ ...order, priceOrder: price }, price, 'Dealer', now);
      this.settleMargin(user.login, now);
      return filled;
    }
    if (request.price === undefined) throw new CommandError(R.ErrParams, 'price is required for a pending order');
    const price = roundTo(request.price, instrument.digits);
    const market = buy ? quote.ask : quote.bid;
    const below = request.type === 'BuyLimit' || request.type === 'SellStop';
    if (below ? price >= market : price <= market)
      throw new CommandError(R.ErrParams, `price ${price} is on the wrong side of the market`);
    // As MT-style servers do, a pending order must find the margin it would need at its own price now; the fill checks again.
    this.checkMargin(user, request.symbol, buy, request.volume, price, position);
    const placed = { ...order, priceOrder: price };
    this.world.orders.set(placed.order, placed);
    this.index(this.ordersBySymbol, placed.symbol, placed.order);
    this.world.emit('orders', 'add', this.world.orderToWire(placed));
    return { order: placed.order };
  }

  /** The symbol's trade mode and its trade session for the weekday: a closing order passes a close-only symbol. */
  private checkTradeable(
    symbol: Record<string, unknown>,
    request: DealerRequest,
    buy: boolean,
    closing: boolean,
    now: number,
  ): void {
    const mode = symbol.tradeMode;
    const refuse = (why: string) => {
      throw new CommandError(R.TradeOrderProhibited, `${request.symbol}: ${why}`);
    };
    if (mode === 'CloseOnly' && !closing) refuse('only closing orders are accepted');
    if (mode === 'LongOnly' && !buy && !closing) refuse('only buy orders are accepted');
    if (mode === 'ShortOnly' && buy && !closing) refuse('only sell orders are accepted');
    if (!inSession(symbol.sessionTrade, now))
      refuse(`the market is closed (trade sessions of ${WEEKDAYS[new Date(now).getUTCDay()]})`);
  }

  /**
   * Stop-loss, take-profit and pending prices keep the symbol's stops level (in points) from the price they are
   * measured against: the closing side of the market for market orders, the order price for pending orders.
   */
  private checkStops(symbol: Record<string, unknown>, quote: Quote, request: DealerRequest, buy: boolean): void {
    const point = Number(symbol.point) || 0;
    const stopsLevel = Number(symbol.stopsLevel) || 0;
    const level = stopsLevel * point;
    const digits = Number(symbol.digits) || 0;
    const market = isMarket(request.type);
    if (!market && request.price !== undefined && level > 0) {
      const from = buy ? quote.ask : quote.bid;
      if (Math.abs(request.price - from) < level - point / 2) {
        throw new CommandError(
          R.ErrParams,
          `price must be at least ${stopsLevel} points from the market (${roundTo(from, digits)})`,
        );
      }
    }
    const reference = market ? (buy ? quote.bid : quote.ask) : request.price;
    if (reference === undefined) return;
    const below = roundTo(reference - level, digits);
    const above = roundTo(reference + level, digits);
    if (request.priceSL > 0 && (buy ? request.priceSL > below : request.priceSL < above)) {
      throw new CommandError(
        R.ErrParams,
        `priceSL must be ${buy ? `at most ${below}` : `at least ${above}`} (stops level ${stopsLevel} points)`,
      );
    }
    if (request.priceTP > 0 && (buy ? request.priceTP < above : request.priceTP > below)) {
      throw new CommandError(
        R.ErrParams,
        `priceTP must be ${buy ? `at least ${above}` : `at most ${below}`} (stops level ${stopsLevel} points)`,
      );
    }
  }

  /** A balance or credit deal; answers the deal. */
  balance(
    login: number,
    action: 'Balance' | 'Credit',
    amount: number,
    comment: string,
    now = Date.now(),
  ): PF5DealRecord {
    const user = this.world.users.get(login);
    if (!user) throw new CommandError(R.ErrNotfound, `login ${login} not found`);
    if (!Number.isFinite(amount) || amount === 0)
      throw new CommandError(R.ErrParams, 'amount must be a non-zero number');
    if (amount < 0 && this.account(login).marginFree + amount < 0)
      throw new CommandError(R.TradeMaxMoney, 'not enough free margin');
    if (action === 'Credit' && user.credit + amount < 0) throw new CommandError(R.TradeMaxMoney, 'not enough credit');
    const deal = this.world.addDeal({
      login,
      action,
      entry: 'In',
      digits: 0,
      contractSize: 0,
      time: iso(now),
      symbol: '',
      price: 0,
      volume: 0,
      profit: cents(amount),
      positionID: 0,
      order: 0,
      comment: comment || (amount > 0 ? 'Deposit' : 'Withdrawal'),
      reason: 'Dealer',
    });
    this.world.emit('deals', 'add', deal);
    this.world.replaceUser(
      action === 'Balance'
        ? { ...user, balance: cents(user.balance + amount) }
        : { ...user, credit: cents(user.credit + amount) },
    );
    this.settleMargin(login, now);
    return deal;
  }

  /** Balance, credit, equity and margin of an account from its positions and the current quotes. */
  account(login: number): {
    login: number;
    balance: number;
    credit: number;
    equity: number;
    margin: number;
    marginFree: number;
    marginLevel: number;
    profit: number;
    storage: number;
  } {
    const user = this.world.users.get(login);
    if (!user) throw new CommandError(R.ErrNotfound, `login ${login} not found`);
    let margin = 0;
    let profit = 0;
    let storage = 0;
    for (const p of this.positionsOf(login)) {
      margin += this.margin(user, p.symbol, p.volume, p.priceOpen);
      profit += this.profitOf(p);
      storage += p.storage;
    }
    const equity = cents(user.balance + user.credit + profit + storage);
    margin = cents(margin);
    return {
      login,
      balance: user.balance,
      credit: user.credit,
      equity,
      margin,
      marginFree: cents(equity - margin),
      marginLevel: margin > 0 ? cents((equity / margin) * 100) : 0,
      profit: cents(profit),
      storage: cents(storage),
    };
  }

  /** Fills pending orders the tick reaches, closes positions at their stops, and stops out accounts it hurts. */
  onTick(quote: Quote, now = quote.time): void {
    const touched = new Set<number>();
    for (const ticket of [...(this.ordersBySymbol.get(quote.symbol) ?? [])]) {
      const order = this.world.orders.get(ticket);
      if (!order) continue;
      if (order.timeExpiration && Date.parse(order.timeExpiration) <= now) {
        this.finishOrder(order, 'Expired', now);
        continue;
      }
      const ask = quote.ask;
      const bid = quote.bid;
      const hit =
        order.type === 'BuyLimit'
          ? ask <= order.priceOrder
          : order.type === 'BuyStop'
            ? ask >= order.priceOrder
            : order.type === 'SellLimit'
              ? bid >= order.priceOrder
              : bid <= order.priceOrder;
      if (!hit) continue;
      const price = isBuy(order.type) ? ask : bid;
      const user = this.world.users.get(order.login) as PF5UserRecord;
      const closing = order.positionID ? this.world.positions.get(order.positionID) : undefined;
      // An order the account can no longer pay the margin for is rejected: off the book, into the history, no deal.
      if (
        this.marginShortfall(user, order.symbol, isBuy(order.type), order.volumeInitial, price, closing) !== undefined
      ) {
        this.finishOrder(order, 'Rejected', now);
        continue;
      }
      this.unindex(this.ordersBySymbol, order.symbol, order.order);
      this.world.orders.delete(order.order);
      this.world.emit('orders', 'delete', { order: order.order });
      this.fill(order, price, 'Client', now);
      touched.add(order.login);
    }
    const stops: Array<[PF5PositionRow, number, 'Sl' | 'Tp']> = [];
    const valued = new Set<AccountFigures>();
    const watched = new Set<number>();
    for (const ticket of this.positionsBySymbol.get(quote.symbol) ?? []) {
      const slot = this.slots.get(ticket);
      if (!slot) continue;
      const position = slot.row;
      const buy = position.action === 'Buy';
      const price = closingPrice(quote, buy);
      const sl = position.priceSL > 0 && (buy ? price <= position.priceSL : price >= position.priceSL);
      const tp = position.priceTP > 0 && (buy ? price >= position.priceTP : price <= position.priceTP);
      if (sl || tp) stops.push([position, price, sl ? 'Sl' : 'Tp']);
      const result = this.resultOf(position);
      slot.figures.floating += result - slot.result;
      slot.result = result;
      valued.add(slot.figures);
    }
    for (const [position, price, reason] of stops) {
      const current = this.world.positions.get(position.position);
      if (current) this.closePosition(current, current.volume, price, reason, now);
      touched.add(position.login);
    }
    for (const figures of valued) {
      if (this.nearStopOut(figures)) touched.add(figures.login);
      else if (this.nearMarginCrossing(figures)) watched.add(figures.login);
    }
    for (const login of touched) this.checkStopOut(login, now);
    for (const login of new Set([...touched, ...watched])) this.settleMargin(login, now);
  }

  /**
   * Whether an account's running figures put it on the other side of a level than announced, or near one (the
   * running figures may lag the exact ones a little): then the exact level is worth computing.
   */
  private nearMarginCrossing(figures: AccountFigures): boolean {
    const user = this.world.users.get(figures.login);
    if (!user) return false;
    const announced = this.marginStates.get(figures.login) ?? 'Ok';
    if (figures.margin <= 0) return announced !== 'Ok';
    const level = ((user.balance + user.credit + figures.floating) / figures.margin) * 100;
    if (this.marginState(user.group, figures.margin, level) !== announced) return true;
    const group = this.world.groups.get(user.group);
    const near = (line: number) => Math.abs(level - line) <= line * (STOP_OUT_MARGIN - 1);
    return (
      near((group?.marginCall as number | undefined) ?? 100) || near((group?.marginStopOut as number | undefined) ?? 50)
    );
  }

  /** Whether an account's running figures put it at or near its group's stop-out level. */
  private nearStopOut(figures: AccountFigures): boolean {
    if (figures.margin <= 0) return false;
    const user = this.world.users.get(figures.login);
    if (!user) return false;
    const stopOut = (this.world.groups.get(user.group)?.marginStopOut as number | undefined) ?? 50;
    const level = ((user.balance + user.credit + figures.floating) / figures.margin) * 100;
    return level <= stopOut * STOP_OUT_MARGIN;
  }

  /** Revalues an account's slots after a change to the account itself (leverage, group). */
  onUserChanged(login: number): void {
    for (const ticket of this.positionsByLogin.get(login) ?? []) {
      const slot = this.slots.get(ticket);
      if (slot) this.fillSlot(slot, slot.row);
    }
  }

  /**
   * The day's rollover: every open position is charged the symbol's swap for its direction (in points per lot,
   * ByPoints mode), three days' worth on the symbol's triple-swap weekday, unless the account's group trades without
   * swaps or the symbol's swaps are disabled. Answers how many positions were charged.
   */
  chargeSwaps(now: number): number {
    const weekday = WEEKDAYS[new Date(now).getUTCDay()];
    // One lookup table for the whole pass: the symbol list is searched by name otherwise.
    const symbols = new Map(this.world.symbols.map((s) => [s.symbol as string, s]));
    let charged = 0;
    const swapped = new Set<number>();
    for (const position of [...this.world.positions.values()]) {
      const user = this.world.users.get(position.login);
      const group = user ? this.world.groups.get(user.group) : undefined;
      const symbol = symbols.get(position.symbol);
      const instrument = this.world.instrumentBySymbol.get(position.symbol);
      if (!user || !group || !symbol || !instrument) continue;
      if (this.world.symbolForGroup(symbol, group).swapMode === 'Disabled') continue;
      const buy = position.action === 'Buy';
      const points = Number(buy ? symbol.swapLong : symbol.swapShort) || 0;
      const days = symbol.swap3Day === weekday ? 3 : 1;
      const raw = points * Number(symbol.point) * instrument.contractSize * (position.volume / PF5_LOT) * days;
      const swap = cents(toUsd(raw, instrument.profitCurrency, this.quotes));
      if (swap === 0) continue;
      this.replacePosition({ ...position, storage: cents(position.storage + swap), timeUpdate: iso(now) });
      swapped.add(position.login);
      charged++;
    }
    for (const login of swapped) this.settleMargin(login, now);
    return charged;
  }

  /** Deletes positions; every ticket must exist and belong to this server, else nothing is deleted. */
  deletePositions(tickets: number[]): void {
    this.checkDeletable(tickets, (t) => this.world.positions.has(t), 'position');
    const logins = new Set<number>();
    for (const ticket of tickets) {
      const position = this.world.positions.get(ticket);
      // A ticket named twice is deleted once.
      if (!position) continue;
      this.world.positions.delete(ticket);
      this.untrackPosition(position);
      this.world.emit('positions', 'delete', { position: ticket });
      this.cancelTiedOrders(position, Date.now());
      logins.add(position.login);
    }
    for (const login of logins) this.settleMargin(login);
  }

  deleteOrders(tickets: number[]): void {
    this.checkDeletable(tickets, (t) => this.world.orders.has(t) || this.historyOrders.has(t), 'order');
    for (const ticket of tickets) {
      if (this.world.orders.has(ticket)) {
        const order = this.world.orders.get(ticket) as PF5OrderRow;
        this.unindex(this.ordersBySymbol, order.symbol, ticket);
        this.world.orders.delete(ticket);
        this.world.emit('orders', 'delete', { order: ticket });
      } else {
        this.historyOrders.delete(ticket);
      }
    }
  }

  deleteDeals(tickets: number[]): void {
    this.checkDeletable(tickets, (t) => this.world.deals.has(t), 'deal');
    for (const ticket of tickets) {
      this.world.deals.delete(ticket);
      this.world.emit('deals', 'delete', { deal: ticket });
    }
  }

  private checkDeletable(tickets: number[], exists: (t: number) => boolean, what: string): void {
    for (const ticket of tickets)
      if (!exists(ticket)) throw new CommandError(R.ErrNotfound, `${what} ${ticket} not found`);
    for (const ticket of tickets) {
      if (this.world.foreignTickets.has(ticket)) {
        throw new CommandError(R.ErrNotMain, `${what} ${ticket} was created on another trade server`);
      }
    }
  }

  /** Executes an order at `price`: a deal, and the position it opens, grows, shrinks, closes or reverses. */
  private fill(order: PF5OrderRow, price: number, reason: PF5DealReason, now: number): DealerResult {
    const buy = isBuy(order.type);
    const user = this.world.users.get(order.login) as PF5UserRecord;
    const hedging = this.hedging(order.login);
    const netted = hedging ? undefined : this.positionsOf(order.login).find((p) => p.symbol === order.symbol);
    const target = order.positionID ? this.world.positions.get(order.positionID) : netted;
    const commission = this.commission(user, order.volumeInitial);
    let deal: PF5DealRecord;
    let positionId: number;
    if (target && (target.action === 'Buy') !== buy) {
      // Against an open position: close part or all of it; on a netting account the excess reverses it.
      const closing = Math.min(order.volumeInitial, target.volume);
      const profit = this.closeProfit(target, price, closing);
      const excess = order.volumeInitial - closing;
      deal = this.deal(order, price, excess > 0 ? 'InOut' : 'Out', profit, commission, target.position, reason, now);
      this.applyClose(target, closing, now);
      positionId = target.position;
      if (excess > 0) positionId = this.openPosition(order, excess, price, now, target.position);
      this.world.replaceUser({ ...user, balance: cents(user.balance + profit + commission) });
    } else if (target) {
      // Same direction on a netting account: the position grows at the weighted average price.
      const volume = target.volume + order.volumeInitial;
      const priceOpen = roundTo(
        (target.priceOpen * target.volume + price * order.volumeInitial) / volume,
        target.digits,
      );
      this.replacePosition({ ...target, volume, priceOpen, timeUpdate: iso(now) });
      deal = this.deal(order, price, 'In', 0, commission, target.position, reason, now);
      positionId = target.position;
      if (commission !== 0) this.world.replaceUser({ ...user, balance: cents(user.balance + commission) });
    } else {
      positionId = this.openPosition(order, order.volumeInitial, price, now);
      deal = this.deal(order, price, 'In', 0, commission, positionId, reason, now);
      if (commission !== 0) this.world.replaceUser({ ...user, balance: cents(user.balance + commission) });
    }
    this.finishOrder({ ...order, positionID: positionId }, 'Filled', now, false);
    return { order: order.order, deal: deal.deal, position: positionId };
  }

  private openPosition(order: PF5OrderRow, volume: number, price: number, now: number, ticket?: number): number {
    const position: PF5PositionRow = {
      position: ticket ?? order.order,
      login: order.login,
      symbol: order.symbol,
      action: isBuy(order.type) ? 'Buy' : 'Sell',
      digits: order.digits,
      digitsCurrency: 2,
      contractSize: order.contractSize,
      externalId: '',
      timeCreate: iso(now),
      timeUpdate: iso(now),
      priceOpen: price,
      priceSL: order.priceSL,
      priceTP: order.priceTP,
      volume,
      storage: 0,
      rateProfit: 1,
      rateMargin: 1,
      expertId: 0,
      comment: order.comment,
      reason: order.reason,
    };
    this.world.positions.set(position.position, position);
    this.trackPosition(position);
    this.world.emit('positions', 'add', this.world.positionToWire(position));
    return position.position;
  }

  private applyClose(position: PF5PositionRow, volume: number, now: number): void {
    if (volume >= position.volume) {
      this.world.positions.delete(position.position);
      this.untrackPosition(position);
      this.world.emit('positions', 'delete', { position: position.position });
      this.cancelTiedOrders(position, now);
    } else {
      this.replacePosition({ ...position, volume: position.volume - volume, timeUpdate: iso(now) });
    }
  }

  /** Closes a position (or part of it) by a server-side order: stops, stop-out. */
  private closePosition(
    position: PF5PositionRow,
    volume: number,
    price: number,
    reason: PF5DealReason,
    now: number,
  ): void {
    const order: PF5OrderRow = {
      order: this.world.allocateOrder(),
      externalID: '',
      login: position.login,
      symbol: position.symbol,
      digits: position.digits,
      digitsCurrency: 2,
      contractSize: position.contractSize,
      state: 'Placed',
      reason: toPositionReason(reason),
      timeSetup: iso(now),
      type: position.action === 'Buy' ? 'Sell' : 'Buy',
      typeFill: 'Return',
      typeTime: 'GtC',
      priceOrder: price,
      priceTrigger: 0,
      priceSL: 0,
      priceTP: 0,
      volumeInitial: volume,
      volumeCurrent: volume,
      expertID: 0,
      positionID: position.position,
      comment: `[${reason.toLowerCase()} ${price}]`,
    };
    this.fill(order, price, reason, now);
  }

  private checkStopOut(login: number, now: number): void {
    const user = this.world.users.get(login);
    const group = user ? this.world.groups.get(user.group) : undefined;
    if (!user || !group) return;
    for (let guard = 0; guard < 1000; guard++) {
      const state = this.account(login);
      const stopOut = (group.marginStopOut as number) ?? 50;
      if (state.margin <= 0 || state.marginLevel > stopOut) return;
      // The stop-out is announced before its closes (the level it happened at), its end after them.
      if (guard === 0) this.settleMargin(login, now);
      const worst = this.positionsOf(login).sort((a, b) => this.profitOf(a) - this.profitOf(b))[0];
      const quote = worst && this.world.feed.quote(worst.symbol);
      if (!worst || !quote) return;
      this.closePosition(worst, worst.volume, closingPrice(quote, worst.action === 'Buy'), 'So', now);
    }
  }

  private finishOrder(
    order: PF5OrderRow,
    state: 'Filled' | 'Canceled' | 'Expired' | 'Rejected',
    now: number,
    live = true,
  ): void {
    if (live) {
      this.unindex(this.ordersBySymbol, order.symbol, order.order);
      this.world.orders.delete(order.order);
      this.world.emit('orders', 'delete', { order: order.order });
    }
    this.historyOrders.set(order.order, { ...order, state, volumeCurrent: 0, timeDone: iso(now) });
  }

  /** Pending orders placed against a position go with it: once it is gone they are cancelled, never filled as new trades. */
  private cancelTiedOrders(position: PF5PositionRow, now: number): void {
    for (const ticket of [...(this.ordersBySymbol.get(position.symbol) ?? [])]) {
      const order = this.world.orders.get(ticket);
      if (order && order.positionID === position.position) this.finishOrder(order, 'Canceled', now);
    }
  }

  cancel(ticket: number, now = Date.now()): void {
    const order = this.world.orders.get(ticket);
    if (!order) throw new CommandError(R.ErrNotfound, `order ${ticket} not found`);
    this.finishOrder(order, 'Canceled', now);
  }

  private deal(
    order: PF5OrderRow,
    price: number,
    entry: 'In' | 'Out' | 'InOut',
    profit: number,
    commission: number,
    positionID: number,
    reason: PF5DealReason,
    now: number,
  ): PF5DealRecord {
    const deal = this.world.addDeal({
      login: order.login,
      action: isBuy(order.type) ? 'Buy' : 'Sell',
      entry,
      digits: order.digits,
      contractSize: order.contractSize,
      time: iso(now),
      symbol: order.symbol,
      price,
      volume: order.volumeInitial,
      profit,
      positionID,
      order: order.order,
      comment: order.comment,
      reason,
      commission,
    });
    this.world.emit('deals', 'add', deal);
    return deal;
  }

  private replacePosition(position: PF5PositionRow): void {
    this.world.positions.set(position.position, position);
    const slot = this.slots.get(position.position);
    if (slot) this.fillSlot(slot, position);
    this.world.emit('positions', 'update', this.world.positionToWire(position));
  }

  private profitOf(position: PF5PositionRow): number {
    const instrument = this.world.instrumentBySymbol.get(position.symbol);
    return instrument
      ? floatingProfit(
          instrument,
          position.action === 'Buy',
          position.priceOpen,
          position.volume / PF5_LOT,
          this.quotes,
        )
      : 0;
  }

  /** What a position adds to its account's equity now: floating profit and swaps. */
  private resultOf(position: PF5PositionRow): number {
    return this.profitOf(position) + position.storage;
  }

  /** Sets a slot to a position row, moving the account sums by the difference. */
  private fillSlot(slot: PositionSlot, row: PF5PositionRow): void {
    const user = this.world.users.get(row.login);
    const margin = user ? this.margin(user, row.symbol, row.volume, row.priceOpen) : 0;
    const result = this.resultOf(row);
    slot.figures.margin += margin - slot.margin;
    slot.figures.floating += result - slot.result;
    slot.row = row;
    slot.margin = margin;
    slot.result = result;
  }

  private closeProfit(position: PF5PositionRow, price: number, volume: number): number {
    const instrument = this.world.instrumentBySymbol.get(position.symbol);
    return instrument
      ? profitAt(instrument, position.action === 'Buy', position.priceOpen, price, volume / PF5_LOT, (s) =>
          this.world.feed.quote(s),
        )
      : 0;
  }

  /** Margin in USD at leverage: forex on the base currency, everything else on the notional in the profit currency. */
  private margin(user: PF5UserRecord, symbol: string, volume: number, price: number): number {
    const instrument = this.world.instrumentBySymbol.get(symbol);
    if (!instrument) return 0;
    const lots = volume / PF5_LOT;
    const leverage = Math.max(1, user.leverage);
    const forex = instrument.kind === 'forex';
    const amount = forex
      ? (lots * instrument.contractSize) / leverage
      : (lots * instrument.contractSize * price) / leverage;
    return toUsd(amount, forex ? instrument.marginCurrency : instrument.profitCurrency, this.quotes);
  }

  private checkMargin(
    user: PF5UserRecord,
    symbol: string,
    buy: boolean,
    volume: number,
    price: number,
    closing?: PF5PositionRow,
  ): void {
    const shortfall = this.marginShortfall(user, symbol, buy, volume, price, closing);
    if (shortfall !== undefined) throw new CommandError(R.TradeMaxMoney, shortfall);
  }

  /**
   * Why an order of `volume` at `price` cannot be paid for now (the margin it adds above the free margin), or
   * undefined when it can. Closing a named position needs no money.
   */
  private marginShortfall(
    user: PF5UserRecord,
    symbol: string,
    buy: boolean,
    volume: number,
    price: number,
    closing?: PF5PositionRow,
  ): string | undefined {
    if (closing) return undefined;
    const netted = this.hedging(user.login) ? undefined : this.positionsOf(user.login).find((p) => p.symbol === symbol);
    // Reducing a netting position frees margin; only the part that adds exposure needs money.
    const adds = netted && (netted.action === 'Buy') !== buy ? Math.max(0, volume - netted.volume) : volume;
    if (adds <= 0) return undefined;
    const needed = this.margin(user, symbol, adds, price);
    const free = this.account(user.login).marginFree;
    return needed > free ? `not enough money: margin ${cents(needed)} exceeds free margin ${free}` : undefined;
  }

  /** The group's instant per-lot commission, charged on every deal. */
  private commission(user: PF5UserRecord, volume: number): number {
    const commissions = this.world.groups.get(user.group)?.commissions as
      | Record<string, { chargeMode?: string; tiers?: Array<{ value?: number }> }>
      | undefined;
    let total = 0;
    for (const commission of Object.values(commissions ?? {})) {
      if (commission.chargeMode === 'Instant') total += ((commission.tiers?.[0]?.value ?? 0) * volume) / PF5_LOT;
    }
    return total > 0 ? -cents(total) : 0;
  }

  /** Open positions of an account, by ticket. */
  positionsOf(login: number): PF5PositionRow[] {
    return [...(this.positionsByLogin.get(login) ?? [])]
      .sort(compareInt64)
      .map((t) => this.world.positions.get(t))
      .filter((p) => p !== undefined);
  }

  private trackPosition(position: PF5PositionRow): void {
    this.index(this.positionsBySymbol, position.symbol, position.position);
    let set = this.positionsByLogin.get(position.login);
    if (!set) this.positionsByLogin.set(position.login, (set = new Set()));
    set.add(position.position);
    let figures = this.figures.get(position.login);
    if (!figures) this.figures.set(position.login, (figures = { login: position.login, margin: 0, floating: 0 }));
    const slot: PositionSlot = { row: position, margin: 0, result: 0, figures };
    this.slots.set(position.position, slot);
    this.fillSlot(slot, position);
  }

  private untrackPosition(position: PF5PositionRow): void {
    this.unindex(this.positionsBySymbol, position.symbol, position.position);
    const set = this.positionsByLogin.get(position.login);
    set?.delete(position.position);
    if (set?.size === 0) this.positionsByLogin.delete(position.login);
    const slot = this.slots.get(position.position);
    if (slot) {
      this.slots.delete(position.position);
      slot.figures.margin -= slot.margin;
      slot.figures.floating -= slot.result;
      if (set === undefined || set.size === 0) this.figures.delete(position.login);
    }
  }

  private index(map: Map<string, Set<number>>, symbol: string, ticket: number): void {
    let set = map.get(symbol);
    if (!set) map.set(symbol, (set = new Set()));
    set.add(ticket);
  }

  private unindex(map: Map<string, Set<number>>, symbol: string, ticket: number): void {
    map.get(symbol)?.delete(ticket);
  }
}

/** Whether `now` falls in one of the weekday's session windows (minutes from midnight UTC, close exclusive). */
function inSession(sessions: unknown, now: number): boolean {
  if (!Array.isArray(sessions)) return true;
  const date = new Date(now);
  const windows = sessions[date.getUTCDay()] as Array<{ open?: number; close?: number }> | undefined;
  if (!Array.isArray(windows)) return true;
  const minute = date.getUTCHours() * 60 + date.getUTCMinutes();
  return windows.some((w) => minute >= (w.open ?? 0) && minute < (w.close ?? 0));
}

function toPositionReason(reason: PF5DealReason): PF5PositionReason {
  return reason === 'Sl' ? 'SL' : reason === 'Tp' ? 'TP' : reason === 'So' ? 'SO' : reason;
}
