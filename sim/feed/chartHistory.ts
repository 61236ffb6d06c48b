/**
 * Price history of one trading server: the last ticks of every symbol (a fixed ring per symbol, so memory stays flat
 * at any tick rate) and bars for every chart period built from those ticks as they arrive. Bars can also be written
 * by managers (ChartAdd, ChartUpdate, ChartDelete); HistoryCorrect rebuilds the longer periods from the minute bars
 * and repairs bars whose high and low do not hold their open and close.
 */
import type { Quote } from './quoteFeed.js';

export const CHART_PERIODS = ['M1', 'M5', 'M15', 'M30', 'H1', 'H4', 'D1', 'W1', 'Mn1'] as const;
export type ChartPeriod = (typeof CHART_PERIODS)[number];

const MINUTE = 60_000;
const FIXED_MS: Record<Exclude<ChartPeriod, 'Mn1'>, number> = {
  M1: MINUTE,
  M5: 5 * MINUTE,
  M15: 15 * MINUTE,
  M30: 30 * MINUTE,
  H1: 60 * MINUTE,
  H4: 240 * MINUTE,
  D1: 1440 * MINUTE,
  W1: 7 * 1440 * MINUTE,
};
/** Bars kept per symbol and period; the oldest go first. */
const MAX_BARS = 5000;

export interface Bar {
  /** Epoch milliseconds of the bar's start. */
  time: number;
  open: number;
  high: number;
  low: number;
  close: number;
  /** Ticks in the bar. */
  volume: number;
  /** Lowest spread seen in the bar, in points. */
  spread: number;
}

export interface StoredTick {
  time: number;
  bid: number;
  ask: number;
  raw: boolean;
}

