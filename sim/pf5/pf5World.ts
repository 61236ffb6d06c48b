/**
 * The state of one simulated PF5 server: groups, symbols, accounts, open positions, pending orders and the deal
 * history that produced them, generated from the seed. Like the PF4 world, stored records are replaced rather than
 * mutated so a resync snapshot stays consistent.
 */
import type { ServerConfig } from '../config/simConfig.js';
import { roundTo } from '../feed/instruments.js';
import type { Quote } from '../feed/quoteFeed.js';
import { closingPrice, floatingProfit } from '../feed/valuation.js';
import { tickRecord } from '../pf4/pf4Records.js';
import { Pf5TradingEngine } from './pf5Engine.js';
import { KeyedRecords } from '../world/keyedRecords.js';
import { atEveryMidnight } from '../world/daily.js';
import { MarketWorld } from '../world/marketWorld.js';
import { cents, daysBeforeAnchor, emailOf, iso, seedAccounts } from '../world/people.js';
import { Random, deriveSeed } from '../world/random.js';
import type { ChangeSink, SimWorld, SnapshotPart } from '../world/simWorld.js';
import type { CommandRegistry } from '../world/commandRegistry.js';
import { pf5Commands } from './pf5Commands.js';
import {
  PF5_GROUPS,
  PF5_LOT,
  groupRecord,
  symbolRecord,
  type PF5DealRecord,
  type PF5OrderRow,
  type PF5PendingType,
  type PF5PositionRow,
  type PF5UserRecord,
} from './pf5Records.js';
import { addInt64, type Int64 } from '../../shared/int64.js';
import { valueText } from '../../shared/valueText.js';

export const PF5_FIRST_LOGIN = 500000;
/** Order tickets; a position's id is the ticket of the order that opened it. */
export const PF5_FIRST_ORDER = 1_000_000;
export const PF5_FIRST_DEAL = 20_000_000;
/** The logins this server allocates from; a login outside is another trade server's (UsrLoginProhibited). */
export const PF5_LOGIN_RANGE: { min: number; max: number } = { min: PF5_FIRST_LOGIN, max: 999_999 };
const LOTS = [0.01, 0.02, 0.05, 0.1, 0.1, 0.1, 0.2, 0.5, 1, 1, 2, 5];

export class Pf5World extends MarketWorld implements SimWorld {
  readonly family = 'PF5' as const;
  readonly users = new KeyedRecords<PF5UserRecord>();
  readonly positions = new KeyedRecords<PF5PositionRow>();
  readonly orders = new KeyedRecords<PF5OrderRow>();
  readonly deals = new KeyedRecords<PF5DealRecord>();
  readonly groups = new Map<string, Record<string, unknown>>();
  readonly engine: Pf5TradingEngine;
  private cancelRollover: (() => void) | null = null;
  /** Tickets of positions, orders and deals created on another trade server of the cluster: not deletable here. */
  readonly foreignTickets = new Set<number>();
  /** Main and investor passwords by login. Generated accounts have `Demo<login>a` and `View<login>a`. */
  readonly passwords = new Map<number, { main: string; investor: string }>();
  /** Ids beyond 2^53 − 1 are exact bigints (`shared/int64.ts`), typed as numbers: they are only compared. */
  loginRange = { ...PF5_LOGIN_RANGE };
  /** Draws generated passwords (UserAdd without passwords). */
  readonly passwordRandom: Random;
  symbols: Record<string, unknown>[];
  private nextOrder: Int64 = PF5_FIRST_ORDER;
  private nextDeal: Int64 = PF5_FIRST_DEAL;
  private readonly commandTable: CommandRegistry;

  constructor(
    readonly config: ServerConfig,
    seed: number,
    emit: ChangeSink,
  ) {
    super(config, seed, emit, tickRecord);
    // A server of a cluster allocates from its own ranges, which may lie beyond 2^53 − 1 (int64 ids).
    if (config.loginRange) this.loginRange = config.loginRange as { min: number; max: number };
    if (config.firstOrder !== undefined) this.nextOrder = config.firstOrder;
    if (config.firstDeal !== undefined) this.nextDeal = config.firstDeal;
    this.symbols = this.instruments.map(symbolRecord);
    for (const def of PF5_GROUPS) this.groups.set(def.group, groupRecord(def, seed));
    this.generateUsers(new Random(deriveSeed(seed, 'users')), config.accounts);
    this.generateTrading(
      new Random(deriveSeed(seed, 'trades')),
      config.trades,
      config.orders ?? Math.floor(config.trades / 5),
    );
    this.markForeign(new Random(deriveSeed(seed, 'cluster')));
    this.engine = new Pf5TradingEngine(this);
    this.engine.indexAll();
    this.topUpThinAccounts();
    this.engine.initMarginStates();
    this.passwordRandom = new Random(deriveSeed(seed, 'passwords'));
    this.commandTable = pf5Commands(this);
  }

