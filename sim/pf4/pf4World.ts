/**
 * The state of one simulated PF4 server: groups with their securities and margin overrides, symbols with their
 * sessions, accounts, open trades, the history, the configuration sections, and the trading engine that moves them.
 * Everything is generated from the seed and then changed by commands and the quote feed. Stored records are
 * replaced, never mutated in place, so a resync snapshot (an array of references taken at login) stays consistent
 * while the world moves on.
 */
import type { ServerConfig } from '../config/simConfig.js';
import { PF4_RESULT } from '../../shared/resultCodes.js';
import { roundTo } from '../feed/instruments.js';
import type { Quote } from '../feed/quoteFeed.js';
import { closingPrice, floatingProfit, profitAt } from '../feed/valuation.js';
import { CommandRegistry } from '../world/commandRegistry.js';
import { KeyedRecords } from '../world/keyedRecords.js';
import { OrderedList } from '../world/orderedList.js';
import { MarketWorld } from '../world/marketWorld.js';
import { cents, DAY_MS, daysBeforeAnchor, emailOf, iso, seedAccounts } from '../world/people.js';
import { Random, deriveSeed } from '../world/random.js';
import type { ChangeSink, SimWorld, SnapshotPart } from '../world/simWorld.js';
import { Pf4Config } from './pf4Config.js';
import { accountSecrets, passwordHash } from './serverOnlyFields.js';
import {
  PF4_GROUPS,
  defaultSessions,
  groupMargins,
  groupRecord,
  groupSecurities,
  isBuyCommand,
  isPending,
  symbolGroupRecord,
  symbolRecord,
  tickRecord,
  type PF4Command,
  type PF4DaySessions,
  type PF4GroupRecord,
  type PF4TradeRecord,
  type PF4TradeRow,
  type PF4UserRecord,
} from './pf4Records.js';
import { pf4Commands } from './pf4Commands.js';
import { Pf4TradingEngine } from './tradingEngine.js';
import { Pf4Services, topicOf } from './serverServices.js';

export const PF4_FIRST_LOGIN = 100000;
export const PF4_FIRST_ORDER = 5000000;
/** Tickets of generated history (closed trades, then one deposit per account) count up from here. */
export const PF4_FIRST_HISTORY_ORDER = 1000000;
const VOLUMES = [1, 2, 5, 10, 10, 10, 20, 50, 100, 100, 200, 500];
const JOURNAL_CAPACITY = 10_000;
/** A PF4 group record holds this many margin-override slots. */
const SEC_MARGINS_SLOTS = 128;
const EMPTY_SEC_MARGIN = Object.freeze({ symbol: '', swapLong: 0, swapShort: 0, marginDivider: 0 });
const BUILD = 1420;

type Rec = Record<string, unknown>;

export interface PF4ServerLogRecord {
  code: string;
  time: string;
  ip: string;
  message: string;
}

export class Pf4World extends MarketWorld implements SimWorld {
  readonly family = 'PF4' as const;
  readonly users = new KeyedRecords<PF4UserRecord>();
  readonly trades = new KeyedRecords<PF4TradeRow>();
  readonly groups: OrderedList<PF4GroupRecord>;
  readonly groupSecurities = new Map<string, Rec[]>();
  readonly groupMargins = new Map<
    string,
    Array<{ symbol: string; swapLong: number; swapShort: number; marginDivider: number }>
  >();
  readonly symbols: OrderedList<Rec>;
  readonly sessions = new Map<string, PF4DaySessions[]>();
  /** Configured symbols outside the active set (SymbolHide): no ticks, no orders. */
  readonly hiddenSymbols = new Set<string>();
  readonly config: Pf4Config;
  readonly engine: Pf4TradingEngine;
  readonly services: Pf4Services;
  /** When each account last changed (UsersSyncStart); accounts without an entry changed at their lastDate. */
  private readonly userChanges = new Map<number, number>();
  /** Passwords set through UserPasswordSet; an account without an entry has `demo-<login>` (investor `view-<login>`). */
  readonly passwords = new Map<number, { main: string; investor: string }>();
  private readonly journalLines: PF4ServerLogRecord[] = [];
  private nextOrder = PF4_FIRST_ORDER;
  private readonly commandTable: CommandRegistry;