/** Start of the bar of `period` that holds `time`. Weeks start on Sunday, as PF4 charts do. */
export function barStart(period: ChartPeriod, time: number): number {
  if (period === 'Mn1') {
    const d = new Date(time);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
  if (period === 'W1') {
    const day = Math.floor(time / FIXED_MS.D1);
    // 1970-01-01 was a Thursday: day 3 of a week that starts on Sunday.
    return (day - ((day + 4) % 7)) * FIXED_MS.D1;
  }
  return Math.floor(time / FIXED_MS[period]) * FIXED_MS[period];
}

/** End (exclusive) of the bar of `period` that starts at `start`. */
export function barEnd(period: ChartPeriod, start: number): number {
  if (period === 'Mn1') {
    const d = new Date(start);
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  }
  return start + FIXED_MS[period];
}

class TickRing {
  private readonly times: Float64Array;
  private readonly bids: Float64Array;
  private readonly asks: Float64Array;
  private readonly raws: Uint8Array;
  private next = 0;
  private count = 0;

  constructor(private readonly capacity: number) {
    this.times = new Float64Array(capacity);
    this.bids = new Float64Array(capacity);
    this.asks = new Float64Array(capacity);
    this.raws = new Uint8Array(capacity);
  }

  push(quote: Quote): void {
    this.times[this.next] = quote.time;
    this.bids[this.next] = quote.bid;
    this.asks[this.next] = quote.ask;
    this.raws[this.next] = quote.raw ? 1 : 0;
    this.next = (this.next + 1) % this.capacity;
    if (this.count < this.capacity) this.count++;
  }

  /** Ticks with time in [from, to], oldest first. */
  range(from: number, to: number): StoredTick[] {
    const out: StoredTick[] = [];
    const first = (this.next - this.count + this.capacity) % this.capacity;
    for (let i = 0; i < this.count; i++) {
      const at = (first + i) % this.capacity;
      const time = this.times[at];
      if (time >= from && time <= to)
        out.push({ time, bid: this.bids[at], ask: this.asks[at], raw: this.raws[at] === 1 });
    }
    return out.sort((a, b) => a.time - b.time);
  }
}

export class ChartHistory {
  private readonly ticks = new Map<string, TickRing>();
  private readonly bars = new Map<string, Map<ChartPeriod, Bar[]>>();
  private readonly points = new Map<string, number>();

  constructor(private readonly ticksPerSymbol: number) {}

  /** The size of one price point of a symbol, for spreads in points. */
  setPoint(symbol: string, point: number): void {
    this.points.set(symbol, point);
  }

  onTick(quote: Quote): void {
    if (this.ticksPerSymbol > 0) {
      let ring = this.ticks.get(quote.symbol);
      if (!ring) this.ticks.set(quote.symbol, (ring = new TickRing(this.ticksPerSymbol)));
      ring.push(quote);
    }
    const spread = Math.round((quote.ask - quote.bid) / (this.points.get(quote.symbol) ?? 0.00001));
    for (const period of CHART_PERIODS) {
      const series = this.series(quote.symbol, period);
      const start = barStart(period, quote.time);
      const last = series[series.length - 1];
      if (last && last.time === start) {
        last.high = Math.max(last.high, quote.bid);
        last.low = Math.min(last.low, quote.bid);
        last.close = quote.bid;
        last.volume++;
        last.spread = Math.min(last.spread, spread);
        continue;
      }
      const bar: Bar = {
        time: start,
        open: quote.bid,
        high: quote.bid,
        low: quote.bid,
        close: quote.bid,
        volume: 1,
        spread,
      };
      if (!last || last.time < start) {
        series.push(bar);
        if (series.length > MAX_BARS) series.splice(0, series.length - MAX_BARS);
      } else {
        // A tick older than the current bar (a manual tick with an earlier time) lands in its own bar.
        const at = lowerBound(series, start);
        const found = series[at];
        if (found && found.time === start) {
          found.high = Math.max(found.high, quote.bid);
          found.low = Math.min(found.low, quote.bid);
          found.volume++;
        } else {
          series.splice(at, 0, bar);
        }
      }
    }
  }

  tickRange(symbol: string, from: number, to: number): StoredTick[] {
    return this.ticks.get(symbol)?.range(from, to) ?? [];
  }

  /** Bars of a period as copies, oldest first. */
  barsOf(symbol: string, period: ChartPeriod): Bar[] {
    return this.series(symbol, period).map((b) => ({ ...b }));
  }

  /** The bar holding `time`, if any (today's D1 bar gives the day's high and low). */
  barAt(symbol: string, period: ChartPeriod, time: number): Bar | undefined {
    const series = this.series(symbol, period);
    const start = barStart(period, time);
    const at = lowerBound(series, start);
    return series[at]?.time === start ? { ...series[at] } : undefined;
  }

  /** Inserts bars, replacing any with the same time. */
  add(symbol: string, period: ChartPeriod, bars: Bar[]): number {
    const series = this.series(symbol, period);
    for (const bar of bars) {
      const at = lowerBound(series, bar.time);
      if (series[at]?.time === bar.time) series[at] = { ...bar };
      else series.splice(at, 0, { ...bar });
    }
    return bars.length;
  }

  /** Overwrites bars matched by time; unmatched bars are ignored. Answers how many matched. */
  update(symbol: string, period: ChartPeriod, bars: Bar[]): number {
    const series = this.series(symbol, period);
    let matched = 0;
    for (const bar of bars) {
      const at = lowerBound(series, bar.time);
      if (series[at]?.time !== bar.time) continue;
      series[at] = { ...bar, spread: series[at].spread };
      matched++;
    }
    return matched;
  }

  /** Deletes bars by time only. Answers how many were deleted. */
  remove(symbol: string, period: ChartPeriod, times: number[]): number {
    const series = this.series(symbol, period);
    let removed = 0;
    for (const time of times) {
      const at = lowerBound(series, time);
      if (series[at]?.time !== time) continue;
      series.splice(at, 1);
      removed++;
    }
    return removed;
  }

  /**
   * Repairs a symbol's history: minute bars whose high/low do not hold open and close are widened, then every longer
   * period is rebuilt from the minute bars wherever minute bars exist. Answers the number of bars corrected.
   */
  correct(symbol: string): number {
    let corrected = 0;
    const minutes = this.series(symbol, 'M1');
    for (const bar of minutes) {
      const high = Math.max(bar.high, bar.open, bar.close);
      const low = Math.min(bar.low, bar.open, bar.close);
      if (high !== bar.high || low !== bar.low) {
        bar.high = high;
        bar.low = low;
        corrected++;
      }
    }
    for (const period of CHART_PERIODS) {
      if (period === 'M1') continue;
      const rebuilt = new Map<number, Bar>();
      for (const m of minutes) {
        const start = barStart(period, m.time);
        const bar = rebuilt.get(start);
        if (!bar) rebuilt.set(start, { ...m, time: start });
        else {
          bar.high = Math.max(bar.high, m.high);
          bar.low = Math.min(bar.low, m.low);
          bar.close = m.close;
          bar.volume += m.volume;
          bar.spread = Math.min(bar.spread, m.spread);
        }
      }
      const series = this.series(symbol, period);
      for (const bar of rebuilt.values()) {
        const at = lowerBound(series, bar.time);
        const current = series[at];
        if (current?.time === bar.time) {
          if (
            current.open !== bar.open ||
            current.high !== bar.high ||
            current.low !== bar.low ||
            current.close !== bar.close ||
            current.volume !== bar.volume
          ) {
            series[at] = bar;
            corrected++;
          }
        } else {
          series.splice(at, 0, bar);
          corrected++;
        }
      }
    }
    return corrected;
  }

  private series(symbol: string, period: ChartPeriod): Bar[] {
    let bySymbol = this.bars.get(symbol);
    if (!bySymbol) this.bars.set(symbol, (bySymbol = new Map<ChartPeriod, Bar[]>()));
    let series = bySymbol.get(period);
    if (!series) bySymbol.set(period, (series = []));
    return series;
  }
}

/** The bars a chart request selects. RangeIn: start within [start, end]. RangeInExcludeOutOfRage (the default):
 * bars wholly inside the window. RangeOut: the window widened by one bar on each side. RangeLast: every bar from
 * `start` on, whatever `end`. */
export function selectBars(bars: Bar[], period: ChartPeriod, start: number, end: number, mode: string): Bar[] {
  switch (mode) {
    case 'RangeIn':
      return bars.filter((b) => b.time >= start && b.time <= end);
    case 'RangeLast':
      return bars.filter((b) => b.time >= start);
    case 'RangeOut': {
      const first = Math.max(0, bars.findIndex((b) => b.time >= start) - 1);
      const afterEnd = bars.findIndex((b) => b.time > end);
      return bars.slice(
        bars.some((b) => b.time >= start) ? first : bars.length,
        afterEnd < 0 ? bars.length : afterEnd + 1,
      );
    }
    default:
      return bars.filter((b) => b.time >= start && barEnd(period, b.time) <= end);
  }
}

function lowerBound(series: Bar[], time: number): number {
  let lo = 0;
  let hi = series.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (series[mid].time < time) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
