/**
 * What the server charges on trades besides their result: the group's commission per lot when a trade opens, and the
 * swaps of a day at rollover (three days' on the symbol's triple-swap weekday), from the symbol or the group's override
 * for it, converted to USD.
 */
import { pointOf } from '../../feed/instruments.js';
import { toUsd } from '../../feed/valuation.js';
import { cents, iso } from '../../world/people.js';
import { isBuyCommand, isPending, type PF4UserRecord } from '../pf4Records.js';
import type { Pf4World } from '../pf4World.js';
import type { TradeBook } from './tradeBook.js';

/** The commission a trade of `volume` (1/100 lot) is charged on opening, as a negative amount. */
export function commission(
  world: Pf4World,
  user: PF4UserRecord,
  config: Record<string, unknown>,
  volume: number,
): number {
  const sec = world.groupSecurities.get(user.group)?.[config.type as number];
  const perLot = (sec?.standardCommission as number | undefined) ?? 0;
  return perLot > 0 ? -cents((perLot * volume) / 100) : 0;
}

/** Charges a day's swaps to every open market trade; answers how many were charged. */
export function chargeSwaps(world: Pf4World, book: TradeBook, now: number): number {
  const weekday = new Date(now).getUTCDay();
  let charged = 0;
  for (const row of world.trades.values()) {
    if (isPending(row.tradeCommand)) continue;
    const user = world.users.get(row.login);
    const group = user ? world.groups.find(user.group) : undefined;
    const config = world.symbolConfig(row.symbol);
    const instrument = world.instrumentBySymbol.get(row.symbol);
    if (!user || !config || !instrument || group?.useSwap === 0 || config.swapEnable === 0) continue;
    const override = world.groupMargins.get(user.group)?.find((m) => m.symbol === row.symbol);
    const buy = isBuyCommand(row.tradeCommand);
    const points = buy
      ? (override?.swapLong ?? (config.swapLong as number))
      : (override?.swapShort ?? (config.swapShort as number));
    const days = weekday === config.swapRollover3Days ? 3 : 1;
    const raw = points * pointOf(instrument) * instrument.contractSize * (row.volume / 100) * days;
    const swap = cents(toUsd(raw, instrument.profitCurrency, (s) => world.feed.quote(s)));
    if (swap === 0) continue;
    book.replace({ ...row, storage: cents(row.storage + swap), timeStamp: iso(now) });
    charged++;
  }
  return charged;
}