  constructor(
    readonly serverConfig: ServerConfig,
    seed: number,
    emit: ChangeSink,
  ) {
    super(serverConfig, seed, emit, tickRecord);
    const bad = PF4_RESULT.InvalidData;
    this.symbols = new OrderedList<Rec>(
      'symbol',
      bad,
      (r) => r.symbol as string,
      this.instruments.map((instrument, index) => symbolRecord(instrument, index)),
    );
    for (const instrument of this.instruments) this.sessions.set(instrument.symbol, defaultSessions());
    const usedTypes = Math.max(...this.instruments.map((i) => i.securityGroup), 0) + 1;
    this.groups = new OrderedList<PF4GroupRecord>(
      'group',
      bad,
      (g) => g.group,
      PF4_GROUPS.map((def) => groupRecord(def, seed)),
    );
    for (const def of PF4_GROUPS) {
      this.groupSecurities.set(def.group, groupSecurities(def.group, usedTypes));
      this.groupMargins.set(def.group, groupMargins(def.group));
    }
    this.config = new Pf4Config(serverConfig.name, BUILD, serverConfig.managers, seed);
    this.feed.isActive = (symbol) => this.isActiveSymbol(symbol);
    this.engine = new Pf4TradingEngine(this, serverConfig.rollbackMs);
    this.generateUsers(new Random(deriveSeed(seed, 'users')), serverConfig.accounts, seed);
    this.generateTrades(new Random(deriveSeed(seed, 'trades')), serverConfig.trades);
    this.engine.indexAll();
    this.topUpThinAccounts();
    this.generateHistory(
      new Random(deriveSeed(seed, 'history')),
      serverConfig.history ?? Math.floor(serverConfig.trades / 2),
    );
    this.services = new Pf4Services(this, seed);
    this.commandTable = pf4Commands(this);
  }

  start(): void {
    this.feed.start();
    this.engine.start();
    this.services.start();
  }

  stop(): void {
    this.feed.stop();
    this.engine.stop();
    this.services.stop();
  }

  commands(): CommandRegistry {
    return this.commandTable;
  }

  counts(): Record<string, number> {
    return {
      users: this.users.size,
      trades: this.trades.size,
      ticks: this.instruments.length,
      symbols: this.activeSymbols().length,
      groups: this.groups.size,
      margin: this.engine.loginsWithTrades().length,
      online: this.services.online.size,
      news: this.services.news.length,
      symbolGroups: this.config.lists.SymbolGroup.size,
      symbolSessions: this.symbols.size,
      symbolInfo: this.activeSymbols().length,
    };
  }

  /**
   * The resync snapshot, in the protocol's order. The online list, news headers, symbol groups, sessions and summaries
   * are taken now; open trades are valued, and the margin levels of the logins with trades now computed, as their
   * chunk is written (at scale a margin level per account costs too much for one turn of the event loop).
   */
  snapshot(): SnapshotPart[] {
    const same = <T>(row: T) => row;
    return [
      { kind: 'users', rows: this.users.values(), toWire: same },
      { kind: 'trades', rows: this.trades.values(), toWire: (row: PF4TradeRow) => this.tradeToWire(row) },
      { kind: 'ticks', rows: this.feed.allQuotes(), toWire: (quote: Quote) => tickRecord(quote) },
      { kind: 'symbols', rows: this.activeSymbols(), toWire: same },
      { kind: 'groups', rows: this.groups.list(), toWire: (row: PF4GroupRecord) => this.groupToWire(row) },
      { kind: 'margin', rows: this.engine.loginsWithTrades(), toWire: (login: number) => this.marginToWire(login) },
      { kind: 'online', rows: this.services.onlineRecords(), toWire: same },
      { kind: 'news', rows: this.services.news.map(topicOf), toWire: same },
      { kind: 'symbolGroups', rows: this.symbolGroupRecords(), toWire: same },
      { kind: 'symbolSessions', rows: this.symbolSessionRecords(), toWire: same },
      { kind: 'symbolInfo', rows: this.activeSymbolInfo(), toWire: same },
    ];
  }

  /** Every configured symbol's weekday sessions (hidden symbols too, as SymbolSessionsGet answers them). */
  symbolSessionRecords(): Rec[] {
    return this.symbols.list().map((record) => {
      const symbol = record.symbol as string;
      return { symbol, days: this.sessions.get(symbol) ?? [] };
    });
  }

  /** The summaries of the active symbols, in list order. */
  activeSymbolInfo(): Rec[] {
    return this.activeSymbols()
      .map((record) => this.symbolInfo(record.symbol as string))
      .filter((info) => info !== undefined);
  }

