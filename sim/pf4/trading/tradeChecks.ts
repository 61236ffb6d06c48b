/**
 * What a trade transaction must pass before it changes anything, each check throwing the PF4 result code a server
 * answers: the account and the ticket exist; the symbol is known, active and in a trade session no holiday closes;
 * the account, the symbol's trade mode and the group allow the trade (long only, the maximum of orders, hedging);
 * the volume fits the group's lot grid; a pending order's price is on its side of the market and the stops level away,
 * its expiration far enough ahead; a requested price within the deviation; the stops the stops level from their
 * reference; nothing inside the freeze level; and the free margin covers the margin.
 */
import { PF4_RESULT } from '../../../shared/resultCodes.js';
import type { Instrument } from '../../feed/instruments.js';
import { pointOf, roundTo } from '../../feed/instruments.js';
import type { Quote } from '../../feed/quoteFeed.js';
import { CommandError } from '../../world/commandError.js';
import { isBuyCommand, isPending, type PF4Command, type PF4TradeRow, type PF4UserRecord } from '../pf4Records.js';
import type { Pf4World } from '../pf4World.js';

const R = PF4_RESULT;
/** A pending order's expiration must be at least this far ahead (TradeCheckStops). */
const MIN_EXPIRATION_MS = 10 * 60_000;

type SymbolConfig = Record<string, unknown>;

/** What a trade transaction asks for, read from PF4TradeTransaction fields. */
export interface OpenRequest {
  login: number;
  symbol: string;
  command: PF4Command;
  volume: number;
  price?: number;
  sl: number;
  tp: number;
  expiration?: number;
  ieDeviation?: number;
  comment: string;
  reason: PF4TradeRow['tradeRecordReason'];
  magic?: number;
}

export function requireUser(world: Pf4World, login: number, prefix = ''): PF4UserRecord {
  const user = world.users.get(login);
  if (!user) throw new CommandError(R.InvalidData, `${prefix}login ${login} not found`);
  return user;
}

export function requireOpen(world: Pf4World, order: number): PF4TradeRow {
  const row = world.trades.get(order);
  if (!row) throw new CommandError(R.InvalidData, `order ${order} not found`);
  return row;
}

/** The symbol is known, active, quoted and inside a trade session that no holiday closes. */
export function tradable(
  world: Pf4World,
  symbol: string,
  now: number,
): { instrument: Instrument; config: SymbolConfig; quote: Quote } {
  const instrument = world.instrumentBySymbol.get(symbol);
  const config = world.symbolConfig(symbol);
  const quote = world.feed.quote(symbol);
  if (!instrument || !config || !quote) throw new CommandError(R.InvalidData, `symbol ${symbol} not found`);
  if (world.hiddenSymbols.has(symbol))
    throw new CommandError(R.TradeDisable, `symbol ${symbol} is not in the active set`);
  if (!world.marketOpen(symbol, now)) throw new CommandError(R.TradeMarketClosed, `market for ${symbol} is closed`);
  return { instrument, config, quote };
}

/**
 * The account may open this trade: it is enabled, the symbol's trade mode allows opening, the group's volume grid
 * holds the volume, a sell is allowed, the account is under the group's maximum of orders (`mine`, its open trades and
 * orders) and, where the group prohibits hedging, a market trade does not oppose one of the account's on the symbol.
 */
