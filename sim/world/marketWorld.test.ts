/**
 * The market both families' worlds stand on: instruments and first quotes from the seed, the chart's points per
 * symbol, and a tick's path (the tick event, the chart, then the engine) with the feed's counters.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../config/simConfig.js';
import type { Quote } from '../feed/quoteFeed.js';
import { MarketWorld } from './marketWorld.js';

const config = (symbols: number) =>
  parseConfig({
    servers: [
      { name: 'market', family: 'PF4', symbols, ticksPerSecond: 0, managers: [{ login: 1000, password: 'pw' }] },
    ],
  }).servers[0];

/** A world with nothing but its market; the engine and the sink write down what reaches them, in one log. */
class BareWorld extends MarketWorld {
  readonly log: string[] = [];
  readonly engine = {
    onTick: (quote: Quote) => {
      this.log.push(`engine ${quote.symbol} ${this.chart.tickRange(quote.symbol, 0, quote.time).length}`);
    },
  };

  constructor(seed: number, symbols = 4) {
    super(
      config(symbols),
      seed,
      (kind, op, record) => {
        this.log.push(`${kind} ${op} ${JSON.stringify(record)}`);
      },
      (quote) => ({ symbol: quote.symbol, bid: quote.bid }),
    );
  }
}

describe('the market of a world', () => {
  it('draws the same instruments and first quotes from the same seed and others from another', () => {
    const a = new BareWorld(7);
    const b = new BareWorld(7);
    const c = new BareWorld(8);
    expect(a.instruments.map((i) => i.symbol)).toEqual(['EURUSD', 'GBPUSD', 'USDJPY', 'USDCHF']);
    expect(b.instruments).toEqual(a.instruments);
    expect(b.feed.allQuotes()).toEqual(a.feed.allQuotes());
    expect(c.feed.allQuotes().map((q) => q.bid)).not.toEqual(a.feed.allQuotes().map((q) => q.bid));
    expect([...a.instrumentBySymbol.keys()]).toEqual(['EURUSD', 'GBPUSD', 'USDJPY', 'USDCHF']);
    expect(a.instrumentBySymbol.get('USDJPY')).toBe(a.instruments[2]);
  });

  it('sends a tick as the tick event, files it in the chart, then hands it to the engine, and counts it', () => {
    const world = new BareWorld(7);
    const time = Date.UTC(2026, 0, 5, 9, 30);
    world.feed.inject('EURUSD', 1.1, 1.1002, time);
    expect(world.log).toEqual(['ticks update {"symbol":"EURUSD","bid":1.1}', 'engine EURUSD 1']);
    expect(world.ticksEmitted()).toBe(1);
    expect(world.ticksDropped()).toBe(0);
  });

  it("measures spreads in each symbol's own points", () => {
    const world = new BareWorld(7);
    const time = Date.UTC(2026, 0, 5, 9, 30);
    world.feed.inject('EURUSD', 1.1, 1.1002, time);
    world.feed.inject('USDJPY', 150, 150.02, time);
    expect(world.chart.barAt('EURUSD', 'M1', time)?.spread).toBe(20);
    expect(world.chart.barAt('USDJPY', 'M1', time)?.spread).toBe(20);
  });
});