  /** Configured, not hidden: quoted, tradable and announced. */
  isActiveSymbol(symbol: string): boolean {
    return !this.hiddenSymbols.has(symbol) && this.symbols.indexOf(symbol) >= 0;
  }

  /**
   * A symbol's summary (SymbolInfoRequest): digits, type and point as configured; the current quote, its spread in
   * points and its direction against the previous tick of the last day (None without one); the day's high and low
   * from the D1 bar of the quote's time (the bid itself before any tick that day).
   */
  symbolInfo(symbol: string): Rec | undefined {
    const config = this.symbolConfig(symbol);
    const quote = this.feed.quote(symbol);
    if (!config || !quote) return undefined;
    const point = config.point as number;
    const day = this.chart.barAt(symbol, 'D1', quote.time);
    const ticks = this.chart.tickRange(symbol, quote.time - DAY_MS, quote.time).slice(-2);
    const direction =
      ticks.length < 2 || ticks[1].bid === ticks[0].bid ? 'None' : ticks[1].bid > ticks[0].bid ? 'Up' : 'Down';
    return {
      symbol,
      digits: config.digits,
      type: config.type,
      point,
      spread: Math.round((quote.ask - quote.bid) / point),
      direction,
      bid: quote.bid,
      ask: quote.ask,
      high: day?.high ?? quote.bid,
      low: day?.low ?? quote.bid,
      lastTime: iso(quote.time),
    };
  }

  /**
   * Runs a change that can move the summaries of `symbols` other than by a tick (a write of the day's bar) and
   * announces each active symbol's summary it changed as a symbolInfo update.
   */
  withSymbolInfo<T>(symbols: readonly string[], change: () => T): T {
    const active = symbols.filter((symbol) => this.isActiveSymbol(symbol));
    const before = active.map((symbol) => JSON.stringify(this.symbolInfo(symbol)));
    const result = change();
    active.forEach((symbol, i) => {
      const info = this.symbolInfo(symbol);
      if (info && JSON.stringify(info) !== before[i]) this.emit('symbolInfo', 'update', info);
    });
    return result;
  }

  /** After coalesced ticks a consumer cannot follow the day's high and low or the direction: it gets the summary. */
  coalescedTick(symbol: string): { kind: 'symbolInfo'; record: unknown } | undefined {
    const info = this.isActiveSymbol(symbol) ? this.symbolInfo(symbol) : undefined;
    return info && { kind: 'symbolInfo', record: info };
  }

  /**
   * A snapshot login's margin level as its chunk is written. Should the account have gone meanwhile (its trades closed,
   * then the account deleted), the key alone stands in: the margin delete its last close announced follows the resync.
   */
  private marginToWire(login: number): unknown {
    return this.users.has(login) ? this.engine.marginLevel(login) : { login };
  }

  /**
   * A group as the change stream carries it: the record with its nested arrays, the 32 security entries
   * (`secGroups`) and the per-symbol overrides (`secMargins`, the platform's fixed 128 entries, of which the first
   * `secMarginsTotal` are in use).
   */
  groupToWire(record: PF4GroupRecord): Record<string, unknown> {
    const margins = this.groupMargins.get(record.group) ?? [];
    return {
      ...record,
      secGroups: this.groupSecurities.get(record.group) ?? [],
      secMargins: [
        ...margins,
        ...Array.from({ length: Math.max(0, SEC_MARGINS_SLOTS - margins.length) }, () => EMPTY_SEC_MARGIN),
      ],
    };
  }

  /** The 32 security (symbol) group slots as the change stream carries them, `{pos, name, description}`. */
  symbolGroupRecords(): Rec[] {
    return this.config.lists.SymbolGroup.list().map((entry, pos) => symbolGroupRecord(pos, entry));
  }

  journal(message: string, ip = '127.0.0.1', code = 'Standard'): void {
    this.journalLines.push({ code, time: iso(Date.now()), ip, message });
    if (this.journalLines.length > JOURNAL_CAPACITY * 1.2)
      this.journalLines.splice(0, this.journalLines.length - JOURNAL_CAPACITY);
  }

  managerRights(login: number): string[] | undefined {
    return this.config.managerRights(login);
  }

  journalEntries(): readonly PF4ServerLogRecord[] {
    return this.journalLines;
  }

  symbolConfig(symbol: string): Rec | undefined {
    return this.symbols.find(symbol);
  }