export function checkMayOpen(
  world: Pf4World,
  user: PF4UserRecord,
  config: SymbolConfig,
  request: OpenRequest,
  mine: ReadonlySet<number>,
): void {
  if (user.enableFlags === 0) throw new CommandError(R.TradeDisable, `account ${user.login} is disabled`);
  if (config.tradeMode === 'No' || config.tradeMode === 'Close') {
    throw new CommandError(
      R.TradeDisable,
      `trading ${request.symbol} is ${config.tradeMode === 'No' ? 'disabled' : 'close-only'}`,
    );
  }
  checkVolume(world, user, config, request.volume);
  const buy = isBuyCommand(request.command);
  if (!buy && config.longOnly === 1)
    throw new CommandError(R.TradeLongOnly, `${request.symbol} allows long positions only`);
  const group = world.groups.find(user.group);
  if (group && group.maxPositions > 0 && mine.size >= group.maxPositions) {
    throw new CommandError(R.TradeTooManyOrders, `account ${user.login} has reached ${group.maxPositions} orders`);
  }
  if (group?.hedgeProhibited === 1 && !isPending(request.command)) {
    for (const order of mine) {
      const other = world.trades.get(order);
      if (
        other &&
        other.symbol === request.symbol &&
        !isPending(other.tradeCommand) &&
        isBuyCommand(other.tradeCommand) !== buy
      ) {
        throw new CommandError(
          R.TradeHedgeProhibited,
          `hedging ${request.symbol} is prohibited in group ${user.group}`,
        );
      }
    }
  }
}

export function checkVolume(world: Pf4World, user: PF4UserRecord, config: SymbolConfig, volume: number): void {
  const sec = world.groupSecurities.get(user.group)?.[config.type as number];
  if (sec && sec.trade === 0)
    throw new CommandError(R.TradeDisable, `group ${user.group} may not trade ${config.symbol as string}`);
  const min = (sec?.lotMin as number | undefined) || 1;
  const max = (sec?.lotMax as number | undefined) || 100_000;
  const step = (sec?.lotStep as number | undefined) || 1;
  if (!Number.isInteger(volume) || volume < min || volume > max || (volume - min) % step !== 0) {
    throw new CommandError(
      R.TradeBadVolume,
      `volume ${volume} must be between ${min} and ${max} in steps of ${step} (1/100 lot)`,
    );
  }
}

/** The free margin, with the commission the trade is charged, covers the margin it would hold. */
export function checkMoney(margin: number, free: number, commission: number): void {
  if (margin > free + commission) {
    throw new CommandError(R.TradeNoMoney, `not enough money: margin ${margin} exceeds free margin ${free}`);
  }
}

export function checkDeviation(
  instrument: Instrument,
  requested: number | undefined,
  deviation: number | undefined,
  price: number,
): void {
  if (requested === undefined || requested === 0 || deviation === undefined) return;
  if (Math.abs(requested - price) > deviation * pointOf(instrument) + pointOf(instrument) / 10) {
    throw new CommandError(R.TradeRequote, `price moved to ${price}`);
  }
}

/** An expiration (epoch ms; 0 or less is none) is at least 10 minutes ahead of `now`. */
export function checkExpiration(expiration: number | undefined, now: number): void {
  if (expiration !== undefined && expiration > 0 && expiration < now + MIN_EXPIRATION_MS) {
    throw new CommandError(R.TradeExpirationDenied, 'expiration must be at least 10 minutes ahead');
  }
}

/**
 * The open price of a new pending order: the requested price at the symbol's digits, on the right side of the market
 * and the stops level from it, with an expiration at least 10 minutes ahead.
 */
export function pendingOpenPrice(
  instrument: Instrument,
  config: SymbolConfig,
  request: OpenRequest,
  quote: Quote,
  now: number,
): number {
  if (request.price === undefined) throw new CommandError(R.InvalidData, 'price is required for a pending order');
  const openPrice = roundTo(request.price, instrument.digits);
  checkPendingPrice(instrument, config, request.command, openPrice, quote);
  checkExpiration(request.expiration, now);
  return openPrice;
}

