/** How the trading engine writes to the server journal: its lines under the `Trades` code, a trade named one way. */
import type { PF4TradeRow } from '../pf4Records.js';
import type { Pf4World } from '../pf4World.js';

export function journalTrade(world: Pf4World, message: string): void {
  world.journal(message, '127.0.0.1', 'Trades');
}

/** `#<order> <command> <lots> <symbol> at <open price>`, as the journal names a trade. */
export function describeTrade(row: PF4TradeRow): string {
  return `#${row.order} ${row.tradeCommand.toLowerCase()} ${(row.volume / 100).toFixed(2)} ${row.symbol} at ${row.openPrice}`;
}
