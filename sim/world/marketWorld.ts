/**
 * What the PF4 and PF5 worlds share: the market of a simulated server, seeded from its seed (the instruments, the quote
 * feed that walks them, the chart history its ticks build), and the path of every tick: the tick event, the chart,
 * then the family's trading engine.
 */
import type { ServerConfig } from '../config/simConfig.js';
import { ChartHistory } from '../feed/chartHistory.js';
import { buildInstruments, pointOf, type Instrument } from '../feed/instruments.js';
import { QuoteFeed, type Quote } from '../feed/quoteFeed.js';
import { WORLD_ANCHOR_MS } from './people.js';
import { Random, deriveSeed } from './random.js';
import type { ChangeSink } from './simWorld.js';

export abstract class MarketWorld {
  readonly instruments: Instrument[];
  readonly instrumentBySymbol = new Map<string, Instrument>();
  readonly feed: QuoteFeed;
  readonly chart: ChartHistory;
  /** The family's trading engine, built by the world once its records are generated; it takes every tick. */
  abstract readonly engine: { onTick(quote: Quote): void };

  protected constructor(
    config: ServerConfig,
    seed: number,
    readonly emit: ChangeSink,
    private readonly tickToWire: (quote: Quote) => unknown,
  ) {
    this.instruments = buildInstruments(config.symbols, new Random(deriveSeed(seed, 'instruments')));
    for (const instrument of this.instruments) this.instrumentBySymbol.set(instrument.symbol, instrument);
    this.chart = new ChartHistory(config.tickHistory);
    for (const instrument of this.instruments) this.chart.setPoint(instrument.symbol, pointOf(instrument));
    this.feed = new QuoteFeed(
      this.instruments,
      new Random(deriveSeed(seed, 'feed')),
      config.ticksPerSecond,
      (quote) => this.onQuote(quote),
      WORLD_ANCHOR_MS,
    );
  }

  ticksEmitted(): number {
    return this.feed.ticksEmitted;
  }

  ticksDropped(): number {
    return this.feed.ticksDropped;
  }

  onQuote(quote: Quote): void {
    this.emit('ticks', 'update', this.tickToWire(quote));
    this.chart.onTick(quote);
    this.engine.onTick(quote);
  }
}
