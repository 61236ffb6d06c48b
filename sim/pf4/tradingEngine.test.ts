/**
 * The PF4 trading engine as the world builds it: a generated world indexed with no account at stop-out and no trade
 * beyond its stops.
 */
import { describe, expect, it } from 'vitest';
import { pf4Harness } from '../../test/support/sim/worldHarness.js';

describe('generated worlds', () => {
  it('start with no account at stop-out and no trade beyond its stops', () => {
    const h = pf4Harness({ accounts: 200, trades: 400 }, 3);
    const levels = h.world.engine
      .loginsWithTrades()
      .map((login) => h.call('MarginLevelRequest', { login }))
      .filter((level: { margin: number }) => level.margin > 0);
    expect(levels.length).toBeGreaterThan(50);
    const low = levels.filter((level: { level: number }) => level.level < 299);
    expect(low).toEqual([]);
    const before = h.world.trades.size;
    for (const quote of h.world.feed.allQuotes()) h.world.feed.inject(quote.symbol, quote.bid, quote.ask);
    expect(h.world.trades.size).toBe(before);
  });
});