  /** The active set: configured symbols not hidden by SymbolHide, in list order. */
  activeSymbols(): Rec[] {
    return this.hiddenSymbols.size === 0
      ? this.symbols.list()
      : this.symbols.list().filter((record) => !this.hiddenSymbols.has(record.symbol as string));
  }

  allocateOrder(): number {
    return this.nextOrder++;
  }

  /** Inside one of the symbol's trade windows today, and no enabled holiday closes it now. */
  marketOpen(symbol: string, now: number): boolean {
    const date = new Date(now);
    const minute = date.getUTCHours() * 60 + date.getUTCMinutes();
    for (const holiday of this.config.lists.Holiday.list()) {
      if (holiday.enable !== true) continue;
      if (holiday.symbol !== 'All' && holiday.symbol !== symbol) continue;
      if (
        holiday.year !== date.getUTCFullYear() ||
        holiday.month !== date.getUTCMonth() + 1 ||
        holiday.day !== date.getUTCDate()
      )
        continue;
      const from = holiday.from as number;
      const to = holiday.to as number;
      if ((from === 0 && to === 0) || (minute >= from && minute < to)) return false;
    }
    const day = this.sessions.get(symbol)?.[date.getUTCDay()];
    if (!day) return true;
    return day.trade.some((s) => minute >= s.openHour * 60 + s.openMinute && minute < s.closeHour * 60 + s.closeMinute);
  }

  /** The wire record of an open trade: close price and profit as of the current quote. */
  tradeToWire(row: PF4TradeRow): PF4TradeRecord {
    const instrument = this.instrumentBySymbol.get(row.symbol);
    const quote = this.feed.quote(row.symbol);
    const isBuy = isBuyCommand(row.tradeCommand);
    const lots = row.volume / 100;
    const profit =
      instrument && !isPending(row.tradeCommand)
        ? floatingProfit(instrument, isBuy, row.openPrice, lots, (s) => this.feed.quote(s))
        : 0;
    const { state, activationType, ...stored } = row;
    // Added to the fresh copy in one step: a spread followed by these members costs V8 several times as much per
    // record, which a snapshot of 100,000 trades pays 100,000 times. The members come in the same order either way.
    return Object.assign(stored, {
      volumeLots: lots,
      tradeRecordState: state ?? 'OpenNormal',
      closePrice: quote ? closingPrice(quote, isBuy) : 0,
      commissionAgent: 0,
      profit,
      taxes: 0,
      activationType: activationType ?? 'None',
      marginRate: 1,
    });
  }

  /** Next login after the highest one in use. */
  nextFreeLogin(): number {
    const max = this.users.maxKey();
    return max === undefined ? PF4_FIRST_LOGIN : Math.max(PF4_FIRST_LOGIN, max + 1);
  }

  userChangedAt(login: number): number {
    return this.userChanges.get(login) ?? Date.parse(this.users.get(login)?.lastDate ?? '1970-01-01T00:00:00Z');
  }

  addUser(record: PF4UserRecord): void {
    this.users.set(record.login, record);
    this.userChanges.set(record.login, Date.now());
    this.emit('users', 'add', record);
  }

  replaceUser(record: PF4UserRecord): void {
    const before = this.users.get(record.login);
    this.users.set(record.login, record);
    this.userChanges.set(record.login, Date.now());
    this.engine.onUserChanged(record);
    this.emit('users', 'update', record);
    // The online list carries the account's group.
    if (before && before.group !== record.group && this.services?.online.has(record.login)) {
      this.emit('online', 'update', { login: record.login, group: record.group });
    }
  }

  /** A manager's edit of an account (update, group operation, restore): the broker also learns its new margin level. */
  editUser(record: PF4UserRecord): void {
    const before = this.users.get(record.login);
    this.replaceUser(record);
    if (before) this.engine.onAccountEdited(before, record);
  }

  /**
   * Sets an account's password (main, or investor): the clear text for the checks, its hash on the record. No event: a
   * password is not part of what a consumer is sent about an account (the contract has none).
   */
  setPassword(login: number, password: string, investor: boolean): void {
    const record = this.users.get(login);
    if (!record) return;
    const current = this.passwords.get(login) ?? { main: `demo-${login}`, investor: `view-${login}` };
    this.passwords.set(login, investor ? { ...current, investor: password } : { ...current, main: password });
    this.users.set(login, { ...record, [investor ? 'passwordInvestor' : 'password']: passwordHash(login, password) });
  }