  start(): void {
    this.feed.start();
    this.cancelRollover ??= atEveryMidnight((now) => this.rollover(now));
  }

  stop(): void {
    this.feed.stop();
    this.cancelRollover?.();
    this.cancelRollover = null;
  }

  /** The day's rollover at midnight server time (UTC): swaps on open positions. Answers how many were charged. */
  rollover(now: number): number {
    return this.engine.chargeSwaps(now);
  }

  symbolRecord(symbol: string): Record<string, unknown> | undefined {
    return this.symbols.find((s) => s.symbol === symbol);
  }

  /**
   * A symbol's settings as the accounts of `group` trade it. The contract's PF5ConGroup has no per-group symbol section
   * (no symbols or overrides array), so the overrides come from the group settings it does have that bear on a
   * symbol, as the engine applies them: a group whose `tradeFlags` lack `Swaps` is charged no swaps, which its symbols
   * show as `swapMode` Disabled. Everything else is the symbol's base setting.
   */
  symbolForGroup(symbol: Record<string, unknown>, group: Record<string, unknown>): Record<string, unknown> {
    const flags = valueText(group.tradeFlags ?? '')
      .split(',')
      .map((f) => f.trim());
    const swaps = flags.includes('Swaps') || flags.includes('All');
    return swaps || symbol.swapMode === 'Disabled' ? symbol : { ...symbol, swapMode: 'Disabled' };
  }

  /** An account's passwords; generated accounts have `Demo<login>a` and `View<login>a`. */
  passwordsOf(login: number): { main: string; investor: string } {
    return this.passwords.get(login) ?? { main: `Demo${login}a`, investor: `View${login}a` };
  }

  positionsOf(login: number): PF5PositionRow[] {
    return this.engine.positionsOf(login);
  }

  allocateOrder(): number {
    const ticket = this.nextOrder;
    this.nextOrder = addInt64(ticket, 1);
    return ticket as number;
  }

  private allocateDeal(): number {
    const ticket = this.nextDeal;
    this.nextDeal = addInt64(ticket, 1);
    return ticket as number;
  }

  addUser(user: PF5UserRecord): void {
    this.users.set(user.login, user);
    this.emit('users', 'add', user);
  }

  replaceUser(user: PF5UserRecord): void {
    const before = this.users.get(user.login);
    this.users.set(user.login, user);
    if (before && (before.leverage !== user.leverage || before.group !== user.group))
      this.engine.onUserChanged(user.login);
    this.emit('users', 'update', user);
  }

  /** Generated accounts start at a margin level of at least 300%; the opening deposit grows to match. */
  private topUpThinAccounts(): void {
    const deposits = new Map<number, PF5DealRecord>();
    for (const deal of this.deals.values())
      if (deal.action === 'Balance' && !deposits.has(deal.login)) deposits.set(deal.login, deal);
    for (const login of this.users.keys()) {
      const state = this.engine.account(login);
      if (state.margin <= 0 || state.marginLevel >= 300) continue;
      const user = this.users.get(login) as PF5UserRecord;
      const balance = user.balance + Math.ceil((state.margin * 3 - state.equity) / 100) * 100;
      this.users.set(login, {
        ...user,
        balance,
        balancePrevDay: balance,
        balancePrevMonth: balance,
        equityPrevDay: balance,
        equityPrevMonth: balance,
      });
      const deposit = deposits.get(login);
      if (deposit) this.deals.set(deposit.deal, { ...deposit, profit: cents(deposit.profit + balance - user.balance) });
    }
  }

  /** About one in twenty generated positions (with their opening deals) and orders came from trade server 2. */
  private markForeign(random: Random): void {
    for (const position of this.positions.values()) {
      if (!random.chance(0.05)) continue;
      this.positions.set(position.position, { ...position, externalId: `TS2:${position.position}` });
      this.foreignTickets.add(position.position);
    }
    for (const deal of this.deals.values()) {
      if (deal.positionID !== 0 && this.foreignTickets.has(deal.positionID)) this.foreignTickets.add(deal.deal);
    }
    for (const order of this.orders.values()) {
      if (!random.chance(0.05)) continue;
      this.orders.set(order.order, { ...order, externalID: `TS2:${order.order}` });
      this.foreignTickets.add(order.order);
    }
  }

