/**
 * Floating profit of an open position in the deposit currency (USD for every simulated group), from the current
 * quote. Crosses are converted through the USD pair the server quotes, when it quotes one.
 */
import type { Instrument } from './instruments.js';
import type { Quote } from './quoteFeed.js';
import { cents } from '../world/people.js';

export type QuoteLookup = (symbol: string) => Quote | undefined;

/** The price a position would close at now: buys close on the bid, sells on the ask. */
export function closingPrice(quote: Quote, isBuy: boolean): number {
  return isBuy ? quote.bid : quote.ask;
}

export function floatingProfit(
  instrument: Instrument,
  isBuy: boolean,
  openPrice: number,
  lots: number,
  quotes: QuoteLookup,
): number {
  const quote = quotes(instrument.symbol);
  if (!quote) return 0;
  return profitAt(instrument, isBuy, openPrice, closingPrice(quote, isBuy), lots, quotes);
}

/** Profit in USD of a position opened at `openPrice` and closed at `closePrice`. */
export function profitAt(
  instrument: Instrument,
  isBuy: boolean,
  openPrice: number,
  closePrice: number,
  lots: number,
  quotes: QuoteLookup,
): number {
  const raw = (isBuy ? closePrice - openPrice : openPrice - closePrice) * instrument.contractSize * lots;
  return cents(toUsd(raw, instrument.profitCurrency, quotes));
}

export function toUsd(amount: number, currency: string, quotes: QuoteLookup): number {
  if (currency === 'USD') return amount;
  const direct = quotes(`${currency}USD`);
  if (direct) return (amount * (direct.bid + direct.ask)) / 2;
  const inverse = quotes(`USD${currency}`);
  if (inverse) return amount / ((inverse.bid + inverse.ask) / 2);
  return amount;
}