  /** Removes an account (it has no open trades); an online client of it is disconnected. */
  deleteUser(login: number): void {
    if (!this.users.delete(login)) return;
    this.userChanges.delete(login);
    this.passwords.delete(login);
    this.emit('users', 'delete', { login });
    if (this.services.online.delete(login)) this.emit('online', 'delete', { login });
  }

  /** The day's rollover: swaps on open trades. Answers how many trades were charged. */
  rollover(now: number): number {
    const charged = this.engine.chargeSwaps(now);
    this.services.takeBackup('full', now);
    this.journal(`rollover: swaps charged on ${charged} trades`);
    return charged;
  }

  private generateUsers(random: Random, count: number, seed: number): void {
    seedAccounts(random, PF4_GROUPS, PF4_FIRST_LOGIN, count, ({ login, person, group, registered, balance }) => {
      this.users.set(login, {
        login,
        group: group.group,
        name: `${person.firstName} ${person.lastName}`,
        registrationDate: iso(registered),
        lastDate: iso(Math.max(registered, daysBeforeAnchor(random, 30))),
        externalId: '',
        status: 'RE',
        country: person.country,
        city: person.city,
        state: '',
        zipCode: person.zipCode,
        address: person.address,
        leadSource: '',
        phone: person.phone,
        email: emailOf(person, login),
        comment: '',
        leverage: random.chance(0.8) ? group.leverage : random.pick([50, 100, 200, 500]),
        agentAccount: 0,
        lastIP: 0,
        balance,
        credit: random.chance(0.1) ? cents(random.range(100, 2000)) : 0,
        prevMonthBalance: balance,
        prevBalance: balance,
        prevMonthEquity: balance,
        prevEquity: balance,
        interestRate: 0,
        taxes: 0,
        enableFlags: 1,
        sendReports: 1,
        mqid: 0,
        userColor: -1,
        ...(accountSecrets(seed, login, `demo-${login}`, `view-${login}`) as Pick<
          PF4UserRecord,
          'password' | 'passwordInvestor' | 'passwordPhone' | 'otpSecret' | 'apiData'
        >),
      });
    });
  }

  private generateTrades(random: Random, count: number): void {
    const logins = this.users.keys();
    if (logins.length === 0 || this.instruments.length === 0) return;
    for (let i = 0; i < count; i++) {
      const instrument = random.pick(this.instruments);
      const quote = this.feed.quote(instrument.symbol) as Quote;
      const mid = (quote.bid + quote.ask) / 2;
      const command: PF4Command = random.chance(0.85)
        ? random.pick(['Buy', 'Sell'] as const)
        : random.pick(['BuyLimit', 'SellLimit', 'BuyStop', 'SellStop'] as const);
      const below = command === 'BuyLimit' || command === 'SellStop';
      const above = command === 'SellLimit' || command === 'BuyStop';
      const drift = below
        ? -random.range(0.002, 0.01)
        : above
          ? random.range(0.002, 0.01)
          : random.range(-0.005, 0.005);
      const openPrice = roundTo(mid * (1 + drift), instrument.digits);
      const isBuy = command.startsWith('Buy');
      const stopDistance = mid * random.range(0.005, 0.02);
      // Stops lie beyond both the open price and the market, so no generated trade starts already triggered.
      const safeLow = Math.min(openPrice, quote.bid);
      const safeHigh = Math.max(openPrice, quote.ask);
      const opened = daysBeforeAnchor(random, 30);
      const order = this.nextOrder++;
      this.trades.set(order, {
        order,
        login: random.pick(logins),
        symbol: instrument.symbol,
        digits: instrument.digits,
        tradeCommand: command,
        volume: random.pick(VOLUMES),
        openPrice,
        sl: random.chance(0.3)
          ? roundTo(isBuy ? safeLow - stopDistance : safeHigh + stopDistance, instrument.digits)
          : 0,
        tp: random.chance(0.3)
          ? roundTo(isBuy ? safeHigh + stopDistance : safeLow - stopDistance, instrument.digits)
          : 0,
        // Generated pending orders are good till cancelled: an expiration in the anchored past would expire them at once.
        openTime: iso(opened),
        commission: random.chance(0.5) ? -cents(random.range(0.5, 7)) : 0,
        storage: random.chance(0.4) ? cents(random.range(-20, 5)) : 0,
        magic: random.chance(0.2) ? random.int(1, 99999) : 0,
        comment: '',
        tradeRecordReason: random.pick(['Client', 'Client', 'Expert', 'Dealer'] as const),
        timeStamp: iso(opened),
      });
    }
  }