  commands(): CommandRegistry {
    return this.commandTable;
  }

  counts(): Record<string, number> {
    return {
      users: this.users.size,
      positions: this.positions.size,
      orders: this.orders.size,
      deals: this.deals.size,
      ticks: this.instruments.length,
      symbols: this.symbols.length,
      groups: this.groups.size,
    };
  }

  snapshot(): SnapshotPart[] {
    return [
      { kind: 'users', rows: this.users.values(), toWire: (row: PF5UserRecord) => row },
      { kind: 'positions', rows: this.positions.values(), toWire: (row: PF5PositionRow) => this.positionToWire(row) },
      { kind: 'orders', rows: this.orders.values(), toWire: (row: PF5OrderRow) => this.orderToWire(row) },
      { kind: 'deals', rows: this.deals.values(), toWire: (row: PF5DealRecord) => row },
      { kind: 'ticks', rows: this.feed.allQuotes(), toWire: (quote: Quote) => tickRecord(quote) },
      { kind: 'symbols', rows: [...this.symbols], toWire: (row: Record<string, unknown>) => row },
      { kind: 'groups', rows: [...this.groups.values()], toWire: (row: Record<string, unknown>) => row },
    ];
  }

  positionToWire(row: PF5PositionRow): Record<string, unknown> {
    const instrument = this.instrumentBySymbol.get(row.symbol);
    const quote = this.feed.quote(row.symbol);
    const isBuy = row.action === 'Buy';
    return {
      ...row,
      priceCurrent: quote ? closingPrice(quote, isBuy) : row.priceOpen,
      profit: instrument
        ? floatingProfit(instrument, isBuy, row.priceOpen, row.volume / PF5_LOT, (s) => this.feed.quote(s))
        : 0,
    };
  }

  orderToWire(row: PF5OrderRow): Record<string, unknown> {
    const quote = this.feed.quote(row.symbol);
    const isBuy = row.type.startsWith('Buy');
    return { ...row, priceCurrent: quote ? (isBuy ? quote.ask : quote.bid) : row.priceOrder };
  }

  private generateUsers(random: Random, count: number): void {
    seedAccounts(random, PF5_GROUPS, PF5_FIRST_LOGIN, count, ({ login, person, group, registered, balance }) => {
      const user: PF5UserRecord = {
        login,
        group: group.group,
        name: `${person.firstName} ${person.lastName}`,
        firstName: person.firstName,
        lastName: person.lastName,
        middleName: '',
        company: '',
        country: person.country,
        city: person.city,
        state: '',
        zipCode: person.zipCode,
        address: person.address,
        phone: person.phone,
        eMail: emailOf(person, login),
        comment: '',
        id: '',
        status: '',
        leadCampaign: '',
        leadSource: '',
        color: -16777216,
        leverage: random.chance(0.8) ? group.leverage : random.pick([30, 50, 100, 200]),
        language: 0,
        agent: 0,
        clientID: 0,
        rights: 'Enabled, Password, Trailing, Expert, Reports',
        certSerialNumber: 0,
        registration: iso(registered),
        lastAccess: iso(Math.max(registered, daysBeforeAnchor(random, 30))),
        lastPassChange: iso(registered),
        lastIP: `198.51.100.${random.int(1, 254)}`,
        balance,
        credit: random.chance(0.1) ? cents(random.range(100, 2000)) : 0,
        interestRate: 0,
        commissionDaily: 0,
        commissionMonthly: 0,
        commissionAgentDaily: 0,
        commissionAgentMonthly: 0,
        balancePrevDay: balance,
        balancePrevMonth: balance,
        equityPrevDay: balance,
        equityPrevMonth: balance,
      };
      this.users.set(login, user);
      this.addDeal({
        login,
        action: 'Balance',
        entry: 'In',
        digits: 0,
        contractSize: 0,
        time: iso(registered),
        symbol: '',
        price: 0,
        volume: 0,
        profit: balance,
        positionID: 0,
        order: 0,
        comment: 'initial deposit',
        reason: 'Dealer',
      });
    });
  }

