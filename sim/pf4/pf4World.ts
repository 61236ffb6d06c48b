/**
 * The state of one simulated PF4 server: groups, symbols, accounts and open trades, generated from the seed and then
 * changed by commands. Stored records are replaced, never mutated in place, so a resync snapshot (an array of
 * references taken at login) stays consistent while the world moves on.
 */
import type { ServerConfig } from '../config/simConfig.js';
import type { Instrument } from '../feed/instruments.js';
import { buildInstruments, roundTo } from '../feed/instruments.js';
import { QuoteFeed, type Quote } from '../feed/quoteFeed.js';
import { closingPrice, floatingProfit } from '../feed/valuation.js';
import { KeyedRecords } from '../world/keyedRecords.js';
import { cents, daysBeforeAnchor, emailOf, invent, iso, WORLD_ANCHOR_MS } from '../world/people.js';
import { Random, deriveSeed } from '../world/random.js';
import type { ChangeSink, CommandHandler, SimWorld, SnapshotPart } from '../world/simWorld.js';
import {
  PF4_GROUPS, groupRecord, isPending, symbolRecord, tickRecord,
  type PF4Command, type PF4GroupRecord, type PF4TradeRecord, type PF4TradeRow, type PF4UserRecord,
} from './pf4Records.js';
import { pf4Commands } from './pf4Commands.js';

export const PF4_FIRST_LOGIN = 100000;
export const PF4_FIRST_ORDER = 5000000;
const VOLUMES = [1, 2, 5, 10, 10, 10, 20, 50, 100, 100, 200, 500];

export class Pf4World implements SimWorld {
  readonly family = 'PF4' as const;
  readonly users = new KeyedRecords<PF4UserRecord>();
  readonly trades = new KeyedRecords<PF4TradeRow>();
  readonly groups = new Map<string, PF4GroupRecord>();
  readonly instruments: Instrument[];
  readonly instrumentBySymbol = new Map<string, Instrument>();
  readonly symbols: Record<string, unknown>[];
  readonly feed: QuoteFeed;
  private nextOrder = PF4_FIRST_ORDER;
  private readonly commandTable: Map<string, CommandHandler>;

  constructor(readonly config: ServerConfig, seed: number, readonly emit: ChangeSink) {
    this.instruments = buildInstruments(config.symbols, new Random(deriveSeed(seed, 'instruments')));
    for (const instrument of this.instruments) this.instrumentBySymbol.set(instrument.symbol, instrument);
    this.symbols = this.instruments.map((instrument, index) => symbolRecord(instrument, index));
    for (const def of PF4_GROUPS) this.groups.set(def.group, groupRecord(def));
    this.feed = new QuoteFeed(this.instruments, new Random(deriveSeed(seed, 'feed')), config.ticksPerSecond,
      (quote) => this.onQuote(quote), WORLD_ANCHOR_MS);
    this.generateUsers(new Random(deriveSeed(seed, 'users')), config.accounts);
    this.generateTrades(new Random(deriveSeed(seed, 'trades')), config.trades);
    this.commandTable = pf4Commands(this);
  }

  start(): void {
    this.feed.start();
  }

  stop(): void {
    this.feed.stop();
  }

  ticksEmitted(): number {
    return this.feed.ticksEmitted;
  }

  onQuote(quote: Quote): void {
    this.emit('ticks', 'update', tickRecord(quote));
  }

  commands(): ReadonlyMap<string, CommandHandler> {
    return this.commandTable;
  }

  counts(): Record<string, number> {
    return {
      users: this.users.size, trades: this.trades.size, ticks: this.instruments.length,
      symbols: this.symbols.length, groups: this.groups.size,
    };
  }

  snapshot(): SnapshotPart[] {
    return [
      { kind: 'users', rows: this.users.values(), toWire: (row: PF4UserRecord) => row },
      { kind: 'trades', rows: this.trades.values(), toWire: (row: PF4TradeRow) => this.tradeToWire(row) },
      { kind: 'ticks', rows: this.feed.allQuotes(), toWire: (quote: Quote) => tickRecord(quote) },
      { kind: 'symbols', rows: [...this.symbols], toWire: (row: Record<string, unknown>) => row },
      { kind: 'groups', rows: [...this.groups.values()], toWire: (row: PF4GroupRecord) => row },
    ];
  }

  /** The wire record of an open trade: close price and profit as of the current quote. */
  tradeToWire(row: PF4TradeRow): PF4TradeRecord {
    const instrument = this.instrumentBySymbol.get(row.symbol);
    const quote = this.feed.quote(row.symbol);
    const isBuy = row.tradeCommand === 'Buy' || row.tradeCommand === 'BuyLimit' || row.tradeCommand === 'BuyStop';
    const lots = row.volume / 100;
    const profit = instrument && !isPending(row.tradeCommand)
      ? floatingProfit(instrument, isBuy, row.openPrice, lots, (s) => this.feed.quote(s))
      : 0;
    return {
      ...row,
      volumeLots: lots,
      tradeRecordState: 'OpenNormal',
      closePrice: quote ? closingPrice(quote, isBuy) : 0,
      commissionAgent: 0,
      profit,
      taxes: 0,
      activationType: 'None',
      marginRate: 1,
    };
  }