  /** Generated accounts start at a margin level of at least 300%, so the first ticks do not stop out half the world. */
  private topUpThinAccounts(): void {
    for (const login of this.engine.loginsWithTrades()) {
      const level = this.engine.marginLevel(login);
      if (level.margin <= 0 || level.level >= 300) continue;
      const user = this.users.get(login) as PF4UserRecord;
      const needed = Math.ceil((level.margin * 3 - (level.equity - user.balance)) / 100) * 100;
      const topped = {
        ...user,
        balance: needed,
        prevBalance: needed,
        prevMonthBalance: needed,
        prevEquity: needed,
        prevMonthEquity: needed,
      };
      this.users.set(login, topped);
      this.engine.onUserChanged(topped);
    }
  }

  /**
   * Closed trades, then one opening deposit per account that makes its history explain its balance. About one
   * account in fifty gets a balance that disagrees with its history by a few dollars, for AdmBalanceCheck to find.
   */
  private generateHistory(random: Random, closedCount: number): void {
    const logins = this.users.keys();
    if (logins.length === 0) return;
    let ticket = PF4_FIRST_HISTORY_ORDER;
    const room = PF4_FIRST_ORDER - PF4_FIRST_HISTORY_ORDER - 2 * logins.length;
    const results = new Map<number, number>();
    for (let i = 0; i < Math.min(closedCount, Math.max(0, room)) && this.instruments.length > 0; i++) {
      const instrument = random.pick(this.instruments);
      const login = random.pick(logins);
      const command = random.pick(['Buy', 'Sell'] as const);
      const volume = random.pick(VOLUMES);
      const openPrice = roundTo(instrument.basePrice * (1 + random.range(-0.01, 0.01)), instrument.digits);
      const closePrice = roundTo(openPrice * (1 + random.range(-0.004, 0.004)), instrument.digits);
      const opened = daysBeforeAnchor(random, 60);
      const closed = opened + random.int(1, 72) * 3_600_000;
      const profit = profitAt(instrument, command === 'Buy', openPrice, closePrice, volume / 100, (s) =>
        this.feed.quote(s),
      );
      const commission = -cents(volume * 0.035);
      const storage = random.chance(0.3) ? cents(random.range(-10, 2)) : 0;
      results.set(login, (results.get(login) ?? 0) + profit + commission + storage);
      this.engine.addHistory({
        order: ticket++,
        login,
        symbol: instrument.symbol,
        digits: instrument.digits,
        tradeCommand: command,
        volume,
        volumeLots: volume / 100,
        openPrice,
        sl: 0,
        tp: 0,
        openTime: iso(opened),
        closeTime: iso(closed),
        closePrice,
        commission,
        commissionAgent: 0,
        storage,
        profit,
        taxes: 0,
        magic: 0,
        comment: '',
        tradeRecordReason: 'Client',
        timeStamp: iso(closed),
        tradeRecordState: 'ClosedNormal',
        activationType: 'None',
        marginRate: 1,
      });
    }
    for (const login of logins) {
      const user = this.users.get(login) as PF4UserRecord;
      const deposit = cents(
        user.balance - (results.get(login) ?? 0) - (random.chance(0.02) ? cents(random.range(1, 50)) : 0),
      );
      const entries = deposit > 0 ? [deposit] : [1000, cents(deposit - 1000)];
      for (const amount of entries) {
        this.engine.addHistory({
          order: ticket++,
          login,
          symbol: '',
          digits: 0,
          tradeCommand: 'Balance',
          volume: 0,
          volumeLots: 0,
          openPrice: 0,
          sl: 0,
          tp: 0,
          openTime: user.registrationDate,
          closeTime: user.registrationDate,
          closePrice: 0,
          commission: 0,
          commissionAgent: 0,
          storage: 0,
          profit: amount,
          taxes: 0,
          magic: 0,
          comment: amount > 0 ? 'Deposit' : 'Withdrawal',
          tradeRecordReason: 'Dealer',
          timeStamp: user.registrationDate,
          tradeRecordState: 'ClosedNormal',
          activationType: 'None',
          marginRate: 1,
        });
      }
    }
  }
}