  private generateTrading(random: Random, positions: number, orders: number): void {
    const logins = this.users.keys();
    if (logins.length === 0 || this.instruments.length === 0) return;
    for (let i = 0; i < positions; i++) {
      const instrument = random.pick(this.instruments);
      const quote = this.feed.quote(instrument.symbol) as Quote;
      const action = random.pick(['Buy', 'Sell'] as const);
      const priceOpen = roundTo(((quote.bid + quote.ask) / 2) * (1 + random.range(-0.005, 0.005)), instrument.digits);
      const opened = iso(daysBeforeAnchor(random, 30));
      const volume = Math.round(random.pick(LOTS) * PF5_LOT);
      const stop = priceOpen * random.range(0.005, 0.02);
      const sign = action === 'Buy' ? 1 : -1;
      const row: PF5PositionRow = {
        position: this.allocateOrder(),
        login: random.pick(logins),
        symbol: instrument.symbol,
        action,
        digits: instrument.digits,
        digitsCurrency: 2,
        contractSize: instrument.contractSize,
        externalId: '',
        timeCreate: opened,
        timeUpdate: opened,
        priceOpen,
        // Stops beyond both the open price and the market, so no generated position starts already triggered.
        priceSL: random.chance(0.3)
          ? roundTo(
              sign > 0 ? Math.min(priceOpen, quote.bid) - stop : Math.max(priceOpen, quote.ask) + stop,
              instrument.digits,
            )
          : 0,
        priceTP: random.chance(0.3)
          ? roundTo(
              sign > 0 ? Math.max(priceOpen, quote.ask) + stop : Math.min(priceOpen, quote.bid) - stop,
              instrument.digits,
            )
          : 0,
        volume,
        storage: random.chance(0.4) ? cents(random.range(-20, 5)) : 0,
        rateProfit: 1,
        rateMargin: 1,
        expertId: 0,
        comment: '',
        reason: random.pick(['Client', 'Client', 'Expert', 'Dealer'] as const),
      };
      this.positions.set(row.position, row);
      this.addDeal({
        login: row.login,
        action,
        entry: 'In',
        digits: row.digits,
        contractSize: row.contractSize,
        time: opened,
        symbol: row.symbol,
        price: priceOpen,
        volume,
        profit: 0,
        positionID: row.position,
        order: row.position,
        comment: '',
        reason: row.reason as 'Client' | 'Expert' | 'Dealer',
      });
    }
    for (let i = 0; i < orders; i++) {
      const instrument = random.pick(this.instruments);
      const quote = this.feed.quote(instrument.symbol) as Quote;
      const type: PF5PendingType = random.pick(['BuyLimit', 'SellLimit', 'BuyStop', 'SellStop'] as const);
      const below = type === 'BuyLimit' || type === 'SellStop';
      const offset = random.range(0.002, 0.01);
      const priceOrder = roundTo(below ? quote.bid * (1 - offset) : quote.ask * (1 + offset), instrument.digits);
      const volume = Math.round(random.pick(LOTS) * PF5_LOT);
      const order: PF5OrderRow = {
        order: this.allocateOrder(),
        externalID: '',
        login: random.pick(logins),
        symbol: instrument.symbol,
        digits: instrument.digits,
        digitsCurrency: 2,
        contractSize: instrument.contractSize,
        state: 'Placed',
        reason: random.chance(0.8) ? 'Client' : 'Expert',
        timeSetup: iso(daysBeforeAnchor(random, 10)),
        type,
        typeFill: 'Return',
        typeTime: 'GtC',
        priceOrder,
        priceTrigger: 0,
        priceSL: 0,
        priceTP: 0,
        volumeInitial: volume,
        volumeCurrent: volume,
        expertID: 0,
        positionID: 0,
        comment: '',
      };
      this.orders.set(order.order, order);
    }
  }

  /** Stores a deal; the engine sends the event for deals it makes. */
  addDeal(
    fields: Pick<
      PF5DealRecord,
      | 'login'
      | 'action'
      | 'entry'
      | 'digits'
      | 'contractSize'
      | 'time'
      | 'symbol'
      | 'price'
      | 'volume'
      | 'profit'
      | 'positionID'
      | 'order'
      | 'comment'
      | 'reason'
    > & { commission?: number },
  ): PF5DealRecord {
    const deal: PF5DealRecord = {
      deal: this.allocateDeal(),
      externalID: '',
      dealer: 0,
      digitsCurrency: 2,
      priceSL: 0,
      priceTP: 0,
      volumeClosed: 0,
      storage: 0,
      commission: 0,
      fee: 0,
      rateProfit: 1,
      rateMargin: 1,
      expertID: 0,
      ...fields,
    };
    this.deals.set(deal.deal, deal);
    return deal;
  }
}
