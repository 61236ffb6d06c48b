/**
 * The live quote feed of one trading server: a seeded random walk per instrument, ticking at the server's configured
 * rate. Each tick updates only the quote of one symbol and tells the listener; nothing else is recomputed per tick
 * (trade profits are derived from the current quote when a record is read).
 */
import type { Instrument } from './instruments.js';
import { pointOf, roundTo } from './instruments.js';
import { Random } from '../world/random.js';

export interface Quote {
  symbol: string;
  bid: number;
  ask: number;
  /** Epoch milliseconds of the last tick. */
  time: number;
  /** Set on ticks injected by a manager (SymbolSendTick) rather than produced by the feed. */
  raw?: boolean;
}

export type TickListener = (quote: Quote) => void;

/** The timer never fires more often than this; higher rates emit several ticks per firing. */
const MIN_INTERVAL_MS = 10;
/** A timer that fires this late emits at most this much backlog; the rest is dropped and counted. */
const MAX_CATCH_UP_MS = 250;
/**
 * Ticks owed are emitted in slices of at most this long; the rest follow after the event loop has served what waits
 * (commands, their change events), so a feed that catches up never holds the server's answers back for long.
 */
const SLICE_MS = 2;
/** Per-tick relative volatility of the walk. */
const VOLATILITY = 0.00015;

export class QuoteFeed {
  private readonly quotes = new Map<string, Quote>();
  private readonly mids = new Map<string, number>();
  private readonly bySymbol = new Map<string, Instrument>();
  private timer: NodeJS.Timeout | null = null;
  /** Ticks owed and not yet emitted, and the next slice that emits them when one is waiting. */
  private backlog = 0;
  private nextSlice: NodeJS.Immediate | null = null;
  private pausedUntil = 0;
  ticksEmitted = 0;
  /** Ticks the clock owed but the process was too busy to emit (a backlog beyond MAX_CATCH_UP_MS). */
  ticksDropped = 0;
  /** Symbols for which this answers false get no ticks (hidden or deleted symbols). */
  isActive: (symbol: string) => boolean = () => true;

  constructor(
    private readonly instruments: Instrument[],
    private readonly random: Random,
    private readonly ticksPerSecond: number,
    private readonly onTick: TickListener,
    startTime: number,
  ) {
    // Start each symbol a little away from its base price so two seeds quote differently from the first moment.
    for (const instrument of instruments) {
      this.bySymbol.set(instrument.symbol, instrument);
      const mid = instrument.basePrice * (1 + random.range(-0.01, 0.01));
      this.mids.set(instrument.symbol, mid);
      this.quotes.set(instrument.symbol, this.quoteAt(instrument, mid, startTime));
    }
  }

  start(): void {
    if (this.timer || this.ticksPerSecond <= 0 || this.instruments.length === 0) return;
    const interval = Math.max(MIN_INTERVAL_MS, Math.round(1000 / this.ticksPerSecond));
    // The count follows the clock, not the number of firings: a timer that fires late emits the ticks it owes, so
    // the long-run rate matches the configuration. A backlog beyond MAX_CATCH_UP_MS is dropped, not replayed.
    const startedAt = Date.now();
    let owed = 0;
    this.timer = setInterval(() => {
      const now = Date.now();
      const due = Math.floor(((now - startedAt) * this.ticksPerSecond) / 1000);
      const behind = due - owed;
      const cap = Math.ceil((this.ticksPerSecond * MAX_CATCH_UP_MS) / 1000);
      owed = due;
      // A feeder restart leaves a brief gap in the ticks, as a real one does.
      if (this.pausedAt(now)) return;
      const count = Math.min(behind, Math.max(0, cap - this.backlog));
      this.ticksDropped += behind - count;
      this.backlog += count;
      if (!this.nextSlice) this.emitSlice();
    }, interval);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.nextSlice) clearImmediate(this.nextSlice);
    this.nextSlice = null;
    this.backlog = 0;
  }

  /** Emits owed ticks for at most SLICE_MS, then leaves the rest to a later turn of the event loop. */
  private emitSlice(): void {
    this.nextSlice = null;
    const now = Date.now();
    const until = now + SLICE_MS;
    while (this.backlog > 0) {
      this.backlog--;
      this.tickOne(now);
      if (this.backlog > 0 && Date.now() >= until) {
        this.nextSlice = setImmediate(() => this.emitSlice());
        return;
      }
    }
  }

  /** No ticks for `ms` (SrvFeedsRestart). */
  pause(ms: number): void {
    this.pausedUntil = Date.now() + ms;
  }

  /** True while a pause started with `pause` holds the feed at `now`. */
  pausedAt(now: number): boolean {
    return now < this.pausedUntil;
  }

  /** Adds an instrument the feed did not start with (a symbol configured later). */
  addInstrument(instrument: Instrument, now = Date.now()): void {
    if (this.bySymbol.has(instrument.symbol)) return;
    this.instruments.push(instrument);
    this.bySymbol.set(instrument.symbol, instrument);
    this.mids.set(instrument.symbol, instrument.basePrice);
    this.quotes.set(instrument.symbol, this.quoteAt(instrument, instrument.basePrice, now));
  }

  /** A tick from outside the walk (SymbolSendTick, tests): the walk continues from its mid. */
  inject(symbol: string, bid: number, ask: number, now = Date.now()): Quote | undefined {
    if (!this.bySymbol.has(symbol)) return undefined;
    this.mids.set(symbol, (bid + ask) / 2);
    const quote: Quote = { symbol, bid, ask, time: now, raw: true };
    this.quotes.set(symbol, quote);
    this.ticksEmitted++;
    this.onTick(quote);
    return quote;
  }

  quote(symbol: string): Quote | undefined {
    return this.quotes.get(symbol);
  }

  allQuotes(): Quote[] {
    return [...this.quotes.values()];
  }

  /** Moves one random symbol; exposed so tests and trade operations can advance the market deterministically. */
  tickOne(now = Date.now()): Quote | undefined {
    const instrument = this.random.pick(this.instruments);
    if (!instrument || !this.isActive(instrument.symbol)) return undefined;
    const previous = this.mids.get(instrument.symbol) as number;
    // Pull gently back to the base price so a long-running sim does not drift to absurd quotes.
    const reversion = ((instrument.basePrice - previous) / instrument.basePrice) * 0.001;
    const mid = previous * (1 + VOLATILITY * this.random.gauss() + reversion);
    this.mids.set(instrument.symbol, mid);
    const quote = this.quoteAt(instrument, mid, now);
    this.quotes.set(instrument.symbol, quote);
    this.ticksEmitted++;
    this.onTick(quote);
    return quote;
  }

  private quoteAt(instrument: Instrument, mid: number, time: number): Quote {
    const point = pointOf(instrument);
    const half = (Math.max(1, instrument.spread) * point) / 2;
    const bid = roundTo(mid - half, instrument.digits);
    let ask = roundTo(mid + half, instrument.digits);
    if (ask <= bid) ask = roundTo(bid + point, instrument.digits);
    return { symbol: instrument.symbol, bid, ask, time };
  }
}
