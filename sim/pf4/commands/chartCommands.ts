/**
 * PF4 price history commands: chart bars of every period (read, add, update, delete, history correction), the tick
 * history, and the symbol summary with the day's high and low. A write that changes an active symbol's summary (the
 * day's bar) announces it as a symbolInfo update, as a tick would move it.
 */
import { ChartPeriodMembers, PF4ChartWriteRequest, RequestModeMembers } from '../../../shared/records/contract.js';
import { CHART_PERIODS, barStart, selectBars, type Bar, type ChartPeriod } from '../../feed/chartHistory.js';
import type { CommandRegistry } from '../../world/commandRegistry.js';
import type { ArgReader } from '../../world/args.js';
import { iso } from '../../world/people.js';
import type { Pf4World } from '../pf4World.js';
import { notFound, optionalTime, parseRecord, requiredTime } from './common.js';
import { valueText } from '../../../shared/valueText.js';

export function registerChartCommands(registry: CommandRegistry, world: Pf4World): void {
  const symbol = (args: ArgReader) => {
    const name = args.string('symbol', { max: 12 });
    if (!world.symbolConfig(name)) notFound(`symbol ${name}`);
    return name;
  };
  const period = (args: ArgReader, raw: Record<string, unknown>): ChartPeriod => {
    const value = raw.period ?? 'M1';
    if (!(ChartPeriodMembers as readonly unknown[]).includes(value))
      args.fail(`period must be one of ${CHART_PERIODS.join(', ')}`);
    return value as ChartPeriod;
  };
  const toWire = (bar: Bar) => ({
    time: iso(bar.time),
    open: bar.open,
    high: bar.high,
    low: bar.low,
    close: bar.close,
    volume: bar.volume,
  });

  registry.on('ChartRequest', (args, _ctx, raw) => {
    const name = symbol(args);
    const p = period(args, raw);
    const mode = (raw.mode as string | undefined) ?? 'RangeInExcludeOutOfRage';
    if (!(RequestModeMembers as readonly string[]).includes(mode))
      args.fail(`mode must be one of ${RequestModeMembers.join(', ')}`);
    const start = optionalTime(args, raw, 'start') ?? 0;
    const end = optionalTime(args, raw, 'end') ?? Date.now();
    return selectBars(world.chart.barsOf(name, p), p, start, end, mode).map(toWire);
  });

  const writeBars = (args: ArgReader, raw: Record<string, unknown>, p: ChartPeriod, pricesRequired: boolean): Bar[] => {
    const request = parseRecord<{ rates?: Array<Record<string, unknown>> | null }>(
      PF4ChartWriteRequest,
      args.object('record'),
      'record',
    );
    if (!request.rates || request.rates.length === 0) args.fail('record.rates must not be empty');
    void raw;
    return request.rates.map((rate, i) => {
      const time = typeof rate.time === 'string' ? Date.parse(rate.time) : Number.NaN;
      if (Number.isNaN(time)) args.fail(`record.rates.${i}.time is required`);
      if (barStart(p, time) !== time) args.fail(`record.rates.${i}.time must be the start of a ${p} bar`);
      const price = (field: string) => {
        const value = rate[field];
        if (typeof value === 'number') return value;
        if (pricesRequired) args.fail(`record.rates.${i}.${field} is required`);
        return 0;
      };
      return {
        time,
        open: price('open'),
        high: price('high'),
        low: price('low'),
        close: price('close'),
        volume: typeof rate.volume === 'number' ? rate.volume : 0,
        spread: 0,
      };
    });
  };

  registry.on('ChartAdd', (args, _ctx, raw) => {
    const name = symbol(args);
    const p = period(args, raw);
    const bars = writeBars(args, raw, p, true);
    world.withSymbolInfo([name], () => world.chart.add(name, p, bars));
    return true;
  });

  registry.on('ChartUpdate', (args, _ctx, raw) => {
    const name = symbol(args);
    const p = period(args, raw);
    const bars = writeBars(args, raw, p, true);
    world.withSymbolInfo([name], () => world.chart.update(name, p, bars));
    return true;
  });

  registry.on('ChartDelete', (args, _ctx, raw) => {
    const name = symbol(args);
    const p = period(args, raw);
    const times = writeBars(args, raw, p, false).map((b) => b.time);
    world.withSymbolInfo([name], () => world.chart.remove(name, p, times));
    return true;
  });

  registry.on('HistoryCorrect', (args) => {
    const name = symbol(args);
    const corrected = world.withSymbolInfo([name], () => world.chart.correct(name));
    world.journal(`history of ${name} corrected: ${corrected} bars`);
    return corrected;
  });

  // Every longer period of every symbol is brought back in line with the minute history; a second sync finds nothing.
  registry.on('SrvChartsSync', () => {
    const symbols = world.symbols.list().map((s) => s.symbol as string);
    const corrected = world.withSymbolInfo(symbols, () =>
      symbols.reduce((sum, name) => sum + world.chart.correct(name), 0),
    );
    world.journal(`charts synchronized: ${corrected} bars of ${symbols.length} symbols corrected`);
    return true;
  });

  registry.on('TicksRequest', (args, _ctx, raw) => {
    const name = symbol(args);
    const start = requiredTime(args, raw, 'start');
    const end = optionalTime(args, raw, 'end') ?? Date.now();
    const flags = valueText(raw.flags ?? 'All')
      .split(',')
      .map((f) => f.trim());
    if (!flags.every((f) => ['Raw', 'Normal', 'All'].includes(f))) args.fail('flags must be Raw, Normal or All');
    const raws = flags.includes('All') || flags.includes('Raw');
    const normals = flags.includes('All') || flags.includes('Normal');
    return world.chart
      .tickRange(name, start, end)
      .filter((t) => (t.raw ? raws : normals))
      .map((t) => ({
        time: iso(t.time),
        bid: t.bid,
        ask: t.ask,
        dataFeed: t.raw ? 1 : 0,
        flags: t.raw ? 'Raw' : 'Normal',
      }));
  });

  registry.on('SymbolInfoRequest', (args) => {
    const name = symbol(args);
    return world.symbolInfo(name) ?? notFound(`symbol ${name}`);
  });
}