export function checkPendingPrice(
  instrument: Instrument,
  config: SymbolConfig,
  command: PF4Command,
  price: number,
  quote: Quote,
): void {
  const level = ((config.stopsLevel as number) ?? 0) * pointOf(instrument);
  const epsilon = pointOf(instrument) / 10;
  const belowMarket = command === 'BuyLimit' || command === 'SellStop';
  const market = command === 'BuyLimit' || command === 'BuyStop' ? quote.ask : quote.bid;
  const rightSide = belowMarket ? price < market : price > market;
  if (!rightSide)
    throw new CommandError(R.TradeBadPrices, `price ${price} is on the wrong side of the market for ${command}`);
  if (Math.abs(price - market) + epsilon < level) {
    throw new CommandError(R.TradeBadStops, `price ${price} is closer to the market than the stops level`);
  }
}

export function checkStops(
  instrument: Instrument,
  config: SymbolConfig,
  command: PF4Command,
  openPrice: number,
  sl: number,
  tp: number,
  quote: Quote,
): void {
  const level = ((config.stopsLevel as number) ?? 0) * pointOf(instrument);
  const epsilon = pointOf(instrument) / 10;
  const buy = isBuyCommand(command);
  // Market trades measure from the price they would close at; pending orders from their own price.
  const reference = isPending(command) ? openPrice : buy ? quote.bid : quote.ask;
  const badSl = sl !== 0 && (buy ? sl > reference - level + epsilon : sl < reference + level - epsilon);
  const badTp = tp !== 0 && (buy ? tp < reference + level - epsilon : tp > reference - level + epsilon);
  if (sl < 0 || tp < 0 || badSl || badTp) {
    throw new CommandError(
      R.TradeBadStops,
      `${badSl || sl < 0 ? `sl ${sl}` : `tp ${tp}`} is too close to ${reference} (stops level ${config.stopsLevel as number} points)`,
    );
  }
}

export function checkFreeze(instrument: Instrument, config: SymbolConfig, row: PF4TradeRow, quote: Quote): void {
  const freeze = ((config.freezeLevel as number) ?? 0) * pointOf(instrument);
  if (freeze <= 0) return;
  const buy = isBuyCommand(row.tradeCommand);
  const near = (a: number, b: number) => Math.abs(a - b) < freeze;
  if (isPending(row.tradeCommand)) {
    const market = row.tradeCommand === 'BuyLimit' || row.tradeCommand === 'BuyStop' ? quote.ask : quote.bid;
    if (near(row.openPrice, market))
      throw new CommandError(R.TradeModifyDenied, `order ${row.order} is frozen: price within the freeze level`);
    return;
  }
  const price = buy ? quote.bid : quote.ask;
  if ((row.sl !== 0 && near(row.sl, price)) || (row.tp !== 0 && near(row.tp, price))) {
    throw new CommandError(R.TradeModifyDenied, `order ${row.order} is frozen: a stop is within the freeze level`);
  }
}

/**
 * Throws the result code a transaction with these prices and stops would get (TradeCheckStops). `reference` replaces
 * the market price (bid and ask half the current spread either side of it). A pending order's open price is measured
 * from the market and its stops from the open price; a market order's stops from the price it would close at.
 */
export function checkRequestStops(
  world: Pf4World,
  request: OpenRequest,
  reference: number | undefined,
  now: number,
): void {
  const instrument = world.instrumentBySymbol.get(request.symbol);
  const config = world.symbolConfig(request.symbol);
  const live = world.feed.quote(request.symbol);
  if (!instrument || !config || !live) throw new CommandError(R.InvalidData, `symbol ${request.symbol} not found`);
  const half = (live.ask - live.bid) / 2;
  // Half a spread of whole points is a multiple of half a point: one more digit holds it exactly.
  const quote =
    reference === undefined
      ? live
      : {
          ...live,
          bid: roundTo(reference - half, instrument.digits + 1),
          ask: roundTo(reference + half, instrument.digits + 1),
        };
  const openPrice = isPending(request.command)
    ? pendingOpenPrice(instrument, config, request, quote, now)
    : isBuyCommand(request.command)
      ? quote.ask
      : quote.bid;
  checkStops(instrument, config, request.command, openPrice, request.sl, request.tp, quote);
}