  /** Next login after the highest one in use. */
  nextFreeLogin(): number {
    const max = this.users.maxKey();
    return max === undefined ? PF4_FIRST_LOGIN : Math.max(PF4_FIRST_LOGIN, max + 1);
  }

  addUser(record: PF4UserRecord): void {
    this.users.set(record.login, record);
    this.emit('users', 'add', record);
  }

  replaceUser(record: PF4UserRecord): void {
    this.users.set(record.login, record);
    this.emit('users', 'update', record);
  }

  /** Opens a trade at the current quote; used by TradeTransaction. */
  openTrade(row: Omit<PF4TradeRow, 'order'>): PF4TradeRow {
    const trade = { order: this.nextOrder++, ...row };
    this.trades.set(trade.order, trade);
    this.emit('trades', 'add', this.tradeToWire(trade));
    return trade;
  }

  /** Removes an open trade; market trades realise their profit into the balance. Returns the closed record. */
  closeTrade(order: number): PF4TradeRecord | undefined {
    const row = this.trades.get(order);
    if (!row) return undefined;
    const now = iso(Date.now());
    const closed: PF4TradeRecord = { ...this.tradeToWire(row), tradeRecordState: 'ClosedNormal', closeTime: now, timeStamp: now };
    this.trades.delete(order);
    this.emit('trades', 'delete', { order });
    const user = this.users.get(row.login);
    if (user && !isPending(row.tradeCommand)) {
      this.replaceUser({ ...user, balance: cents(user.balance + closed.profit + closed.commission + closed.storage) });
    }
    return closed;
  }

  private generateUsers(random: Random, count: number): void {
    const weighted = PF4_GROUPS.flatMap((g) => Array<(typeof PF4_GROUPS)[number]>(g.weight).fill(g));
    for (let i = 0; i < count; i++) {
      const login = PF4_FIRST_LOGIN + i;
      const person = invent(random);
      const group = random.pick(weighted);
      const registered = daysBeforeAnchor(random, 900);
      const balance = group.deposit > 0 ? group.deposit : cents(random.range(100, 50000));
      this.users.set(login, {
        login, group: group.group, name: `${person.firstName} ${person.lastName}`,
        registrationDate: iso(registered), lastDate: iso(Math.max(registered, daysBeforeAnchor(random, 30))),
        externalId: '', status: 'RE', country: person.country, city: person.city, state: '', zipCode: person.zipCode,
        address: person.address, leadSource: '', phone: person.phone, email: emailOf(person, login), comment: '',
        leverage: random.chance(0.8) ? group.leverage : random.pick([50, 100, 200, 500]), agentAccount: 0, lastIP: 0,
        balance, credit: random.chance(0.1) ? cents(random.range(100, 2000)) : 0,
        prevMonthBalance: balance, prevBalance: balance, prevMonthEquity: balance, prevEquity: balance,
        interestRate: 0, taxes: 0, enableFlags: 1, sendReports: 1, mqid: 0, userColor: -1,
      });
    }
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
      const drift = below ? -random.range(0.002, 0.01) : above ? random.range(0.002, 0.01) : random.range(-0.005, 0.005);
      const openPrice = roundTo(mid * (1 + drift), instrument.digits);
      const isBuy = command.startsWith('Buy');
      const stopDistance = mid * random.range(0.005, 0.02);
      const opened = daysBeforeAnchor(random, 30);
      const order = this.nextOrder++;
      this.trades.set(order, {
        order, login: random.pick(logins), symbol: instrument.symbol, digits: instrument.digits, tradeCommand: command,
        volume: random.pick(VOLUMES), openPrice,
        sl: random.chance(0.3) ? roundTo(openPrice + (isBuy ? -stopDistance : stopDistance), instrument.digits) : 0,
        tp: random.chance(0.3) ? roundTo(openPrice + (isBuy ? stopDistance : -stopDistance), instrument.digits) : 0,
        openTime: iso(opened), ...(isPending(command) ? { expiration: iso(opened + 30 * 86_400_000) } : {}),
        commission: random.chance(0.5) ? -cents(random.range(0.5, 7)) : 0,
        storage: random.chance(0.4) ? cents(random.range(-20, 5)) : 0, magic: random.chance(0.2) ? random.int(1, 99999) : 0,
        comment: '', tradeRecordReason: random.pick(['Client', 'Client', 'Expert', 'Dealer'] as const), timeStamp: iso(opened),
      });
    }
  }
}
